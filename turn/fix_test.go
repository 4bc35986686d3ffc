package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/turn"
)

// replayed is the turns events.Replay regenerates from every commit r
// holds.
func (r *memRepo) replayed(t *testing.T) []*events.Trace {
	t.Helper()
	var steps []*events.Step
	for _, h := range r.order {
		s, ok, err := events.StepOf(h, r.all[h], func() (string, error) { return r.texts[h], nil })
		require.NoError(t, err)
		if ok {
			steps = append(steps, s)
		}
	}
	return events.Replay(steps)
}

// A fixed answer is accepted with no other model call: the answer as
// given is an attempt off the branch, the fix is on the branch in its
// place, and each names the other's part.
func TestRun_FixedFirstTry(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: `Here you go: {"a": 1,}`})
	var attempts []turn.Attempt
	var live []events.Event

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON()), turn.Task("t-1"),
		turn.OnAttempt(func(a turn.Attempt) { attempts = append(attempts, a) }),
		turn.OnEvent(func(e events.Event) { live = append(live, e) }))

	require.NoError(t, err)
	assert.Len(t, client.Requests(), 1, "no other model call")
	assert.Equal(t, `{"a": 1}`, res.Text)
	assert.Equal(t, "json", res.FixedBy)
	assert.Equal(t, 1, res.Attempts)
	assert.Empty(t, res.Diagnoses, "a fix is no failed attempt")
	assert.False(t, res.Purified, "no failed attempt was hidden")
	assert.Equal(t, r.tip, res.Commit)
	assert.Equal(t, []string{"message/user: Answer in JSON.", `message/assistant: {"a": 1}`}, r.branch())
	assert.Equal(t, []string{"fix: answer of attempt 1 fixed by json"}, r.moves[1:])

	// The answer as given: an attempt off the branch.
	orig := r.all[res.Original]
	require.NotNil(t, orig, "the original is in the repository")
	assert.Equal(t, `Here you go: {"a": 1,}`, r.texts[res.Original])
	assert.Equal(t, user, orig.Parent())
	om, ok := metaOf(t, orig)
	require.True(t, ok)
	assert.Equal(t, 1, om.Attempt)
	require.NotNil(t, om.Valid)
	assert.False(t, *om.Valid, "not valid as given")
	assert.Equal(t, &record.Fix{By: "json"}, om.Fix)
	assert.Contains(t, om.Diagnosis, "invalid JSON at line 1, column 1", "what the validator fixed")
	assert.Nil(t, om.Failure, "a fixed answer is no failure")
	assert.Equal(t, "t-1", om.Task)

	// The fix: the accepted answer, committed as purify commits a clean one.
	fm, ok := metaOf(t, r.all[res.Commit])
	require.True(t, ok)
	assert.Zero(t, fm.Attempt, "the fixed copy is no attempt")
	require.NotNil(t, fm.Valid)
	assert.True(t, *fm.Valid)
	assert.Equal(t, &record.Fix{By: "json", Original: res.Original}, fm.Fix)
	require.NotNil(t, fm.Provenance)
	assert.Equal(t, 1, fm.Provenance.Attempts)
	assert.Equal(t, user, fm.Provenance.Restore)
	assert.Equal(t, []string{"json"}, fm.Validators)

	require.Len(t, attempts, 1)
	assert.Equal(t, turn.Attempt{Number: 1, Max: 3, OK: true, Text: `Here you go: {"a": 1,}`, Commit: res.Original,
		FixedBy: "json", Fixed: `{"a": 1}`, Usage: res.Usage}, attempts[0])
	assert.Equal(t, attempts, res.History)

	traces := r.replayed(t)
	require.Len(t, traces, 1)
	assert.Equal(t, live, traces[0].Events, "the live events are those replayed")
	require.Len(t, live, 2)
	assert.Equal(t, events.StatusSuccess, live[0].Status)
	assert.Equal(t, "json", live[0].FixedBy)
	assert.Equal(t, events.ResolvedSuccess, live[1].Resolution)
	st := events.Summarize(traces, events.Filter{})
	assert.Equal(t, 1, st.Fixes)
	assert.Equal(t, map[string]int{"json": 1}, st.FixesByValidator)
	assert.Equal(t, 1, st.FirstAttemptSuccesses, "a fix is no retry")
	assert.Zero(t, st.Retried)
	assert.Equal(t, 1, st.Tasks[0].Fixes)
}

func metaOf(t *testing.T, c *dag.Commit) (record.Meta, bool) {
	t.Helper()
	s, ok, err := events.StepOf(dag.Hash{}, c, func() (string, error) { return "", nil })
	require.NoError(t, err)
	if !ok {
		return record.Meta{}, false
	}
	return s.Meta, true
}

// A fixed text that a later validator rejects is a failure as any other:
// the model is asked again, and the diagnosis is about the fixed text.
func TestRun_FixThatFailsIsRetried(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: `Sure: {"a": 123456,}`}, llm.Reply{Content: `{}`})

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON(), retry.MaxLen(8)))

	require.NoError(t, err)
	assert.Len(t, client.Requests(), 2)
	assert.Equal(t, "{}", res.Text)
	assert.Empty(t, res.FixedBy)
	assert.True(t, res.Original.IsZero())
	assert.Equal(t, []string{"maxlen:8: answer is 13 characters, more than the maximum of 8"}, res.Diagnoses)
}

// A fix after a retry, with purify: the branch returns to the restore
// point and holds the fixed answer; the failed attempt, its steering and
// the answer as given are off it.
func TestRun_FixedAfterRetryPurifies(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"}, llm.Reply{Content: "```json\n[1, 2,]\n```"})

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON()), turn.ProvenanceNote())

	require.NoError(t, err)
	assert.Len(t, client.Requests(), 2)
	assert.Equal(t, "[1, 2]", res.Text)
	assert.Equal(t, 2, res.Attempts)
	assert.True(t, res.Purified)
	assert.Equal(t, []string{"message/user: Answer in JSON.", "message/assistant: [1, 2]",
		"note/system: resolved after 2 attempts, the last fixed by json: invalid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')"},
		r.branch())
	assert.Equal(t, "purify: hid 1 failed attempt; answer of attempt 2 fixed by json", r.moves[len(r.moves)-2])
	orig := r.all[res.Original]
	assert.Equal(t, dag.KindSteering, r.all[orig.Parent()].Kind, "the answer as given stays on the attempts chain")
	fm, _ := metaOf(t, r.all[res.Commit])
	assert.Equal(t, 2, fm.Provenance.Attempts)
	assert.Len(t, fm.Provenance.Diagnoses, 1)
}

// Without purify the attempts stay on the branch, and the fixed answer
// takes the place of the answer as given.
func TestRun_FixedWithoutPurify(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"}, llm.Reply{Content: `{"a": true`})

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON()), turn.Purify(false))

	require.NoError(t, err)
	assert.False(t, res.Purified)
	branch := r.branch()
	require.Len(t, branch, 4)
	assert.Equal(t, "message/assistant: no", branch[1])
	assert.True(t, strings.HasPrefix(branch[2], "steering/user: "))
	assert.Equal(t, `message/assistant: {"a": true}`, branch[3])
	assert.Equal(t, r.all[res.Commit].Parent(), r.all[res.Original].Parent(), "the fix hangs where the answer as given did")
	assert.Equal(t, "fix: answer of attempt 2 fixed by json", r.moves[len(r.moves)-1])
}

// A fixer in Go: FixFunc, then a validator that judges the fixed text.
func TestRun_FixFunc(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: `{"key": "sk-123"}`})
	mask := retry.FixFunc("mask", func(ctx context.Context, answer string) (string, error) {
		return strings.ReplaceAll(answer, "sk-123", "***"), nil
	})

	res, err := run(t, r, user, client, turn.Validate(mask, retry.JSON()))

	require.NoError(t, err)
	assert.Equal(t, `{"key": "***"}`, res.Text)
	assert.Equal(t, "mask", res.FixedBy)
	assert.Equal(t, `{"key": "sk-123"}`, r.texts[res.Original])
}

// An answer that makes tool calls is not fixed: its text is the calls'
// readable form. It is rejected with what the fixer found wrong.
func TestRun_NoFixOfToolCalls(t *testing.T) {
	r, user := newMemRepo(t)
	client := &callsThenText{}

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON()))

	require.NoError(t, err)
	assert.Equal(t, 2, client.calls)
	assert.Empty(t, res.FixedBy)
	require.Len(t, res.Diagnoses, 1)
	assert.Contains(t, res.Diagnoses[0], "invalid JSON")
}

// callsThenText answers first with text and a tool call, then with JSON.
type callsThenText struct{ calls int }

func (c *callsThenText) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	c.calls++
	if c.calls == 1 {
		return &llm.Response{Content: `Here: {"a": 1,}`, ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function",
			Function: llm.FunctionCall{Name: "f", Arguments: `{}`}}}}, nil
	}
	return &llm.Response{Content: `{"a": 1}`}, nil
}

// A fix in a later round of an escalated turn: the round's first
// attempt is fixed, and the branch returns to the restore point with the
// fixed answer, the first round's commits off it.
func TestRun_FixedInALaterRound(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"}, llm.Reply{Content: `{"a": 1,}`})
	hook := func(context.Context, turn.Escalation) (turn.Resolution, error) {
		return turn.Resolution{Action: record.ResolveRetry}, nil
	}

	res, err := run(t, r, user, client, turn.Validate(retry.FixJSON()), turn.MaxAttempts(1), turn.OnEscalation(hook))

	require.NoError(t, err)
	assert.Equal(t, `{"a": 1}`, res.Text)
	assert.Equal(t, "json", res.FixedBy)
	assert.True(t, res.Purified)
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, []string{"message/user: Answer in JSON.", `message/assistant: {"a": 1}`}, r.branch())
	assert.Equal(t, 1, countMoves(r.moves, "purify: "), "one rewind: the fix's")
}

// Another writer moves the branch before the answer as given is
// committed: it is kept off the branch, and nothing else is written.
func TestRun_FixConflict(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: `{"a": 1,}`})
	var other dag.Hash
	r.beforeCommit = func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		other = r.put(user, turn.Pending{Kind: dag.KindMessage, Role: dag.RoleUser, Text: "someone else"})
		r.tip = other
	}

	_, err := run(t, r, user, client, turn.Validate(retry.FixJSON()))

	var conflict *refs.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, `{"a": 1,}`, r.texts[conflict.Kept], "the answer as given, kept off the branch")
	assert.Equal(t, other, r.tip)
	for _, h := range r.order {
		assert.NotEqual(t, `{"a": 1}`, r.texts[h], "no fix written after the conflict")
	}
}

func countMoves(moves []string, prefix string) int {
	n := 0
	for _, m := range moves {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// A fix that would leave the answer blank is no fix: the answer is
// rejected and the model asked again.
func TestRun_BlankFixIsRejected(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "drop me"}, llm.Reply{Content: "keep"})
	drop := retry.FixFunc("drop", func(ctx context.Context, answer string) (string, error) {
		return strings.ReplaceAll(answer, "drop me", " "), nil
	})

	res, err := run(t, r, user, client, turn.Validate(drop))

	require.NoError(t, err)
	assert.Equal(t, "keep", res.Text)
	assert.Empty(t, res.FixedBy)
	assert.Equal(t, []string{"the answer needed a fix by drop\n(the fix by drop left the answer empty)"}, res.Diagnoses)
}
