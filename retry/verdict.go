package retry

import (
	"context"
	"strings"
)

// FailureType classifies a failed attempt, in the words of a task's failure
// record.
type FailureType string

// The failure types. Validators report the last three; FailureExecution is
// the caller's, for an answer that could not be produced at all.
const (
	// FailureExecution: the answer could not be produced (the model call
	// failed after its own transport retries, the answer was empty or
	// could not be stored).
	FailureExecution FailureType = "execution_error"
	// FailureVerification: a validator rejected the answer (the default
	// for a rejection).
	FailureVerification FailureType = "verification_failed"
	// FailureTimeout: a "cmd:" validator (or the model call) ran past its
	// time limit.
	FailureTimeout FailureType = "timeout"
	// FailureRejected: a reviewer, such as an "llm:" judge, rejected the
	// answer.
	FailureRejected FailureType = "rejected"
)

// BlockedExitCode is the exit status by which a "cmd:" validator's command
// reports that the answer is blocked: the problem is one retrying cannot
// fix (a missing dependency, a broken test environment), so the caller
// should stop asking the model and escalate.
const BlockedExitCode = 77

// Verdict is a validator's full finding on one answer: what Validate
// reports (OK and Diagnosis), plus what a failure record of the attempt
// needs. Validators that have more to say than Validate's diagnosis
// implement [Checker]; [Check] gives a Verdict for any validator.
type Verdict struct {
	// OK says whether the answer passed.
	OK bool
	// Diagnosis is why it was rejected (never empty when OK is false, after
	// Check).
	Diagnosis string
	// Type classifies a rejection: FailureVerification (the default),
	// FailureTimeout or FailureRejected. Empty when OK.
	Type FailureType
	// Summary is a one-line account of a rejection, such as "go test ./...
	// exited with status 1"; empty means the diagnosis's first line
	// serves.
	Summary string
	// SuggestedFix is what the validator thinks would fix the answer, when
	// it knows.
	SuggestedFix string
	// Blocked, when not empty, says the answer cannot be fixed by retrying,
	// and why; a blocked verdict is a rejection. The caller should stop
	// the retry loop and escalate.
	Blocked string
	// Command, ExitCode and Output describe the run of a "cmd:" validator:
	// the command, its exit status (-1 when it did not exit: it timed out
	// or was killed), and the last lines of its output. Command is empty
	// for other validators.
	Command  string
	ExitCode int
	Output   string
	// Fixed, on a passing verdict, is the answer as the validator
	// corrected it (a trailing comma removed, prose around JSON cut
	// away, a secret masked): the caller accepts Fixed in place of the
	// answer it judged, without asking again, and the validators after
	// this one judge Fixed (see [All]). Empty when the validator did not
	// fix the answer; Check also clears a Fixed equal to the answer, and
	// any Fixed on a rejection. A fixed verdict's Diagnosis says what was
	// wrong with the answer as given (Check fills in a default), which
	// Validate reports as a rejection.
	Fixed string
	// FixedBy names the validator that fixed the answer: Check sets it
	// to the validator's Name when the verdict leaves it empty; [All]
	// joins the names of those that did by ", ".
	FixedBy string
}

// Checker is a Validator that reports a full [Verdict]. Check must agree
// with Validate: the same OK and diagnosis for the same answer, except for
// an answer Check passes with a fix ([Verdict.Fixed]): Validate, which
// cannot hand the fix back, rejects it with the verdict's diagnosis, so
// that a caller that knows nothing of fixes never accepts the answer as
// given. ([ValidateOf] gives that answer from a verdict.)
type Checker interface {
	Validator
	Check(ctx context.Context, answer string) (Verdict, error)
}

// Check runs v on answer and returns its verdict: v's own when v is a
// [Checker], else one built from Validate's result (a rejection of type
// FailureVerification). The verdict is normalised: a blocked verdict is a
// rejection, a rejection has a type and a diagnosis and no fix, and a pass
// has neither, unless it fixed the answer: then it has Fixed (not equal to
// answer), FixedBy (v's Name when v left it empty) and a Diagnosis of what
// was fixed. An error means v could not run, as for Validate.
func Check(ctx context.Context, v Validator, answer string) (Verdict, error) {
	var vd Verdict
	var err error
	if c, ok := v.(Checker); ok {
		vd, err = c.Check(ctx, answer)
	} else {
		vd.OK, vd.Diagnosis, err = v.Validate(ctx, answer)
	}
	if err != nil {
		return Verdict{}, err
	}
	if vd.Fixed == answer {
		vd.Fixed = ""
	}
	if vd.Fixed != "" && vd.FixedBy == "" {
		vd.FixedBy = v.Name()
	}
	return vd.normalised(), nil
}

// ValidateOf is what Validate reports for the verdict vd, as a [Checker]
// whose Check gave vd answers it: vd's OK and diagnosis, except that a
// pass with a fix is a rejection (Validate cannot hand the fix back).
func ValidateOf(vd Verdict) (ok bool, diagnosis string) {
	vd = vd.normalised()
	if vd.Fixed != "" {
		return false, vd.Diagnosis
	}
	return vd.OK, vd.Diagnosis
}

// validateByCheck is Validate of a Checker v: its verdict on answer, as
// ValidateOf reports it.
func validateByCheck(ctx context.Context, v Checker, answer string) (bool, string, error) {
	vd, err := Check(ctx, v, answer)
	if err != nil {
		return false, "", err
	}
	ok, diagnosis := ValidateOf(vd)
	return ok, diagnosis, nil
}

func (vd Verdict) normalised() Verdict {
	if vd.Blocked != "" {
		vd.OK = false
	}
	if vd.OK && vd.Fixed != "" {
		return Verdict{OK: true, Fixed: vd.Fixed, FixedBy: vd.FixedBy,
			Diagnosis: nonEmpty(vd.Diagnosis, "the answer needed a fix by "+nonEmpty(vd.FixedBy, "a validator"))}
	}
	if vd.OK {
		return Verdict{OK: true}
	}
	vd.Fixed, vd.FixedBy = "", ""
	if vd.Type == "" {
		vd.Type = FailureVerification
	}
	if vd.Diagnosis == "" {
		vd.Diagnosis = nonEmpty(vd.Blocked, noDiagnosis)
	}
	return vd
}

func nonEmpty(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}

// CheckerFunc returns a Validator called name whose verdict fn gives: a
// custom check that can suggest a fix, fix the answer itself
// ([Verdict.Fixed]) or report the answer blocked. Its Validate reports the
// verdict's OK and diagnosis, as [ValidateOf] does.
func CheckerFunc(name string, fn func(ctx context.Context, answer string) (Verdict, error)) Validator {
	return checkerFunc{name: name, fn: fn}
}

type checkerFunc struct {
	name string
	fn   func(context.Context, string) (Verdict, error)
}

func (c checkerFunc) Name() string { return c.name }

func (c checkerFunc) Check(ctx context.Context, answer string) (Verdict, error) {
	return c.fn(ctx, answer)
}

func (c checkerFunc) Validate(ctx context.Context, answer string) (bool, string, error) {
	return validateByCheck(ctx, c, answer)
}

// FixFunc returns a Validator called name that fixes answers with fn
// instead of judging them: fn returns the answer corrected (a secret
// masked, white space trimmed), or the answer itself (or "") when there is
// nothing to fix; an error means it could not run, as for Validate. Its
// verdict always passes, with [Verdict.Fixed] when fn changed the answer;
// the validators after it in [All] judge the fixed text, so a fixer goes
// before the validators that should see its work:
//
//	retry.All(retry.FixFunc("trim", trim), retry.JSON())
//
// A fixer that should also reject what it cannot fix is a [CheckerFunc]
// returning Verdict{OK: true, Fixed: …} or a rejection. Only a caller that
// reads Check's verdict applies a fix (a turn of package tract does, and
// records the answer as given beside the fixed one); Validate rejects an
// answer it would fix, with the diagnosis "the answer needed a fix by
// NAME".
func FixFunc(name string, fn func(ctx context.Context, answer string) (fixed string, err error)) Validator {
	return fixFunc{name: name, fn: fn}
}

type fixFunc struct {
	name string
	fn   func(context.Context, string) (string, error)
}

func (f fixFunc) Name() string { return f.name }

func (f fixFunc) Check(ctx context.Context, answer string) (Verdict, error) {
	fixed, err := f.fn(ctx, answer)
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{OK: true, Fixed: fixed}, nil
}

func (f fixFunc) Validate(ctx context.Context, answer string) (bool, string, error) {
	return validateByCheck(ctx, f, answer)
}
