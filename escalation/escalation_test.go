package escalation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/escalation"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
)

// New ids are short, typeable, valid and (almost always) distinct.
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id, err := escalation.NewID()
		require.NoError(t, err)
		assert.Len(t, id, escalation.IDLen)
		assert.NoError(t, escalation.CheckID(id))
		assert.Equal(t, id, escalation.NormalID(id))
		assert.False(t, strings.ContainsAny(id, "01ilo"), "no letters read for one another: %s", id)
		seen[id] = true
	}
	assert.Greater(t, len(seen), 990)
}

func TestCheckID(t *testing.T) {
	for _, id := range []string{"k3x9qa", "K3X9QA", "my-escalation_1"} {
		assert.NoError(t, escalation.CheckID(id), id)
	}
	for _, id := range []string{"", "a/b", "a b", "../x", strings.Repeat("a", 65), "é"} {
		err := escalation.CheckID(id)
		assert.ErrorIs(t, err, escalation.ErrBadID, "%q", id)
	}
	assert.Equal(t, "k3x9qa", escalation.NormalID(" K3X9QA "))
	name := escalation.Ref("k3x9qa")
	assert.Equal(t, refs.EscalationPrefix+"k3x9qa", name)
	id, ok := escalation.IDOf(name)
	assert.True(t, ok)
	assert.Equal(t, "k3x9qa", id)
	_, ok = escalation.IDOf("refs/heads/main")
	assert.False(t, ok)
}

// The conflict of a second answer names the first: what, who, when, where.
func TestAnsweredError(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	err := error(&escalation.AnsweredError{ID: "k3x9qa", Answer: escalation.Answer{Resolution: record.ResolveFix, Instruction: "use integers",
		By: "bob@host", At: at, Commit: dag.Sum([]byte("x"))}})
	assert.ErrorIs(t, err, escalation.ErrAnswered)
	assert.Contains(t, err.Error(), `escalation k3x9qa was answered already: "fix: use integers" by bob@host at 2026-11-27T22:00:00Z (commit `)
	assert.Contains(t, err.Error(), "this answer was not recorded")

	nf := error(&escalation.NotFoundError{ID: "nosuch"})
	assert.ErrorIs(t, nf, escalation.ErrNotFound)
	assert.ErrorIs(t, nf, refs.ErrNotFound)
}

// Wait reads until an answer comes, backing off, and stops with ctx.
func TestWait(t *testing.T) {
	var looks []time.Time
	err := escalation.Wait(context.Background(), time.Millisecond, 4*time.Millisecond, func(context.Context) (bool, error) {
		looks = append(looks, time.Now())
		return len(looks) == 5, nil
	})
	require.NoError(t, err)
	assert.Len(t, looks, 5)

	boom := errors.New("boom")
	err = escalation.Wait(context.Background(), time.Millisecond, time.Millisecond, func(context.Context) (bool, error) { return false, boom })
	assert.ErrorIs(t, err, boom)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = escalation.Wait(ctx, time.Hour, time.Hour, func(context.Context) (bool, error) { return false, nil })
	assert.ErrorIs(t, err, context.Canceled)
}

// The question names the escalation, the task, the reason, the attempts
// and the last error, and says how to answer.
func TestQuestion(t *testing.T) {
	q := escalation.Question(record.WaitingEscalation{ID: "k3x9qa", Task: "nightly-1", Reason: record.EscalateMaxRetries,
		Round: 1, Attempts: 2, MaxAttempts: 2, TotalAttempts: 2, Failures: []record.Failure{{Attempt: 2, Error: "invalid JSON"}}})
	assert.Equal(t, "escalation k3x9qa: task \"nightly-1\" max_retries_exceeded after 2 of 2 attempts (round 1, 2 in all); last error: invalid JSON\n"+
		"answer with retry, skip, abort or fix: INSTRUCTION", q)
	assert.Equal(t, "escalation k3x9qa answered: fix: use integers (by bob)",
		escalation.AnswerText(record.EscalationAnswer{ID: "k3x9qa", Resolution: record.ResolveFix, Instruction: "use integers", By: "bob"}))
}
