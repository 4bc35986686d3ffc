package retry

import "context"

// Validator checks one answer (a model's text). Validate reports ok=false
// with a diagnosis when the answer is rejected; the diagnosis must be
// deterministic (the same answer gives the same text) because it becomes
// part of hashed commits. A non-nil error means the validator could not run
// (a judge model failed, a command could not start): that is not a
// diagnosis and stops the retry loop.
type Validator interface {
	// Name is the validator's spec string as a user wrote it (for example
	// "json" or "maxlen:200"); it labels diagnoses.
	Name() string
	Validate(ctx context.Context, answer string) (ok bool, diagnosis string, err error)
}

// ValidatorFunc returns a Validator called name that runs fn: a custom
// check in one line. name labels its diagnoses; fn follows Validate's
// contract (a deterministic diagnosis when it rejects, an error only when
// it could not run).
func ValidatorFunc(name string, fn func(ctx context.Context, answer string) (ok bool, diagnosis string, err error)) Validator {
	return funcValidator{name: name, fn: fn}
}

type funcValidator struct {
	name string
	fn   func(context.Context, string) (bool, string, error)
}

func (v funcValidator) Name() string { return v.name }

func (v funcValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	return v.fn(ctx, answer)
}
