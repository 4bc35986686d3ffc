package retry

import (
	"context"
	"fmt"
	"strings"
)

// All returns a validator that passes when every one of vs passes. It runs
// them all, in order, even after a failure, so that one attempt collects
// every problem; its diagnosis has one line per failing validator, in the
// order given, each prefixed by that validator's name:
//
//	json: invalid JSON at line 1, column 1: invalid character 'h' looking for beginning of value
//	maxlen:20: answer is 31 characters, more than the maximum of 20
//
// (a multi-line diagnosis, such as a command's output, continues on the
// following lines). A validator that cannot run stops All, which returns its
// error wrapped with the validator's name. All of no validators always
// passes. Its name is its validators' names joined by ", ".
//
// A validator that fixes the answer ([Verdict.Fixed], see [FixFunc]) hands
// the fixed text to the validators after it, which judge it, not the
// answer as given: All passes with the last fixed text when every
// validator passes it, and a fixed text that a later validator rejects is
// a rejection as any other (the fix is dropped).
func All(vs ...Validator) Validator {
	return &allValidator{vs: vs}
}

type allValidator struct {
	vs []Validator
}

func (a *allValidator) Name() string {
	names := make([]string, len(a.vs))
	for i, v := range a.vs {
		names[i] = v.Name()
	}
	return strings.Join(names, ", ")
}

func (a *allValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	return validateByCheck(ctx, a, answer)
}

// Check runs every validator. A rejection's verdict has the combined
// diagnosis; its type, and the command details when a "cmd:" validator
// failed, are those of the first failing validator (the first failing
// "cmd:" one); a suggested fix or a blocked reason of one validator is
// prefixed with its name, several joined one per line. A lone failure
// keeps its summary. A pass after fixes has the last fixed text, FixedBy
// the fixing validators' names and a diagnosis of what each fixed (one
// line each, prefixed by its name).
func (a *allValidator) Check(ctx context.Context, answer string) (Verdict, error) {
	var failed []string
	var all Verdict
	var fixes, blocked []string
	var fixedBy, mended []string // the validators that fixed the answer, and what they fixed
	all.OK = true
	current := answer // what the next validator judges: the answer, or its latest fix
	for _, v := range a.vs {
		if err := ctx.Err(); err != nil {
			return Verdict{}, err
		}
		vd, err := Check(ctx, v, current)
		if err != nil {
			return Verdict{}, fmt.Errorf("validator %s: %w", v.Name(), err)
		}
		if vd.OK && vd.Fixed != "" {
			current = vd.Fixed
			fixedBy = append(fixedBy, vd.FixedBy)
			mended = append(mended, vd.FixedBy+": "+vd.Diagnosis)
			continue
		}
		if vd.OK {
			continue
		}
		failed = append(failed, v.Name()+": "+vd.Diagnosis)
		if all.OK {
			all.OK, all.Type, all.Summary = false, vd.Type, vd.Summary
		}
		if vd.Command != "" && all.Command == "" {
			all.Command, all.ExitCode, all.Output = vd.Command, vd.ExitCode, vd.Output
		}
		if vd.SuggestedFix != "" {
			fixes = append(fixes, v.Name()+": "+vd.SuggestedFix)
		}
		if vd.Blocked != "" {
			blocked = append(blocked, v.Name()+": "+vd.Blocked)
		}
	}
	if all.OK && current != answer {
		return Verdict{OK: true, Fixed: current, FixedBy: strings.Join(fixedBy, ", "), Diagnosis: strings.Join(mended, "\n")}, nil
	}
	if all.OK {
		return Verdict{OK: true}, nil
	}
	if len(failed) > 1 {
		all.Summary = ""
	}
	all.Diagnosis = strings.Join(failed, "\n")
	all.SuggestedFix = strings.Join(fixes, "\n")
	all.Blocked = strings.Join(blocked, "\n")
	return all, nil
}
