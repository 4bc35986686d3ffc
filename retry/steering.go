package retry

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// DefaultMaxAttempts is the number of attempts WithSteering makes when
// Steering.MaxAttempts is zero.
const DefaultMaxAttempts = 3

// noDiagnosis stands in for an empty diagnosis, so that History and Steer
// always carry some text.
const noDiagnosis = "validation failed"

// Steering configures one run of [WithSteering]. T is the type of a value an
// attempt produces (a model's answer, for instance); P is the type of the
// restore point that Head returns and Reset takes (a commit hash such as
// dag.Hash, for instance). The loop knows nothing about either: everything it
// does to the outside world goes through these closures, each of which
// receives the ctx given to WithSteering.
type Steering[T, P any] struct {
	// Attempt produces one candidate value. It is required. An error from
	// Attempt is not a validation failure: it stops the loop and
	// WithSteering returns it unchanged.
	Attempt func(ctx context.Context) (T, error)

	// Validate judges a candidate. It is required. ok=false with a
	// diagnosis is a failed attempt; a non-nil error means the validation
	// could not run, stops the loop and is returned unchanged.
	Validate func(ctx context.Context, v T) (ok bool, diagnosis string, err error)

	// Steer is called with the diagnosis of a failed attempt when another
	// attempt follows, and only then; it typically records a message
	// asking the model to fix the problem. It may be nil.
	Steer func(ctx context.Context, diagnosis string) error

	// Head returns the restore point. WithSteering calls it exactly once,
	// before the first attempt, when it is set. It is required when Purify
	// is true.
	Head func(ctx context.Context) (P, error)

	// Reset returns to the restore point that Head returned. With Purify it
	// is called exactly once, after a success that took more than one
	// attempt, and never otherwise (in particular not on exhaustion).
	Reset func(ctx context.Context, restore P) error

	// MaxAttempts is the total number of attempts, the first included.
	// Zero means DefaultMaxAttempts; a negative value is an error.
	MaxAttempts int

	// Purify asks for Reset after a success that needed retries, so that
	// the failed attempts and the steering between them leave the caller's
	// history.
	Purify bool

	// Provenance, when set, is called once on success, after any Reset,
	// with the number of attempts made and the diagnoses of the failed
	// ones (an empty, non-nil slice after a first-try success).
	Provenance func(attempts int, history []string)

	// OnAttempt, when set, reports each validated attempt (1-based) as it
	// completes, before any Steer that follows it. diagnosis is empty when
	// ok is true and never empty when ok is false.
	OnAttempt func(attempt int, ok bool, diagnosis string)
}

// Result is the outcome of a successful [WithSteering] run.
type Result[T any] struct {
	// Value is the accepted value.
	Value T
	// Attempts is the number of attempts made, the accepted one included.
	Attempts int
	// History holds the diagnoses of the failed attempts, oldest first. It
	// is empty but not nil after a first-try success, so it encodes as a
	// JSON array.
	History []string
}

// ExhaustedError is returned by [WithSteering] when every attempt failed
// validation. Use errors.As (or errors.AsType) to get at its fields.
type ExhaustedError struct {
	// Attempts is the number of attempts made.
	Attempts int
	// LastDiagnosis is the diagnosis of the last attempt.
	LastDiagnosis string
	// LastResult is the value the last attempt produced; its dynamic type
	// is the T of the Steering that produced the error. (It is not typed
	// as T so that callers can match the error with errors.As without
	// knowing T.)
	LastResult any
	// History holds every attempt's diagnosis, oldest first;
	// History[len(History)-1] == LastDiagnosis.
	History []string
	// Rounds is the number of rounds of attempts, when a caller ran more
	// than one (package tract's escalation hook answering retry): then
	// Attempts and History count every round. 0 and 1 mean one round.
	Rounds int
}

// LastResultOf returns the last attempt's value of an *ExhaustedError in
// err's chain, typed: the caller knows T (a string, for tract's Chat);
// ok is false when err holds no ExhaustedError or its value is not a T.
func LastResultOf[T any](err error) (v T, ok bool) {
	var ex *ExhaustedError
	if !errors.As(err, &ex) {
		return v, false
	}
	v, ok = ex.LastResult.(T)
	return v, ok
}

// Error returns the ExhaustedError message.
func (e *ExhaustedError) Error() string {
	if e.Attempts == 1 {
		return "1 attempt failed; diagnosis: " + e.LastDiagnosis
	}
	if e.Rounds > 1 {
		return fmt.Sprintf("all %d attempts failed, in %d rounds; last diagnosis: %s", e.Attempts, e.Rounds, e.LastDiagnosis)
	}
	return fmt.Sprintf("all %d attempts failed; last diagnosis: %s", e.Attempts, e.LastDiagnosis)
}

// WithSteering runs s.Attempt until s.Validate accepts its value or
// s.MaxAttempts attempts have been made, calling s.Steer with the diagnosis
// between attempts.
//
// The restore point is taken once, before the first attempt. On success
// after retries with s.Purify, s.Reset returns to it; then s.Provenance is
// called and the accepted value is returned. When every attempt fails the
// error is an *ExhaustedError; WithSteering does not call Reset then, so a
// caller that wants to return to the restore point on exhaustion does so
// itself.
//
// Errors from Attempt and Validate are returned unchanged; errors from
// Head, Steer and Reset are returned wrapped. WithSteering refuses to start
// with a done ctx and stops with ctx's error (wrapped) when ctx is done
// before an attempt or before a Steer; cancellation during an attempt is up
// to the closures, which receive ctx.
func WithSteering[T, P any](ctx context.Context, s Steering[T, P]) (Result[T], error) {
	var zero Result[T]
	maxAttempts := s.MaxAttempts
	switch {
	case maxAttempts < 0:
		return zero, fmt.Errorf("retry: MaxAttempts is %d, must not be negative", maxAttempts)
	case maxAttempts == 0:
		maxAttempts = DefaultMaxAttempts
	}
	if s.Attempt == nil || s.Validate == nil {
		return zero, errors.New("retry: Steering needs both Attempt and Validate")
	}
	if s.Purify && (s.Head == nil || s.Reset == nil) {
		return zero, errors.New("retry: Purify needs both Head and Reset")
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("retry: not started: %w", err)
	}

	var restore P
	if s.Head != nil {
		var err error
		if restore, err = s.Head(ctx); err != nil {
			return zero, fmt.Errorf("retry: read restore point: %w", err)
		}
	}

	history := []string{}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("retry: stopped before attempt %d: %w", attempt, err)
		}
		v, err := s.Attempt(ctx)
		if err != nil {
			return zero, err
		}
		ok, diagnosis, err := s.Validate(ctx, v)
		if err != nil {
			return zero, err
		}
		if ok {
			diagnosis = ""
		} else if diagnosis == "" {
			diagnosis = noDiagnosis
		}
		if s.OnAttempt != nil {
			s.OnAttempt(attempt, ok, diagnosis)
		}

		if ok {
			if s.Purify && attempt > 1 {
				if err := s.Reset(ctx, restore); err != nil {
					return zero, fmt.Errorf("retry: reset to restore point after %d attempts: %w", attempt, err)
				}
			}
			if s.Provenance != nil {
				s.Provenance(attempt, slices.Clone(history))
			}
			return Result[T]{Value: v, Attempts: attempt, History: history}, nil
		}

		history = append(history, diagnosis)
		if attempt >= maxAttempts {
			return zero, &ExhaustedError{
				Attempts:      attempt,
				LastDiagnosis: diagnosis,
				LastResult:    v,
				History:       history,
			}
		}
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("retry: stopped after attempt %d: %w", attempt, err)
		}
		if s.Steer != nil {
			if err := s.Steer(ctx, diagnosis); err != nil {
				return zero, fmt.Errorf("retry: steer after attempt %d: %w", attempt, err)
			}
		}
	}
}
