package retry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steeringHarness scripts a WithSteering run: attempt i returns answers[i];
// an answer starting with "bad" fails validation with the rest of the answer
// as its diagnosis ("bad" alone gives an empty diagnosis). It records every
// call the loop makes.
type steeringHarness struct {
	answers []string

	attempts   int
	heads      int
	steers     []string
	resets     []string
	provenance []provenanceCall
	reports    []string
}

type provenanceCall struct {
	attempts int
	history  []string
}

const restorePoint = "restore-point"

func (h *steeringHarness) steering() Steering[string, string] {
	return Steering[string, string]{
		Attempt: func(ctx context.Context) (string, error) {
			if h.attempts >= len(h.answers) {
				return "", errors.New("harness: no answer scripted")
			}
			a := h.answers[h.attempts]
			h.attempts++
			return a, nil
		},
		Validate: func(ctx context.Context, v string) (bool, string, error) {
			if d, bad := strings.CutPrefix(v, "bad"); bad {
				return false, strings.TrimPrefix(d, " "), nil
			}
			return true, "", nil
		},
		Steer: func(ctx context.Context, diagnosis string) error {
			h.steers = append(h.steers, diagnosis)
			return nil
		},
		Head: func(ctx context.Context) (string, error) {
			h.heads++
			return restorePoint, nil
		},
		Reset: func(ctx context.Context, p string) error {
			h.resets = append(h.resets, p)
			return nil
		},
		Provenance: func(attempts int, history []string) {
			h.provenance = append(h.provenance, provenanceCall{attempts, history})
		},
		OnAttempt: func(attempt int, ok bool, diagnosis string) {
			if ok {
				h.reports = append(h.reports, "ok")
			} else {
				h.reports = append(h.reports, diagnosis)
			}
		},
	}
}

func TestWithSteering_FirstTrySuccess(t *testing.T) {
	h := &steeringHarness{answers: []string{"good"}}
	s := h.steering()
	s.Purify = true

	res, err := WithSteering(t.Context(), s)

	require.NoError(t, err)
	assert.Equal(t, "good", res.Value)
	assert.Equal(t, 1, res.Attempts)
	assert.NotNil(t, res.History)
	assert.Empty(t, res.History)
	assert.Empty(t, h.steers, "Steer must not be called")
	assert.Empty(t, h.resets, "Reset must not be called after a first-try success")
	assert.Equal(t, 1, h.heads)
	require.Len(t, h.provenance, 1)
	assert.Equal(t, 1, h.provenance[0].attempts)
	assert.NotNil(t, h.provenance[0].history)
	assert.Empty(t, h.provenance[0].history)
}

func TestWithSteering_FailOnceThenPass(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad missing field", "good"}}

	res, err := WithSteering(t.Context(), h.steering())

	require.NoError(t, err)
	assert.Equal(t, "good", res.Value)
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, []string{"missing field"}, res.History)
	assert.Equal(t, []string{"missing field"}, h.steers)
	assert.Equal(t, []string{"missing field", "ok"}, h.reports)
	assert.Empty(t, h.resets, "Reset must not be called without Purify")
	assert.Equal(t, []provenanceCall{{2, []string{"missing field"}}}, h.provenance)
}

func TestWithSteering_FailTwiceThenPass(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad one", "bad two", "good"}}

	res, err := WithSteering(t.Context(), h.steering())

	require.NoError(t, err)
	assert.Equal(t, "good", res.Value)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, []string{"one", "two"}, res.History)
	assert.Equal(t, []string{"one", "two"}, h.steers)
	assert.Equal(t, 3, h.attempts)
}

func TestWithSteering_AlwaysFailingExhausts(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad one", "bad two", "bad three", "good"}}
	s := h.steering()
	s.MaxAttempts = 3
	s.Purify = true

	_, err := WithSteering(t.Context(), s)

	ex, ok := errors.AsType[*ExhaustedError](err)
	require.True(t, ok, "want *ExhaustedError, got %v", err)
	assert.Equal(t, 3, ex.Attempts)
	assert.Equal(t, "three", ex.LastDiagnosis)
	assert.Equal(t, "bad three", ex.LastResult)
	assert.Equal(t, []string{"one", "two", "three"}, ex.History)
	assert.EqualError(t, err, "all 3 attempts failed; last diagnosis: three")
	assert.Equal(t, 3, h.attempts)
	assert.Equal(t, []string{"one", "two"}, h.steers, "no Steer after the last attempt")
	assert.Empty(t, h.resets, "no Reset on exhaustion")
	assert.Empty(t, h.provenance, "no Provenance on exhaustion")
}

func TestWithSteering_DefaultIsThreeAttempts(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad 1", "bad 2", "bad 3", "good"}}

	_, err := WithSteering(t.Context(), h.steering())

	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, DefaultMaxAttempts, ex.Attempts)
	assert.Equal(t, 3, h.attempts)
}

func TestWithSteering_PurifyAfterRetryResetsOnce(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad one", "bad two", "good"}}
	s := h.steering()
	s.Purify = true
	var order []string
	reset, provenance := s.Reset, s.Provenance
	s.Reset = func(ctx context.Context, p string) error {
		order = append(order, "reset")
		return reset(ctx, p)
	}
	s.Provenance = func(attempts int, history []string) {
		order = append(order, "provenance")
		provenance(attempts, history)
	}

	res, err := WithSteering(t.Context(), s)

	require.NoError(t, err)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, []string{restorePoint}, h.resets)
	assert.Equal(t, []string{"reset", "provenance"}, order)
	assert.Equal(t, 1, h.heads)
}

func TestWithSteering_HeadCalledExactlyOnce(t *testing.T) {
	for _, answers := range [][]string{
		{"good"},
		{"bad x", "good"},
		{"bad x", "bad y", "bad z"},
	} {
		h := &steeringHarness{answers: answers}
		s := h.steering()
		s.Purify = true
		_, _ = WithSteering(t.Context(), s)
		assert.Equal(t, 1, h.heads, "answers %q", answers)
	}
}

func TestWithSteering_MaxAttemptsTwoSteersOnce(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad one", "bad two", "good"}}
	s := h.steering()
	s.MaxAttempts = 2

	_, err := WithSteering(t.Context(), s)

	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 2, ex.Attempts)
	assert.Equal(t, []string{"one"}, h.steers)
	assert.EqualError(t, err, "all 2 attempts failed; last diagnosis: two")
}

func TestWithSteering_MaxAttemptsOneMakesOneAttempt(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad one", "good"}}
	s := h.steering()
	s.MaxAttempts = 1

	_, err := WithSteering(t.Context(), s)

	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 1, ex.Attempts)
	assert.Equal(t, 1, h.attempts)
	assert.Empty(t, h.steers)
	assert.EqualError(t, err, "1 attempt failed; diagnosis: one")
}

func TestWithSteering_EmptyDiagnosisBecomesValidationFailed(t *testing.T) {
	h := &steeringHarness{answers: []string{"bad", "good"}}

	res, err := WithSteering(t.Context(), h.steering())

	require.NoError(t, err)
	assert.Equal(t, []string{"validation failed"}, res.History)
	assert.Equal(t, []string{"validation failed"}, h.steers)
	assert.Equal(t, []string{"validation failed", "ok"}, h.reports)
}

func TestWithSteering_AttemptErrorStopsLoopUnchanged(t *testing.T) {
	errTransport := errors.New("connection reset")
	h := &steeringHarness{}
	s := h.steering()
	calls := 0
	s.Attempt = func(ctx context.Context) (string, error) {
		calls++
		if calls == 2 {
			return "", errTransport
		}
		return "bad first", nil
	}

	_, err := WithSteering(t.Context(), s)

	assert.Same(t, errTransport, err, "the Attempt error is returned as is")
	assert.Equal(t, 2, calls)
	assert.Equal(t, []string{"first"}, h.steers)
	assert.Empty(t, h.provenance)
}

func TestWithSteering_ValidateErrorStopsLoopUnchanged(t *testing.T) {
	errJudge := errors.New("judge unavailable")
	h := &steeringHarness{answers: []string{"a", "b"}}
	s := h.steering()
	s.Validate = func(ctx context.Context, v string) (bool, string, error) {
		return false, "", errJudge
	}

	_, err := WithSteering(t.Context(), s)

	assert.Same(t, errJudge, err)
	assert.Equal(t, 1, h.attempts)
	assert.Empty(t, h.steers)
}

func TestWithSteering_CancelledContextRefusesToStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	h := &steeringHarness{answers: []string{"good"}}

	_, err := WithSteering(ctx, h.steering())

	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, h.attempts)
	assert.Zero(t, h.heads)
}

func TestWithSteering_CancelDuringAttemptStopsLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := &steeringHarness{answers: []string{"bad one", "bad two", "good"}}
	s := h.steering()
	attempt := s.Attempt
	s.Attempt = func(ctx context.Context) (string, error) {
		a, err := attempt(ctx)
		if h.attempts == 1 {
			cancel() // the user presses Ctrl-C while the first attempt runs
		}
		return a, err
	}

	_, err := WithSteering(ctx, s)

	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, h.attempts)
	assert.Empty(t, h.steers, "no steering once the context is done")
}

func TestWithSteering_AttemptSeesCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := &steeringHarness{}
	s := h.steering()
	s.Attempt = func(ctx context.Context) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}

	_, err := WithSteering(ctx, s)

	assert.Same(t, context.Canceled, err)
}

func TestWithSteering_ConfigurationErrors(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Steering[string, string])
		want   string
	}{
		{"negative max attempts", func(s *Steering[string, string]) { s.MaxAttempts = -1 }, "MaxAttempts is -1, must not be negative"},
		{"no attempt", func(s *Steering[string, string]) { s.Attempt = nil }, "needs both Attempt and Validate"},
		{"no validate", func(s *Steering[string, string]) { s.Validate = nil }, "needs both Attempt and Validate"},
		{"purify without reset", func(s *Steering[string, string]) { s.Purify, s.Reset = true, nil }, "Purify needs both Head and Reset"},
		{"purify without head", func(s *Steering[string, string]) { s.Purify, s.Head = true, nil }, "Purify needs both Head and Reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &steeringHarness{answers: []string{"good"}}
			s := h.steering()
			tt.modify(&s)

			_, err := WithSteering(t.Context(), s)

			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Zero(t, h.attempts)
		})
	}
}

func TestWithSteering_HookErrorsAreWrapped(t *testing.T) {
	errStore := errors.New("store closed")
	t.Run("head", func(t *testing.T) {
		h := &steeringHarness{answers: []string{"good"}}
		s := h.steering()
		s.Head = func(context.Context) (string, error) { return "", errStore }
		_, err := WithSteering(t.Context(), s)
		require.ErrorIs(t, err, errStore)
		assert.Zero(t, h.attempts)
	})
	t.Run("steer", func(t *testing.T) {
		h := &steeringHarness{answers: []string{"bad x", "good"}}
		s := h.steering()
		s.Steer = func(context.Context, string) error { return errStore }
		_, err := WithSteering(t.Context(), s)
		require.ErrorIs(t, err, errStore)
		assert.EqualError(t, err, "retry: steer after attempt 1: store closed")
		assert.Equal(t, 1, h.attempts)
	})
	t.Run("reset", func(t *testing.T) {
		h := &steeringHarness{answers: []string{"bad x", "good"}}
		s := h.steering()
		s.Purify = true
		s.Reset = func(context.Context, string) error { return errStore }
		_, err := WithSteering(t.Context(), s)
		require.ErrorIs(t, err, errStore)
		assert.Empty(t, h.provenance)
	})
}

// A nil Steer and nil Head are allowed: the loop just tries again.
func TestWithSteering_MinimalSteering(t *testing.T) {
	n := 0
	res, err := WithSteering(t.Context(), Steering[int, struct{}]{
		Attempt: func(context.Context) (int, error) { n++; return n, nil },
		Validate: func(_ context.Context, v int) (bool, string, error) {
			return v == 2, "too small", nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, Result[int]{Value: 2, Attempts: 2, History: []string{"too small"}}, res)
}

// The message counts what the error counts: one attempt, every attempt,
// or every attempt of several rounds.
func TestExhaustedError_Message(t *testing.T) {
	for _, tc := range []struct {
		err  ExhaustedError
		want string
	}{
		{ExhaustedError{Attempts: 1, LastDiagnosis: "d"}, "1 attempt failed; diagnosis: d"},
		{ExhaustedError{Attempts: 3, LastDiagnosis: "d"}, "all 3 attempts failed; last diagnosis: d"},
		{ExhaustedError{Attempts: 3, Rounds: 1, LastDiagnosis: "d"}, "all 3 attempts failed; last diagnosis: d"},
		{ExhaustedError{Attempts: 10, Rounds: 5, LastDiagnosis: "d"}, "all 10 attempts failed, in 5 rounds; last diagnosis: d"},
	} {
		assert.EqualError(t, &tc.err, tc.want)
	}
}
