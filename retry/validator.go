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
