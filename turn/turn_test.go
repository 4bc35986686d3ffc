package turn_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/turn"
)

// memRepo is a turn.Repo in memory: one branch, its commits, and the
// messages of its ref moves. It is what a turn needs of a repository and
// no more, so that these tests show the turn's own behaviour.
type memRepo struct {
	t     *testing.T
	mu    sync.Mutex
	clock time.Time
	tip   dag.Hash
	texts map[dag.Hash]string
	all   map[dag.Hash]*dag.Commit
	order []dag.Hash // every commit, in the order written
	moves []string   // the messages of the branch's moves, in order
	// beforeCommit, when set, runs once before the next CommitOn: another
	// writer.
	beforeCommit func()
}

func newMemRepo(t *testing.T) (*memRepo, dag.Hash) {
	r := &memRepo{t: t, clock: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), texts: map[dag.Hash]string{}, all: map[dag.Hash]*dag.Commit{}}
	user := r.put(dag.Hash{}, turn.Pending{Kind: dag.KindMessage, Role: dag.RoleUser, Text: "Answer in JSON."})
	r.tip = user
	return r, user
}

func (r *memRepo) now() time.Time {
	r.clock = r.clock.Add(time.Second)
	return r.clock
}

// put stores p on parent without moving the branch.
func (r *memRepo) put(parent dag.Hash, p turn.Pending) dag.Hash {
	var meta []byte
	if p.Meta != nil {
		raw, err := json.Marshal(p.Meta)
		require.NoError(r.t, err)
		meta, err = dag.CanonicalMeta(raw)
		require.NoError(r.t, err)
	}
	c := &dag.Commit{Kind: p.Kind, Role: p.Role, Blob: dag.Sum([]byte(p.Text)), Meta: meta, Time: r.now()}
	if !parent.IsZero() {
		c.Parents = []dag.Hash{parent}
	}
	return r.store(c, p.Text)
}

func (r *memRepo) store(c *dag.Commit, text string) dag.Hash {
	enc, err := dag.Encode(c)
	require.NoError(r.t, err)
	h := dag.Sum(enc)
	r.all[h], r.texts[h] = c, text
	r.order = append(r.order, h)
	return h
}

func (r *memRepo) conflict(want dag.Hash, kept dag.Hash, what string) error {
	return &refs.ConflictError{Ref: "refs/heads/main", Expected: want, Actual: r.tip, Kept: kept, What: what}
}

func (r *memRepo) Compile(_ context.Context, tip dag.Hash) ([]llm.Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []llm.Message
	for h := tip; !h.IsZero(); h = r.all[h].Parent() {
		c := r.all[h]
		if c.Kind.Compiled() {
			role := c.Role
			if c.Kind == dag.KindSteering {
				role = dag.RoleUser
			}
			out = append(out, llm.Message{Role: string(role), Content: r.texts[h]})
		}
	}
	slices.Reverse(out)
	return out, nil
}

func (r *memRepo) CommitOn(_ context.Context, parent dag.Hash, p turn.Pending) (dag.Hash, error) {
	if f := r.beforeCommit; f != nil {
		r.beforeCommit = nil
		f()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.put(parent, p)
	if r.tip != parent {
		return h, r.conflict(parent, h, p.What)
	}
	r.tip = h
	r.moves = append(r.moves, "commit: "+p.What)
	return h, nil
}

func (r *memRepo) CommitChain(_ context.Context, parent dag.Hash, chain []turn.Pending) ([]dag.Hash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hs []dag.Hash
	h := parent
	for _, p := range chain {
		h = r.put(h, p)
		hs = append(hs, h)
	}
	if r.tip != parent {
		return hs, r.conflict(parent, h, chain[len(chain)-1].What)
	}
	r.tip = h
	r.moves = append(r.moves, "commit: "+chain[0].What)
	return hs, nil
}

func (r *memRepo) Rewind(_ context.Context, tip, restore dag.Hash, msg string, then []turn.Pending) ([]dag.Hash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hs []dag.Hash
	h := restore
	for _, p := range then {
		h = r.put(h, p)
		hs = append(hs, h)
	}
	if r.tip != tip {
		if len(then) == 0 {
			return nil, r.conflict(tip, dag.Hash{}, "")
		}
		return hs, r.conflict(tip, h, then[len(then)-1].What)
	}
	r.tip = h
	r.moves = append(r.moves, msg)
	return hs, nil
}

func (r *memRepo) Restart(_ context.Context, tip, restore dag.Hash, p turn.Pending, msg string) (dag.Hash, dag.Hash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	task := r.all[restore]
	fb := r.put(task.Parent(), p)
	c := *task
	c.Parents, c.Time = []dag.Hash{fb}, r.now()
	if c.Parents[0].IsZero() {
		c.Parents = nil
	}
	copied := r.store(&c, r.texts[restore])
	if r.tip != tip {
		return fb, copied, r.conflict(tip, copied, p.What)
	}
	r.tip = copied
	r.moves = append(r.moves, msg)
	return fb, copied, nil
}

func (r *memRepo) Step(_ context.Context, h dag.Hash) (*events.Step, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, _, err := events.StepOf(h, r.all[h], func() (string, error) { return r.texts[h], nil })
	return s, err
}

func (r *memRepo) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now()
}

func (r *memRepo) Limits() ingest.Limits { return ingest.Limits{}.WithDefaults() }

// branch is the branch's first-parent chain, root first, as kind/role.
func (r *memRepo) branch() []string {
	var out []string
	for h := r.tip; !h.IsZero(); h = r.all[h].Parent() {
		c := r.all[h]
		out = append(out, string(c.Kind)+"/"+string(c.Role)+": "+r.texts[h])
	}
	slices.Reverse(out)
	return out
}

func run(t *testing.T, r *memRepo, restore dag.Hash, client llm.Client, opts ...turn.Option) (*turn.Result, error) {
	t.Helper()
	cfg, err := turn.NewConfig(client, opts...)
	require.NoError(t, err)
	return turn.Run(context.Background(), r, restore, cfg)
}

func TestRun_FirstTry(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "{}"})

	res, err := run(t, r, user, client, turn.Validate(retry.JSON()))

	require.NoError(t, err)
	assert.Equal(t, "{}", res.Text)
	assert.Equal(t, 1, res.Attempts)
	assert.False(t, res.Purified)
	assert.Equal(t, r.tip, res.Commit)
	assert.Equal(t, []string{"message/user: Answer in JSON.", "message/assistant: {}"}, r.branch())
	p, ok := record.Field[record.Provenance](r.all[res.Commit].Meta, record.KeyProvenance)
	assert.True(t, ok, "every accepted answer records its provenance")
	assert.Equal(t, 1, p.Attempts)
}

// A rejected answer is followed by steering that quotes the diagnosis;
// the success after it is purified: the branch keeps the user message and
// the accepted answer only, the attempts stay in the repository.
func TestRun_RetryThenPurify(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "not json"}, llm.Reply{Content: `{"ok":true}`})

	res, err := run(t, r, user, client, turn.Validate(retry.JSON()))

	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.True(t, res.Purified)
	require.Len(t, res.Diagnoses, 1)
	require.Len(t, res.Steering, 1)
	assert.Equal(t, []string{"message/user: Answer in JSON.", `message/assistant: {"ok":true}`}, r.branch())
	assert.Contains(t, r.moves, "purify: hid 1 failed attempt")
	second := client.Requests()[1].Messages
	require.Len(t, second, 3, "the second attempt sees the failed answer and the steering")
	assert.Contains(t, second[2].Content, res.Diagnoses[0])
	assert.Equal(t, dag.KindSteering, r.all[res.Steering[0]].Kind)
	assert.Len(t, r.order, 5, "the user message, two answers, the steering and the clean copy")
}

// Every attempt rejected: with purify the branch ends in the user message
// and an error commit, and the error says every attempt failed.
func TestRun_Exhausted(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "a"}, llm.Reply{Content: "b"})

	res, err := run(t, r, user, client, turn.Validate(retry.JSON()), turn.MaxAttempts(2))

	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	last, ok := retry.LastResultOf[string](err)
	assert.True(t, ok)
	assert.Equal(t, "b", last)
	assert.True(t, res.Purified)
	tip := r.all[r.tip]
	assert.Equal(t, dag.KindError, tip.Kind)
	assert.Equal(t, user, tip.Parent())
	assert.Equal(t, res.Commit, r.tip)
}

// Another writer moves the branch while the turn runs: the answer is kept
// off the branch, named in the conflict, and nothing else is written on
// the branch.
func TestRun_ConflictKeepsTheAnswer(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "{}"})
	var other dag.Hash
	r.beforeCommit = func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		other = r.put(user, turn.Pending{Kind: dag.KindMessage, Role: dag.RoleUser, Text: "someone else"})
		r.tip = other
	}

	res, err := run(t, r, user, client, turn.Validate(retry.JSON()))

	var conflict *refs.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, "accepted answer", conflict.What)
	assert.Equal(t, conflict.Kept, res.Commit)
	assert.Equal(t, "{}", r.texts[conflict.Kept])
	assert.Equal(t, other, r.tip, "the other writer's commit stays the tip")
}

// The events a turn reports live are those events.Replay regenerates
// from the commits it wrote.
func TestRun_LiveEventsAreReplayed(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"}, llm.Reply{Content: "{}"})
	var live []events.Event

	_, err := run(t, r, user, client, turn.Validate(retry.JSON()), turn.Task("t-1"), turn.OnEvent(func(e events.Event) { live = append(live, e) }))

	require.NoError(t, err)
	var steps []*events.Step
	for _, h := range r.order {
		s, ok, err := events.StepOf(h, r.all[h], func() (string, error) { return r.texts[h], nil })
		require.NoError(t, err)
		if ok {
			steps = append(steps, s)
		}
	}
	traces := events.Replay(steps)
	require.Len(t, traces, 1)
	assert.Equal(t, live, traces[0].Events)
	assert.Equal(t, events.EventResolved, live[len(live)-1].Event)
	assert.Equal(t, "t-1", traces[0].Task)
}

// An escalation hook that answers skip ends the turn with a note that
// records the answer, and a *SkippedError.
func TestRun_EscalationSkip(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"})
	var asked turn.Escalation
	hook := func(_ context.Context, e turn.Escalation) (turn.Resolution, error) {
		asked = e
		return turn.Resolution{Action: record.ResolveSkip}, nil
	}

	_, err := run(t, r, user, client, turn.Validate(retry.JSON()), turn.MaxAttempts(1), turn.OnEscalation(hook))

	assert.ErrorIs(t, err, turn.ErrSkipped)
	var skipped *turn.SkippedError
	require.ErrorAs(t, err, &skipped)
	assert.Equal(t, record.EscalateMaxRetries, asked.Reason)
	assert.Equal(t, skipped.Note, r.tip)
	rec, ok := record.Field[record.Escalation](r.all[r.tip].Meta, record.KeyEscalation)
	assert.True(t, ok)
	assert.Equal(t, record.ResolveSkip, rec.Resolution)
}

func TestNewConfig_Refuses(t *testing.T) {
	client := llm.NewScripted()
	tests := []struct {
		name   string
		client llm.Client
		opts   []turn.Option
		want   string
	}{
		{"no client", nil, nil, "no model client"},
		{"negative attempts", client, []turn.Option{turn.MaxAttempts(-1)}, "max attempts is -1"},
		{"an empty task id", client, []turn.Option{turn.Task("")}, `task id "" is empty`},
		{"an unknown feedback format", client, []turn.Option{turn.Feedback("yaml")}, "yaml"},
		{"an unknown context strategy", client, []turn.Option{turn.RetryContextStrategy("fresher")}, `unknown retry context strategy "fresher"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := turn.NewConfig(tt.client, tt.opts...)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	cfg, err := turn.NewConfig(client, turn.SystemPrompt("be brief"), turn.Task("t-2"))
	require.NoError(t, err)
	assert.Equal(t, "be brief", cfg.System())
	assert.Equal(t, "t-2", cfg.Task())
}

// With the fresh retry context each retry starts again from the restore
// point: the feedback goes before a copy of the task message, and the
// model never sees its failed answer.
func TestRun_FreshContext(t *testing.T) {
	r, user := newMemRepo(t)
	client := llm.NewScripted(llm.Reply{Content: "no"}, llm.Reply{Content: "{}"})

	res, err := run(t, r, user, client, turn.Validate(retry.JSON()), turn.RetryContextStrategy(turn.ContextFresh))

	require.NoError(t, err)
	second := client.Requests()[1].Messages
	require.Len(t, second, 2)
	assert.Contains(t, second[0].Content, res.Diagnoses[0], "the feedback comes first")
	assert.Equal(t, "Answer in JSON.", second[1].Content, "then the task message again")
	assert.Equal(t, []string{"message/user: Answer in JSON.", "message/assistant: {}"}, r.branch(), "purified onto the restore point")
	assert.Contains(t, r.moves, "retry: attempt 2 from the restore point "+user.Short())
}
