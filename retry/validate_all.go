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
	var failed []string
	for _, v := range a.vs {
		if err := ctx.Err(); err != nil {
			return false, "", err
		}
		ok, diagnosis, err := v.Validate(ctx, answer)
		if err != nil {
			return false, "", fmt.Errorf("validator %s: %w", v.Name(), err)
		}
		if !ok {
			if diagnosis == "" {
				diagnosis = noDiagnosis
			}
			failed = append(failed, v.Name()+": "+diagnosis)
		}
	}
	if len(failed) > 0 {
		return false, strings.Join(failed, "\n"), nil
	}
	return true, "", nil
}
