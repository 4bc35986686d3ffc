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
}

// Checker is a Validator that reports a full [Verdict]. Check must agree
// with Validate: the same OK and diagnosis for the same answer.
type Checker interface {
	Validator
	Check(ctx context.Context, answer string) (Verdict, error)
}

// Check runs v on answer and returns its verdict: v's own when v is a
// [Checker], else one built from Validate's result (a rejection of type
// FailureVerification). The verdict is normalised: a blocked verdict is a
// rejection, a rejection has a type and a diagnosis, and a pass has
// neither. An error means v could not run, as for Validate.
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
	return vd.normalised(), nil
}

func (vd Verdict) normalised() Verdict {
	if vd.Blocked != "" {
		vd.OK = false
	}
	if vd.OK {
		return Verdict{OK: true}
	}
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
// custom check that can suggest a fix or report the answer blocked. Its
// Validate reports the verdict's OK and diagnosis.
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
	vd, err := Check(ctx, c, answer)
	return vd.OK, vd.Diagnosis, err
}
