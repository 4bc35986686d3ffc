package events_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

// commit is a commit of a turn, as a test writes it.
type commit struct {
	parent dag.Hash
	kind   dag.Kind
	role   dag.Role
	text   string
	meta   record.Meta
	at     time.Duration // after the test's start
}

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// steps reads commits as the steps of a turn, in order, each commit's
// parent its predecessor's hash where parent is zero and it is not the
// first.
func steps(t *testing.T, restore dag.Hash, cs ...commit) []*events.Step {
	t.Helper()
	var out []*events.Step
	prev := restore
	for _, c := range cs {
		raw, err := json.Marshal(c.meta)
		require.NoError(t, err)
		meta, err := dag.CanonicalMeta(raw)
		require.NoError(t, err)
		parent := c.parent
		if parent.IsZero() {
			parent = prev
		}
		dc := &dag.Commit{Parents: []dag.Hash{parent}, Kind: c.kind, Role: c.role, Blob: dag.Sum([]byte(c.text)), Meta: meta, Time: start.Add(c.at)}
		enc, err := dag.Encode(dc)
		require.NoError(t, err)
		h := dag.Sum(enc)
		s, ok, err := events.StepOf(h, dc, func() (string, error) { return c.text, nil })
		require.NoError(t, err)
		require.True(t, ok, "commit %+v is a step", c)
		out = append(out, s)
		prev = h
	}
	return out
}

func valid(b bool) *bool { return &b }

// A task retried once and purified, and an untasked turn accepted at
// once: the events Replay regenerates from the steps in any order are
// those Live reported as they were written, and Summarize counts them.
func TestReplay_EqualsLiveAndSummarizes(t *testing.T) {
	restore := dag.Sum([]byte("the user message"))
	failure := &record.Failure{Attempt: 1, Type: retry.FailureVerification, Error: "invalid JSON at line 3", Timestamp: start}
	retried := steps(t, restore,
		commit{kind: dag.KindMessage, role: dag.RoleAssistant, text: "not json", at: time.Second,
			meta: record.Meta{Attempt: 1, Valid: valid(false), Failure: failure, Task: "t-1", DurationMS: 100, Usage: &llm.Usage{TotalTokens: 10}}},
		commit{kind: dag.KindSteering, role: dag.RoleUser, text: "Your answer failed:\ninvalid JSON", at: 2 * time.Second,
			meta: record.Meta{Attempt: 1, Diagnosis: "invalid JSON", Task: "t-1"}},
		commit{kind: dag.KindMessage, role: dag.RoleAssistant, text: "{}", at: 3 * time.Second,
			meta: record.Meta{Attempt: 2, Valid: valid(true), Task: "t-1", DurationMS: 50, Usage: &llm.Usage{TotalTokens: 20}}},
		commit{parent: restore, kind: dag.KindMessage, role: dag.RoleAssistant, text: "{}", at: 4 * time.Second,
			meta: record.Meta{Provenance: &record.Provenance{Attempts: 2, Restore: restore}, Task: "t-1"}},
	)
	other := dag.Sum([]byte("another message"))
	once := steps(t, other, commit{kind: dag.KindMessage, role: dag.RoleAssistant, text: "hi", at: 10 * time.Second,
		meta: record.Meta{Attempt: 1, DurationMS: 5}})

	var live []events.Event
	for _, turn := range [][]*events.Step{retried, once} {
		l := events.NewLive(func(e events.Event) { live = append(live, e) })
		for _, s := range turn {
			l.Add(s)
		}
		l.End()
	}
	all := append(append([]*events.Step{}, retried...), once...)
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })

	traces := events.Replay(all)

	require.Len(t, traces, 2)
	var replayed []events.Event
	for _, tr := range traces {
		replayed = append(replayed, tr.Events...)
	}
	assert.Equal(t, live, replayed)
	first := traces[0]
	assert.Equal(t, "t-1", first.Task)
	assert.Equal(t, restore, first.Restore)
	assert.Equal(t, 2, first.Attempts())
	assert.Equal(t, events.ResolvedSuccess, first.Resolution())
	assert.Equal(t, start.Add(time.Second-100*time.Millisecond), first.Start())
	types := []events.EventType{}
	for _, e := range first.Events {
		types = append(types, e.Event)
	}
	assert.Equal(t, []events.EventType{events.EventAttempt, events.EventFeedbackInjected, events.EventAttempt, events.EventResolved}, types)
	assert.Equal(t, 2, first.Events[1].FeedbackLines)
	assert.Equal(t, int64(3100), first.Events[3].TotalDurationMS)

	st := events.Summarize(traces, events.Filter{})
	assert.Equal(t, 2, st.TotalTasks, "the task, and the turn without one")
	assert.Equal(t, 1, st.FirstAttemptSuccesses, "the turn without a task")
	assert.Equal(t, 1, st.Retried)
	assert.Equal(t, 1, st.RetrySuccesses)
	assert.Equal(t, 1, st.UntaskedTurns)
	assert.Equal(t, 10, st.TokensFailed)
	assert.Equal(t, 20, st.TokensAccepted)
	assert.Equal(t, map[retry.FailureType]int{retry.FailureVerification: 1}, st.FailureTypes)
	assert.Equal(t, []events.DiagnosisCount{{Diagnosis: "invalid json at line N", Count: 1}}, st.TopDiagnoses)
	require.Len(t, st.Tasks, 2)
	assert.Equal(t, events.NoTask, st.Tasks[1].Task)
	assert.Equal(t, 1, st.Tasks[1].Turns)
	assert.Zero(t, events.Summarize(traces, events.Filter{TaskPrefix: "u-"}).TotalTasks)
	assert.Equal(t, 1, events.Summarize(traces, events.Filter{TaskPrefix: "t-"}).TotalTasks, "a prefix leaves out the turns without a task")
}

// A turn a compress replayed onto a new chain (the same commits, new
// parents) is still one turn.
func TestReplay_ReplayedCopiesCountOnce(t *testing.T) {
	restore := dag.Sum([]byte("q"))
	attempt := commit{kind: dag.KindMessage, role: dag.RoleAssistant, text: "a", at: time.Second, meta: record.Meta{Attempt: 1, Task: "t"}}
	original := steps(t, restore, attempt)
	copied := steps(t, dag.Sum([]byte("the summary before q")), attempt)
	require.NotEqual(t, original[0].Hash, copied[0].Hash)

	traces := events.Replay(append(original, copied...))

	require.Len(t, traces, 1)
	assert.Equal(t, 1, traces[0].Attempts())
}

// StepOf takes only the commits of a validated turn, and reads a text
// only for a steering message.
func TestStepOf(t *testing.T) {
	tests := []struct {
		name string
		c    dag.Commit
		want events.StepKind // 0: not a step
	}{
		{"an answer", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleAssistant, Meta: []byte(`{"attempt":1}`)}, events.StepAttempt},
		{"the accepted copy", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleAssistant, Meta: []byte(`{"provenance":{"attempts":2}}`)}, events.StepAccepted},
		{"a model failure", dag.Commit{Kind: dag.KindError, Role: dag.RoleAssistant, Meta: []byte(`{"failure":{"attempt":1}}`)}, events.StepModelFailure},
		{"an exhausted turn's end", dag.Commit{Kind: dag.KindError, Role: dag.RoleAssistant, Meta: []byte(`{"provenance":{"attempts":3}}`)}, events.StepEnd},
		{"an escalation note", dag.Commit{Kind: dag.KindNote, Role: dag.RoleSystem, Meta: []byte(`{"escalation":{"resolution":"retry"}}`)}, events.StepResponse},
		{"a provenance note", dag.Commit{Kind: dag.KindNote, Role: dag.RoleSystem, Meta: []byte(`{"provenance":{"attempts":1}}`)}, 0},
		{"a user message", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Meta: []byte(`{"task":"t"}`)}, 0},
		{"someone else's attempt key", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleAssistant, Meta: []byte(`{"attempt":"first"}`)}, 0},
		{"a tool step's call", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleAssistant, Meta: []byte(`{"tool_step":{"attempt":1,"step":1},"usage":{"total_tokens":6}}`)}, 0},
		{"a tool step's result", dag.Commit{Kind: dag.KindMessage, Role: dag.RoleTool, Meta: []byte(`{"attempt":2,"tool_step":{"attempt":2,"step":1,"tool":"lookup"}}`)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok, err := events.StepOf(dag.Hash{1}, &tt.c, func() (string, error) {
				t.Error("the text is read only for a steering message")
				return "", nil
			})
			require.NoError(t, err)
			assert.Equal(t, tt.want != 0, ok)
			if ok {
				assert.Equal(t, tt.want, s.Kind)
			}
		})
	}
}
