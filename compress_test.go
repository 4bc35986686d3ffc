package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// newCmpTract opens a fresh repository with a deterministic clock and checks
// its integrity when the test ends.
func newCmpTract(t *testing.T, opts ...tract.Option) *tract.Tract {
	t.Helper()
	base := []tract.Option{tract.WithNoSync(), tract.WithClock(stepClock())}
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		rep, err := tr.Fsck(context.Background())
		if assert.NoError(t, err) {
			assert.True(t, rep.OK(), "fsck problems: %v", rep.Problems)
		}
		assert.NoError(t, tr.Close())
	})
	return tr
}

// cmpText is a message long enough that a short summary is shorter than it.
func cmpText(tag string, i int) string {
	return fmt.Sprintf("%s %d: %s", tag, i, strings.Repeat("we talked about the parser and its error recovery. ", 3))
}

// cmpTurns commits n messages alternating user and assistant, with long texts.
func cmpTurns(t *testing.T, tr *tract.Tract, n int, tag string) []tract.Hash {
	t.Helper()
	hs := make([]tract.Hash, n)
	for i := range hs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		h, err := tr.Commit(context.Background(), tract.KindMessage, role, cmpText(tag, i))
		require.NoError(t, err)
		hs[i] = h
	}
	return hs
}

// cmpChain returns the first-parent chain from HEAD, oldest first.
func cmpChain(t *testing.T, tr *tract.Tract) []*tract.CommitInfo {
	t.Helper()
	log, err := tr.Log(context.Background())
	require.NoError(t, err)
	slices.Reverse(log)
	return log
}

func cmpHashes(cs []*tract.CommitInfo) []tract.Hash {
	out := make([]tract.Hash, len(cs))
	for i, c := range cs {
		out[i] = c.Hash
	}
	return out
}

func cmpStrings(hs []tract.Hash) []any {
	out := make([]any, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

func cmpHead(t *testing.T, tr *tract.Tract) tract.Hash {
	t.Helper()
	h, err := tr.Resolve(context.Background(), "HEAD")
	require.NoError(t, err)
	return h
}

func cmpLogAll(t *testing.T, tr *tract.Tract) *tract.History {
	t.Helper()
	all, err := tr.LogAll(context.Background())
	require.NoError(t, err)
	return all
}

// cmpCount counts every commit of the repository, reachable or not.
func cmpCount(all *tract.History) int {
	n := len(all.Commits)
	for _, o := range all.Orphans {
		n += len(o.Commits)
	}
	return n
}

// cmpSnapshot is the whole repository as LogAll and HEAD show it.
type cmpSnapshot struct {
	all  *tract.History
	head tract.Hash
}

func cmpSnap(t *testing.T, tr *tract.Tract) cmpSnapshot {
	t.Helper()
	return cmpSnapshot{all: cmpLogAll(t, tr), head: cmpHead(t, tr)}
}

// cmpUnchanged asserts that nothing was written since s was taken.
func cmpUnchanged(t *testing.T, tr *tract.Tract, s cmpSnapshot) {
	t.Helper()
	assert.Equal(t, s.head, cmpHead(t, tr), "HEAD moved")
	assert.Equal(t, s.all, cmpLogAll(t, tr), "the repository changed")
}

// cmpSameContent asserts that got is a replay of want: same kind, role, text
// and metadata, but a new commit.
func cmpSameContent(t *testing.T, want, got *tract.CommitInfo) {
	t.Helper()
	assert.Equal(t, want.Kind, got.Kind, "kind of %s", want.Text)
	assert.Equal(t, want.Role, got.Role, "role of %s", want.Text)
	assert.Equal(t, want.Text, got.Text)
	assert.Equal(t, string(want.Meta), string(got.Meta), "metadata of %s", want.Text)
	assert.NotEqual(t, want.Hash, got.Hash, "%s was not replayed", want.Text)
}

func cmpMeta(t *testing.T, c *tract.CommitInfo) map[string]any {
	t.Helper()
	m := map[string]any{}
	for _, k := range []string{"sources", "tokens_before", "tokens_after", "tokens_estimated", "attempts", "diagnoses"} {
		m[k] = c.MetaValue(k)
	}
	return m
}

// cmpTokens is the documented estimate of the context size of texts: one
// token per four characters, rounded up, plus the per-message overhead.
func cmpTokens(texts ...string) int {
	n := 0
	for _, s := range texts {
		n += (len([]rune(s))+3)/4 + compress.MessageOverhead
	}
	return n
}

func cmpTextsOf(cs []*tract.CommitInfo) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func cmpValidator(t *testing.T, specs ...string) retry.Validator {
	t.Helper()
	v, err := retry.ParseSpecs(specs)
	require.NoError(t, err)
	return v
}

// cmpHookClient runs before ahead of each call to the wrapped client.
type cmpHookClient struct {
	llm.Client
	before func(req llm.Request)
}

func (c *cmpHookClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	c.before(req)
	return c.Client.Complete(ctx, req)
}

// cmpModelError is a model failure that tests find again with errors.As.
type cmpModelError struct{ msg string }

func (e *cmpModelError) Error() string { return e.msg }

const cmpSummary = "The user and the assistant discussed the parser and its error recovery at length."

// The "done when": a system prompt, 40 turns and 20 more; compressing
// up to HEAD~20 leaves the system prompt, one summary and the last 20 replayed.
func TestCompress_SystemPromptFortyTurnsKeepsLastTwenty(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	sys, err := tr.System(ctx, "You are a careful pair programmer.")
	require.NoError(t, err)
	early := cmpTurns(t, tr, 40, "early")
	cmpTurns(t, tr, 20, "late")
	orig := cmpChain(t, tr)
	require.Len(t, orig, 61)
	oldHead := orig[60].Hash
	origMsgs, err := tr.Compile(ctx)
	require.NoError(t, err)

	sc := llm.NewScripted(llm.Reply{Content: cmpSummary})
	var groups []tract.GroupProgress
	res, err := tr.CompressRange(ctx, "", "HEAD~20",
		tract.ValidateSummaries(cmpValidator(t, "maxlen:2000")), tract.SummaryClient(sc),
		tract.OnGroup(func(g tract.GroupProgress) { groups = append(groups, g) }))
	require.NoError(t, err)
	sc.Verify(t)
	assert.Len(t, sc.Requests(), 1)

	chain := cmpChain(t, tr)
	require.Len(t, chain, 22)
	assert.Equal(t, sys, chain[0].Hash, "the system prompt at the root is kept as it is")
	sum := chain[1]
	assert.Equal(t, tract.KindSummary, sum.Kind)
	assert.Equal(t, tract.RoleSystem, sum.Role)
	assert.Equal(t, cmpSummary, sum.Text)
	assert.Equal(t, []tract.Hash{sys}, sum.Parents)
	for i, c := range chain[2:] {
		cmpSameContent(t, orig[41+i], c)
	}

	before := cmpTokens(cmpTextsOf(orig[1:41])...)
	after := cmpTokens(cmpSummary)
	assert.Equal(t, map[string]any{
		"sources": cmpStrings(early), "tokens_before": float64(before), "tokens_after": float64(after),
		"tokens_estimated": true, "attempts": float64(1), "diagnoses": []any{},
	}, cmpMeta(t, sum))

	sysTokens := cmpTokens(orig[0].Text)
	assert.Equal(t, []tract.Hash{sum.Hash}, res.Summaries)
	assert.Equal(t, early, res.Sources)
	assert.Empty(t, res.Dropped)
	assert.Equal(t, 20, res.Replayed)
	assert.Equal(t, oldHead, res.OldHead)
	assert.Equal(t, chain[21].Hash, res.NewHead)
	assert.Equal(t, sysTokens+before, res.TokensBefore)
	assert.Equal(t, sysTokens+after, res.TokensAfter)
	assert.Equal(t, sysTokens, res.TokensKept)
	assert.Equal(t, []tract.Hash{orig[0].Hash}, res.Kept)
	assert.True(t, res.TokensEstimated)
	assert.Equal(t, 1, res.Attempts)
	assert.Equal(t, []tract.GroupProgress{{Index: 1, Total: 1, Sources: 40, Attempts: 1, TokensBefore: before, TokensAfter: after}}, groups)

	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Less(t, len(msgs), len(origMsgs))
	require.Len(t, msgs, 22)
	assert.Equal(t, tract.Message{Role: "system", Content: orig[0].Text}, msgs[0])
	assert.Equal(t, tract.Message{Role: "system", Content: cmpSummary}, msgs[1])
	assert.Equal(t, origMsgs[41:], msgs[2:])
	tr.DropCaches()
	fresh, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, fresh, msgs, "the compile cache must not serve the old chain")

	origHead, err := tr.Resolve(ctx, "ORIG_HEAD")
	require.NoError(t, err)
	assert.Equal(t, oldHead, origHead)

	all := cmpLogAll(t, tr)
	newestFirst := cmpHashes(chain)
	slices.Reverse(newestFirst)
	assert.Equal(t, newestFirst, cmpHashes(all.Commits))
	require.Len(t, all.Orphans, 1)
	o := all.Orphans[0]
	assert.Equal(t, "compress", o.Action)
	assert.Contains(t, o.Reason, "compress: 40 commits into 1 summary, 20 replayed")
	assert.Equal(t, sys, o.Fork)
	want := cmpHashes(orig[1:])
	slices.Reverse(want)
	assert.Equal(t, want, cmpHashes(o.Commits), "the old chain, newest first, orphaned by compress")
}

// The same scenario over HTTP: the default client given to Init talks to the
// OpenAI test server, and KeepLast stands for "--to HEAD~20".
func TestCompress_KeepLastAgainstTestServer(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewServer(t)
	client, err := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("summarizer"), llm.WithAPIKey("k"))
	require.NoError(t, err)
	tr := newCmpTract(t, tract.WithClient(client))
	_, err = tr.System(ctx, "You are a careful pair programmer.")
	require.NoError(t, err)
	cmpTurns(t, tr, 40, "early")
	cmpTurns(t, tr, 20, "late")
	orig := cmpChain(t, tr)
	srv.When("Summarize the conversation", llmtest.Answer(cmpSummary))

	res, err := tr.CompressRange(ctx, "", "", tract.KeepLast(20), tract.ValidateSummaries(cmpValidator(t, "maxlen:2000")))
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 1)
	prompt := srv.Requests()[0].LastMessage()
	assert.Contains(t, prompt, "assistant: "+strings.TrimSpace(orig[40].Text)+"\n</transcript>", "the transcript ends with HEAD~20")
	assert.NotContains(t, prompt, "late 0:")

	chain := cmpChain(t, tr)
	require.Len(t, chain, 22)
	assert.Equal(t, orig[0].Hash, chain[0].Hash)
	assert.Equal(t, cmpSummary, chain[1].Text)
	assert.Equal(t, "summarizer", chain[1].MetaValue("model"))
	for i, c := range chain[2:] {
		cmpSameContent(t, orig[41+i], c)
	}
	assert.Equal(t, 20, res.Replayed)
	assert.Positive(t, res.Usage.TotalTokens)
}

// A range in the middle: what comes before keeps its hashes, what comes
// after (a note and metadata included) is replayed unchanged on the summary.
func TestCompress_RangeInTheMiddleReplaysTail(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 8, "head")
	_, err := tr.User(ctx, cmpText("tail", 0), tract.WithMeta(map[string]any{"source": "cli", "n": 1}))
	require.NoError(t, err)
	_, err = tr.Note(ctx, "a note after the range is replayed, not dropped")
	require.NoError(t, err)
	_, err = tr.Commit(ctx, tract.KindSteering, tract.RoleUser, "steer: be brief")
	require.NoError(t, err)
	_, err = tr.Assistant(ctx, cmpText("tail", 3), tract.WithMeta(map[string]any{"tool": map[string]any{"name": "grep"}}))
	require.NoError(t, err)
	orig := cmpChain(t, tr)
	require.Len(t, orig, 12)
	// HEAD~8 is orig[3], HEAD~4 is orig[7].

	res, err := tr.CompressRange(ctx, "HEAD~8", "HEAD~4", tract.Summaries(cmpSummary))
	require.NoError(t, err)

	chain := cmpChain(t, tr)
	require.Len(t, chain, 3+1+4)
	assert.Equal(t, cmpHashes(orig[:3]), cmpHashes(chain[:3]), "commits before the range are untouched")
	assert.Equal(t, tract.KindSummary, chain[3].Kind)
	assert.Equal(t, []tract.Hash{orig[2].Hash}, chain[3].Parents)
	assert.Equal(t, cmpStrings(cmpHashes(orig[3:8])), chain[3].MetaValue("sources"))
	for i, c := range chain[4:] {
		cmpSameContent(t, orig[8+i], c)
	}
	assert.Equal(t, []tract.Hash{chain[3].Hash}, chain[4].Parents)
	assert.Equal(t, cmpHashes(orig[3:8]), res.Sources)
	assert.Equal(t, 4, res.Replayed)
	assert.Equal(t, chain[7].Hash, res.NewHead)

	all := cmpLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, orig[2].Hash, all.Orphans[0].Fork)
	assert.Equal(t, "compress", all.Orphans[0].Action)
	assert.Len(t, all.Orphans[0].Commits, 9)
}

// System messages, commits with "pinned": true and commits given to Pin stay
// in place and cut the range into one summary per run between them.
func TestCompress_PinnedCommitsSplitTheRange(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	a := cmpTurns(t, tr, 2, "a")
	sys, err := tr.System(ctx, "From now on answer in French.")
	require.NoError(t, err)
	b := cmpTurns(t, tr, 2, "b")
	pinnedMeta, err := tr.User(ctx, "keep this one", tract.WithMeta(map[string]any{tract.MetaPinned: true}))
	require.NoError(t, err)
	c := cmpTurns(t, tr, 2, "c")
	pinnedOpt, err := tr.Assistant(ctx, "and this one")
	require.NoError(t, err)
	d := cmpTurns(t, tr, 2, "d")
	notPinned, err := tr.User(ctx, cmpText("e", 0), tract.WithMeta(map[string]any{tract.MetaPinned: false}))
	require.NoError(t, err)
	cmpTurns(t, tr, 2, "tail")
	orig := cmpChain(t, tr)

	t.Run("wrong number of summaries", func(t *testing.T) {
		snap := cmpSnap(t, tr)
		_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.Pin(pinnedOpt), tract.Summaries("one", "two", "three"))
		require.ErrorIs(t, err, tract.ErrSummaryCount)
		assert.Contains(t, err.Error(), "3 summaries given for 4 groups")
		cmpUnchanged(t, tr, snap)
	})

	plan, err := tr.PlanCompress(ctx, "", "HEAD~2", tract.Pin(pinnedOpt))
	require.NoError(t, err)
	assert.Equal(t, 4, plan.Summarized())

	res, err := tr.CompressRange(ctx, "", "HEAD~2", tract.Pin(pinnedOpt), tract.Summaries("s1", "s2", "s3", "s4"))
	require.NoError(t, err)
	chain := cmpChain(t, tr)
	require.Len(t, chain, 9)
	shape := make([]string, len(chain))
	for i, c := range chain {
		shape[i] = string(c.Kind) + " " + c.Text
	}
	assert.Equal(t, []string{
		"summary s1", "message From now on answer in French.", "summary s2", "message keep this one",
		"summary s3", "message and this one", "summary s4", "message " + cmpText("tail", 0), "message " + cmpText("tail", 1),
	}, shape)
	for _, k := range []struct {
		got  int
		orig tract.Hash
	}{{1, sys}, {3, pinnedMeta}, {5, pinnedOpt}} {
		i := slices.IndexFunc(orig, func(c *tract.CommitInfo) bool { return c.Hash == k.orig })
		cmpSameContent(t, orig[i], chain[k.got])
	}
	assert.JSONEq(t, `{"pinned":true}`, string(chain[3].Meta))
	assert.Equal(t, cmpStrings(a), chain[0].MetaValue("sources"))
	assert.Equal(t, cmpStrings(b), chain[2].MetaValue("sources"))
	assert.Equal(t, cmpStrings(c), chain[4].MetaValue("sources"))
	assert.Equal(t, cmpStrings(append(slices.Clone(d), notPinned)), chain[6].MetaValue("sources"), `"pinned": false does not pin`)
	assert.Equal(t, []tract.Hash{chain[0].Hash, chain[2].Hash, chain[4].Hash, chain[6].Hash}, res.Summaries)
	assert.Equal(t, slices.Concat(a, b, c, d, []tract.Hash{notPinned}), res.Sources)
	assert.Equal(t, 4, res.Attempts)
	cmpSameContent(t, orig[len(orig)-1], chain[8])
}

// Notes and errors inside the range leave the new chain but stay in the
// store, on the orphaned old chain.
func TestCompress_NotesAndErrorsInRangeAreDropped(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	first := cmpTurns(t, tr, 2, "x")
	note, err := tr.Note(ctx, "remember to check the tests")
	require.NoError(t, err)
	failed, err := tr.Commit(ctx, tract.KindError, tract.RoleAssistant, "model call failed: 500")
	require.NoError(t, err)
	second := cmpTurns(t, tr, 2, "y")
	cmpTurns(t, tr, 2, "tail")

	plan, err := tr.PlanCompress(ctx, "", "HEAD~2")
	require.NoError(t, err)
	require.Len(t, plan.Dropped, 2)
	assert.Equal(t, []tract.Hash{note, failed}, []tract.Hash{plan.Dropped[0].Hash, plan.Dropped[1].Hash})

	res, err := tr.CompressRange(ctx, "", "HEAD~2", tract.Summaries(cmpSummary))
	require.NoError(t, err)
	assert.Equal(t, []tract.Hash{note, failed}, res.Dropped)
	assert.Equal(t, slices.Concat(first, second), res.Sources)

	chain := cmpChain(t, tr)
	require.Len(t, chain, 3)
	for _, c := range chain {
		assert.NotContains(t, []tract.Kind{tract.KindNote, tract.KindError}, c.Kind)
	}
	all := cmpLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	orphaned := cmpHashes(all.Orphans[0].Commits)
	assert.Contains(t, orphaned, note)
	assert.Contains(t, orphaned, failed)
	c, err := tr.Show(ctx, note.String())
	require.NoError(t, err)
	assert.Equal(t, "remember to check the tests", c.Text)
}

// Caller-supplied summaries need no model: neither the client given (which
// records no request) nor any client at all.
func TestCompress_SuppliedSummariesCallNoModel(t *testing.T) {
	ctx := context.Background()
	t.Run("client given", func(t *testing.T) {
		sc := llm.NewScripted()
		tr := newCmpTract(t, tract.WithClient(sc))
		cmpTurns(t, tr, 6, "m")
		res, err := tr.CompressRange(ctx, "", "", tract.KeepLast(2), tract.SummaryClient(sc), tract.Summaries("  "+cmpSummary+"\n"))
		require.NoError(t, err)
		assert.Empty(t, sc.Requests())
		c, err := tr.Show(ctx, res.Summaries[0].String())
		require.NoError(t, err)
		assert.Equal(t, cmpSummary, c.Text, "trimmed")
		assert.Equal(t, float64(1), c.MetaValue("attempts"))
		assert.Equal(t, "", c.MetaValue("model"))
		assert.Zero(t, res.Usage)
	})
	t.Run("no client", func(t *testing.T) {
		tr := newCmpTract(t)
		cmpTurns(t, tr, 6, "m")
		res, err := tr.CompressRange(ctx, "", "HEAD~2", tract.Summaries(cmpSummary))
		require.NoError(t, err)
		assert.Len(t, res.Summaries, 1)
		assert.Len(t, cmpChain(t, tr), 3)
	})
	t.Run("no client and no summaries", func(t *testing.T) {
		tr := newCmpTract(t)
		cmpTurns(t, tr, 6, "m")
		snap := cmpSnap(t, tr)
		_, err := tr.CompressRange(ctx, "", "HEAD~2")
		require.ErrorIs(t, err, tract.ErrNoClient)
		cmpUnchanged(t, tr, snap)
	})
}

// An empty caller-supplied summary is a summary that fails the built-in
// check, not a request to ask the model.
func TestCompress_EmptySuppliedSummaryDoesNotCallModel(t *testing.T) {
	ctx := context.Background()
	sc := llm.NewScripted().Otherwise(llm.Reply{Content: cmpSummary})
	tr := newCmpTract(t, tract.WithClient(sc))
	_, err := tr.System(ctx, "sys")
	require.NoError(t, err)
	cmpTurns(t, tr, 2, "a")
	_, err = tr.System(ctx, "sys 2")
	require.NoError(t, err)
	cmpTurns(t, tr, 2, "b")
	snap := cmpSnap(t, tr)
	_, err = tr.CompressRange(ctx, "", "", tract.Summaries(cmpSummary, ""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "summary 2 of 2 given is empty")
	assert.Empty(t, sc.Requests(), "the caller supplied the summaries; no model may be called")
	cmpUnchanged(t, tr, snap)
}

// Validators run on caller-supplied summaries too, with one attempt.
func TestCompress_SuppliedSummaryStillValidated(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 6, "m")
	snap := cmpSnap(t, tr)
	_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.Summaries(cmpSummary),
		tract.ValidateSummaries(cmpValidator(t, "maxlen:10")), tract.SummaryAttempts(5))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 1, ex.Attempts)
	assert.Contains(t, ex.LastDiagnosis, "maxlen:10")
	cmpUnchanged(t, tr, snap)
}

// A summary not shorter than its source is rejected with both sizes named;
// the retry amends the prompt in memory and commits nothing meanwhile.
func TestCompress_NotShorterSummaryIsSteeredInMemory(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	_, err := tr.User(ctx, "How do I reverse a slice in Go?")
	require.NoError(t, err)
	_, err = tr.Assistant(ctx, "Use slices.Reverse(s); it works in place.")
	require.NoError(t, err)
	cmpTurns(t, tr, 2, "tail")
	source := cmpTokens("How do I reverse a slice in Go?", "Use slices.Reverse(s); it works in place.")
	long := strings.Repeat("The user asked how to reverse a slice. ", 5)
	short := "User: reverse slice; slices.Reverse."
	sc := llm.NewScripted(llm.Reply{Content: long}, llm.Reply{Content: short})
	before := cmpCount(cmpLogAll(t, tr))
	var during []int
	client := &cmpHookClient{Client: sc, before: func(llm.Request) { during = append(during, cmpCount(cmpLogAll(t, tr))) }}

	res, err := tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(client))
	require.NoError(t, err)
	sc.Verify(t)
	assert.Equal(t, []int{before, before}, during, "nothing is committed between attempts")

	reqs := sc.Requests()
	require.Len(t, reqs, 2)
	diagnosis := fmt.Sprintf("summary is %d tokens (estimated), not shorter than its source of %d tokens", cmpTokens(strings.TrimSpace(long)), source)
	assert.Equal(t, reqs[0].Messages, reqs[1].Messages[:2], "the first request is kept")
	require.Len(t, reqs[1].Messages, 4)
	assert.Equal(t, llm.Message{Role: "assistant", Content: strings.TrimSpace(long)}, reqs[1].Messages[2])
	assert.True(t, strings.HasPrefix(reqs[1].Messages[3].Content, "previous summary was rejected: "+diagnosis), reqs[1].Messages[3].Content)

	sum, err := tr.Show(ctx, res.Summaries[0].String())
	require.NoError(t, err)
	assert.Equal(t, short, sum.Text)
	assert.Equal(t, float64(2), sum.MetaValue("attempts"))
	assert.Equal(t, []any{diagnosis}, sum.MetaValue("diagnoses"))
	assert.Equal(t, 2, res.Attempts)
	assert.Equal(t, before+3, cmpCount(cmpLogAll(t, tr)), "one summary and two replayed commits")
}

// A summary over the target by more than the tolerance is rejected too.
func TestCompress_OverTargetIsRejected(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 6, "m")
	snap := cmpSnap(t, tr)
	text := strings.Repeat("abcd", 20) // 20 tokens + 4
	_, err := tr.CompressRange(ctx, "", "", tract.Summaries(text), tract.TargetTokens(10), tract.TargetTolerance(0.5))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, "summary is 24 tokens (estimated), over the target of 10 tokens by more than 50% (at most 15 allowed)", ex.LastDiagnosis)
	cmpUnchanged(t, tr, snap)
}

// Bad input fails before anything is written.
func TestCompress_BadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	sys, err := tr.System(ctx, "be terse")
	require.NoError(t, err)
	cmpTurns(t, tr, 6, "main")
	_, err = tr.Switch(ctx, "side", true)
	require.NoError(t, err)
	side := cmpTurns(t, tr, 2, "side")
	_, err = tr.Checkout(ctx, "main")
	require.NoError(t, err)
	note, err := tr.Note(ctx, "a note")
	require.NoError(t, err)
	cmpTurns(t, tr, 2, "tail")

	sc := llm.NewScripted().Otherwise(llm.Reply{Content: "short"})
	cases := []struct {
		name     string
		from, to string
		opts     []tract.CompressOption
		want     error
		contains string
	}{
		{name: "reversed range", from: "HEAD~2", to: "HEAD~5", want: tract.ErrReversedRange},
		{name: "only a pinned commit", from: sys.String(), to: sys.String(), want: compress.ErrNothingToSummarize},
		{name: "only a pinned commit given to Pin", from: "HEAD~3", to: "HEAD~3", opts: []tract.CompressOption{tract.Pin(mustResolve(t, tr, "HEAD~3"))}, want: compress.ErrNothingToSummarize},
		{name: "only a note", from: note.String(), to: note.String(), want: compress.ErrNothingToSummarize},
		{name: "keep-last covers the chain", opts: []tract.CompressOption{tract.KeepLast(10)}, want: compress.ErrEmptyRange},
		{name: "keep-last beyond the chain", opts: []tract.CompressOption{tract.KeepLast(100)}, want: compress.ErrEmptyRange},
		{name: "to on another branch", to: "side", want: tract.ErrNotOnChain},
		{name: "from on another branch", from: side[0].String(), to: "HEAD~2", want: tract.ErrNotOnChain},
		{name: "unknown revision", to: "nosuch", want: tract.ErrUnknownRevision},
		{name: "unknown from", from: "HEAD~99", want: tract.ErrUnknownRevision},
		{name: "negative keep-last", opts: []tract.CompressOption{tract.KeepLast(-1)}, contains: "KeepLast(-1)"},
		{name: "negative target", to: "HEAD~2", opts: []tract.CompressOption{tract.TargetTokens(-1)}, contains: "TargetTokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := cmpSnap(t, tr)
			opts := append([]tract.CompressOption{tract.SummaryClient(sc)}, tc.opts...)
			_, err := tr.CompressRange(ctx, tc.from, tc.to, opts...)
			require.Error(t, err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			assert.Contains(t, err.Error(), tc.contains)
			if tc.contains != "TargetTokens" { // PlanCompress does not check the target
				_, perr := tr.PlanCompress(ctx, tc.from, tc.to, tc.opts...)
				require.Error(t, perr)
				assert.Equal(t, err.Error(), perr.Error(), "PlanCompress fails alike")
			}
			cmpUnchanged(t, tr, snap)
		})
	}
	assert.Empty(t, sc.Requests(), "no model call for bad input")
}

// An end of the range that cannot be used is a *RangeEndError that says
// which end, the revision and, when it names a commit, which.
func TestCompress_RangeEndErrorSaysWhichEnd(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 4, "main")
	_, err := tr.Switch(ctx, "side", true)
	require.NoError(t, err)
	side := cmpTurns(t, tr, 2, "side")
	_, err = tr.Checkout(ctx, "main")
	require.NoError(t, err)

	cases := []struct {
		name     string
		from, to string
		want     tract.RangeEndError
		msg      string
	}{
		{"unknown start", "HEAD~9", "", tract.RangeEndError{From: true, Rev: "HEAD~9", Err: tract.ErrUnknownRevision},
			`compress: range start: unknown revision "HEAD~9"`},
		{"unknown end", "", "nosuch", tract.RangeEndError{Rev: "nosuch", Err: tract.ErrUnknownRevision},
			`compress: range end: unknown revision "nosuch"`},
		{"start off the chain", side[0].String(), "", tract.RangeEndError{From: true, Rev: side[0].String(), Hash: side[0], Err: tract.ErrNotOnChain},
			"compress: range start " + side[0].String() + " (" + side[0].Short() + "): not on the current branch's first-parent chain (is it on another branch?)"},
		{"end off the chain", "", "side", tract.RangeEndError{Rev: "side", Hash: side[1], Err: tract.ErrNotOnChain},
			"compress: range end side (" + side[1].Short() + "): not on the current branch's first-parent chain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.PlanCompress(ctx, tc.from, tc.to)
			var end *tract.RangeEndError
			require.ErrorAs(t, err, &end)
			assert.Equal(t, tc.want.From, end.From)
			assert.Equal(t, tc.want.Rev, end.Rev)
			assert.Equal(t, tc.want.Hash, end.Hash)
			assert.ErrorIs(t, err, tc.want.Err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func mustResolve(t *testing.T, tr *tract.Tract, rev string) tract.Hash {
	t.Helper()
	h, err := tr.Resolve(context.Background(), rev)
	require.NoError(t, err)
	return h
}

func TestCompress_DetachedHeadIsRefused(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	hs := cmpTurns(t, tr, 6, "m")
	_, err := tr.Checkout(ctx, hs[4].String())
	require.NoError(t, err)
	snap := cmpSnap(t, tr)
	_, err = tr.CompressRange(ctx, "", "HEAD~2", tract.Summaries(cmpSummary))
	require.ErrorIs(t, err, tract.ErrDetachedHead)
	_, err = tr.PlanCompress(ctx, "", "HEAD~2")
	require.ErrorIs(t, err, tract.ErrDetachedHead)
	cmpUnchanged(t, tr, snap)
}

func TestCompress_UnbornBranch(t *testing.T) {
	tr := newCmpTract(t)
	_, err := tr.CompressRange(context.Background(), "", "", tract.Summaries(cmpSummary))
	require.ErrorIs(t, err, tract.ErrUnbornBranch)
}

// cmpThreeGroups commits three runs of turns separated by system messages.
func cmpThreeGroups(t *testing.T, tr *tract.Tract) {
	t.Helper()
	for i, tag := range []string{"one", "two", "three"} {
		_, err := tr.System(context.Background(), fmt.Sprintf("part %d", i+1))
		require.NoError(t, err)
		cmpTurns(t, tr, 2, tag)
	}
	cmpTurns(t, tr, 2, "tail")
}

// The model fails on the second of three groups: the first summary, already
// accepted, is thrown away with the rest.
func TestCompress_ModelFailureInSecondOfThreeGroups(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpThreeGroups(t, tr)
	snap := cmpSnap(t, tr)
	boom := &cmpModelError{"upstream is down"}
	sc := llm.NewScripted(llm.Reply{Content: "first"}, llm.Reply{Err: boom}, llm.Reply{Content: "third"})
	plan, err := tr.PlanCompress(ctx, "", "HEAD~2")
	require.NoError(t, err)
	require.Equal(t, 3, plan.Summarized())

	_, err = tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(sc))
	require.Error(t, err)
	var got *cmpModelError
	require.ErrorAs(t, err, &got)
	assert.Same(t, boom, got)
	assert.Contains(t, err.Error(), "group 2 of 3")
	assert.Len(t, sc.Requests(), 2, "the model call fails at once and ends the run")
	cmpUnchanged(t, tr, snap)
}

// Every attempt fails the validators: *retry.ExhaustedError, nothing written.
func TestCompress_ExhaustedValidationCommitsNothing(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpThreeGroups(t, tr)
	snap := cmpSnap(t, tr)
	sc := llm.NewScripted().Otherwise(llm.Reply{Content: "not the right words"})
	_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(sc),
		tract.ValidateSummaries(cmpValidator(t, "contains:ok")), tract.SummaryAttempts(2))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 2, ex.Attempts)
	assert.Contains(t, ex.LastDiagnosis, "ok")
	assert.Len(t, sc.Requests(), 2)
	assert.Equal(t, cmpCount(snap.all), cmpCount(cmpLogAll(t, tr)))
	cmpUnchanged(t, tr, snap)
}

// Another writer commits while the model writes the summary: the compress
// fails with a conflict, the other writer's commit stays on the branch, and
// the compressed chain is kept off it, listed as stranded by a conflict.
func TestCompress_HeadMovedDuringModelCallIsConflict(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 6, "m")
	var other tract.Hash
	client := &cmpHookClient{Client: llm.NewScripted(llm.Reply{Content: cmpSummary}), before: func(llm.Request) {
		var err error
		other, err = tr.User(ctx, "written by another writer")
		require.NoError(t, err)
	}}
	before := cmpHead(t, tr)
	_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(client))
	require.ErrorIs(t, err, tract.ErrConflict)
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, "refs/heads/main", conflict.Ref)
	assert.Equal(t, before, conflict.Expected)
	assert.Equal(t, other, conflict.Actual)
	assert.Equal(t, "compressed chain", conflict.What)
	assert.Contains(t, err.Error(), "kept off the branch as commit "+conflict.Kept.Short())

	assert.Equal(t, other, cmpHead(t, tr))
	all := cmpLogAll(t, tr)
	assert.Len(t, all.Commits, 7)
	for _, c := range all.Commits {
		assert.NotEqual(t, tract.KindSummary, c.Kind)
	}
	require.Len(t, all.Orphans, 1, "the compressed chain is kept")
	kept := all.Orphans[0]
	assert.Equal(t, "conflict", kept.Action)
	assert.Contains(t, kept.Reason, "compressed chain kept off main")
	assert.Equal(t, conflict.Kept, kept.Commits[0].Hash)
	var kinds []tract.Kind
	for _, c := range kept.Commits {
		kinds = append(kinds, c.Kind)
	}
	assert.Contains(t, kinds, tract.KindSummary)
	_, err = tr.Resolve(ctx, "ORIG_HEAD")
	assert.ErrorIs(t, err, tract.ErrUnknownRevision, "ORIG_HEAD is not set by a failed compress")
}

// The same conflict, with the other writer in another goroutine committing
// while the model call is delayed.
func TestCompress_HeadMovedDuringDelayedModelCall(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 6, "m")
	sc := llm.NewScripted(llm.Reply{Content: cmpSummary, Delay: 200 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(sc))
		done <- err
	}()
	for len(sc.Requests()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("compress ended before the model call: %v", err)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	other, err := tr.Assistant(ctx, "another writer")
	require.NoError(t, err)
	require.ErrorIs(t, <-done, tract.ErrConflict)
	assert.Equal(t, other, cmpHead(t, tr))
	orphans := cmpLogAll(t, tr).Orphans
	require.Len(t, orphans, 1)
	assert.Equal(t, "conflict", orphans[0].Action)
}

// PlanCompress tells what would happen without a model call or a write.
func TestCompress_PlanReportsWithoutModelOrWrites(t *testing.T) {
	ctx := context.Background()
	sc := llm.NewScripted()
	tr := newCmpTract(t, tract.WithClient(sc))
	sys, err := tr.System(ctx, "be terse")
	require.NoError(t, err)
	a := cmpTurns(t, tr, 2, "a")
	note, err := tr.Note(ctx, "n")
	require.NoError(t, err)
	b := cmpTurns(t, tr, 1, "b")
	cmpTurns(t, tr, 3, "tail")
	snap := cmpSnap(t, tr)

	plan, err := tr.PlanCompress(ctx, "", "", tract.KeepLast(3), tract.SummaryClient(sc))
	require.NoError(t, err)
	assert.Equal(t, snap.head, plan.Head)
	require.Len(t, plan.Groups, 2)
	assert.True(t, plan.Groups[0].Keep)
	assert.Equal(t, []tract.Hash{sys}, cmpHashes(plan.Groups[0].Commits))
	assert.False(t, plan.Groups[1].Keep)
	assert.Equal(t, slices.Concat(a, b), cmpHashes(plan.Groups[1].Commits))
	assert.Equal(t, cmpText("a", 0), plan.Groups[1].Commits[0].Text)
	assert.Equal(t, []tract.Hash{note}, cmpHashes(plan.Dropped))
	assert.Equal(t, 3, plan.Replay)
	assert.Equal(t, 1, plan.Summarized())
	assert.Equal(t, cmpTokens("be terse"), plan.Groups[0].Tokens)
	assert.Equal(t, cmpTokens(cmpText("a", 0), cmpText("a", 1), cmpText("b", 0)), plan.Groups[1].Tokens)
	assert.Equal(t, plan.Groups[0].Tokens+plan.Groups[1].Tokens, plan.TokensBefore)
	assert.Empty(t, sc.Requests())
	cmpUnchanged(t, tr, snap)
}

// The default prompt carries the transcript, the target and the instructions.
func TestCompress_DefaultPromptHasTranscriptTargetAndInstructions(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	_, err := tr.User(ctx, "Which port does the service listen on? "+strings.Repeat("pad ", 40))
	require.NoError(t, err)
	_, err = tr.Assistant(ctx, "Port 8443, configured in deploy/values.yaml. "+strings.Repeat("pad ", 40))
	require.NoError(t, err)
	cmpTurns(t, tr, 1, "tail")
	sc := llm.NewScripted(llm.Reply{Content: "Service port 8443 (deploy/values.yaml)."})

	_, err = tr.CompressRange(ctx, "", "HEAD~1", tract.SummaryClient(sc), tract.SummaryModel("tiny"),
		tract.TargetTokens(50), tract.Instructions("keep file names verbatim"))
	require.NoError(t, err)
	reqs := sc.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "tiny", reqs[0].Model)
	require.Len(t, reqs[0].Messages, 2)
	assert.Equal(t, llm.Message{Role: "system", Content: compress.SystemPrompt}, reqs[0].Messages[0])
	prompt := reqs[0].Messages[1]
	assert.Equal(t, "user", prompt.Role)
	assert.Contains(t, prompt.Content, "<transcript>\nuser: Which port does the service listen on?")
	assert.Contains(t, prompt.Content, "\n\nassistant: Port 8443, configured in deploy/values.yaml.")
	assert.Contains(t, prompt.Content, "Target length: at most about 50 tokens.")
	assert.Contains(t, prompt.Content, "Additional instructions: keep file names verbatim")
	assert.NotContains(t, prompt.Content, "tail 0", "the commit after the range is not summarized")
}

// A cancelled context ends the run before the model is called.
func TestCompress_CancelledContextWritesNothing(t *testing.T) {
	tr := newCmpTract(t)
	cmpTurns(t, tr, 6, "m")
	snap := cmpSnap(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := llm.NewScripted(llm.Reply{Content: cmpSummary})
	_, err := tr.CompressRange(ctx, "", "HEAD~2", tract.SummaryClient(sc))
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, sc.Requests())
	cmpUnchanged(t, tr, snap)
}

// The CompressRange doc: commits after the range are replayed
// "unchanged except for their parents", with the same time.
func TestCompress_ReplayKeepsCommitTimes(t *testing.T) {
	ctx := context.Background()
	tr := newCmpTract(t)
	cmpTurns(t, tr, 8, "m")
	orig := cmpChain(t, tr)
	_, err := tr.CompressRange(ctx, "", "HEAD~4", tract.Summaries(cmpSummary))
	require.NoError(t, err)
	chain := cmpChain(t, tr)
	require.Len(t, chain, 5)
	for i, c := range chain[1:] {
		assert.Equal(t, orig[4+i].Time, c.Time, "time of replayed %q", c.Text[:8])
	}
	all := cmpLogAll(t, tr)
	newestFirst := cmpHashes(chain)
	slices.Reverse(newestFirst)
	assert.Equal(t, newestFirst, cmpHashes(all.Commits), "log --all lists the new chain in order")
}

// The packages that call models share one "no client" sentinel.
func TestErrNoClient_IsOneError(t *testing.T) {
	assert.ErrorIs(t, tract.ErrNoClient, llm.ErrNoClient)
	assert.ErrorIs(t, compress.ErrNoClient, llm.ErrNoClient)
}

// A summary commit says what it replaced and how it was made, typed.
func TestCompress_SummaryRecord(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 6, "turn")
	res, err := tr.CompressRange(ctx, "HEAD~4", "HEAD~1", tract.Summaries("four turns, summarised"))
	require.NoError(t, err)
	require.Len(t, res.Summaries, 1)
	sum, err := tr.Show(ctx, res.Summaries[0].String())
	require.NoError(t, err)
	rec, ok := sum.SummaryRecord()
	require.True(t, ok)
	assert.Equal(t, res.Sources, rec.Sources)
	assert.Equal(t, res.TokensEstimated, rec.TokensEstimated)
	assert.Positive(t, rec.TokensBefore)
	assert.Positive(t, rec.TokensAfter)
	assert.Empty(t, rec.Diagnoses)
	head, err := tr.Show(ctx, "HEAD")
	require.NoError(t, err)
	_, ok = head.SummaryRecord()
	assert.False(t, ok, "a replayed message is no summary")
}
