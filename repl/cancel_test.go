package repl_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/repl"
)

// interrupt runs line while the server holds its answer, cancels the
// line's context once request number n (from 1) is in flight, as Ctrl-C
// does, and returns the line's error.
func (h *harness) interrupt(line string, n int) error {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.s.Handle(ctx, line) }()
	require.Eventually(h.t, func() bool { return len(h.srv.Requests()) >= n }, 10*time.Second, time.Millisecond,
		"request %d never arrived", n)
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		h.t.Fatalf("line %q did not return after its cancellation", line)
		return nil
	}
}

// held is a reply the server holds until the test ends.
func held(t *testing.T) llmtest.Reply {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return llmtest.Reply{Content: "never sent", Hold: release}
}

// A turn cancelled while answered commits nothing: the branch goes back to
// where it stood, in one reflog entry that says why, and the message stays
// inspectable as an orphan.
func TestTurn_CancelledCommitsNothing(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("Paris."), held(t), llmtest.Answer("Lyon."))
	h.do("capital of France?")
	before, shape := h.head(), h.shape()

	require.NoError(t, h.interrupt("second city?", 2))
	assert.Contains(t, h.out.String(), "[message cancelled]\n")
	assert.Equal(t, before, h.head())
	assert.Equal(t, shape, h.shape())
	log, err := h.tr.Reflog(context.Background(), "HEAD")
	require.NoError(t, err)
	assert.Equal(t, repl.ActionCancel, log[0].Action)
	assert.Regexp(t, `^cancel: message [0-9a-f]+ cancelled while answered; dropped the turn's 1 commit$`, log[0].Message)
	all, err := h.tr.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "second city?", all.Orphans[0].Commits[0].Text)

	h.do("second city?")
	assert.Equal(t, append(shape, "user message second city?", "assistant message Lyon."), h.shape())
}

// With a system prompt the turn committed, the system prompt goes too.
func TestTurn_CancelledDropsTheSystemPromptItCommitted(t *testing.T) {
	h := newHarness(t)
	_, err := h.tr.Note(context.Background(), "a note first")
	require.NoError(t, err)
	before := h.head()
	h.srv.Reply(held(t))
	h.do("/system be brief")
	require.NoError(t, h.interrupt("hello", 1))
	assert.Equal(t, before, h.head())
	log, err := h.tr.Reflog(context.Background(), "HEAD")
	require.NoError(t, err)
	assert.Contains(t, log[0].Message, "dropped the turn's 2 commits")
}

// The streamed part of a cancelled answer ends its line before the notice.
func TestTurn_CancelledMidStream(t *testing.T) {
	out := &syncBuffer{}
	h := newHarness(t, func(c *repl.Config) { c.Stream, c.Out = true, out })
	h.srv.Reply(llmtest.Answer("one"), llmtest.Reply{Content: "partial answer that never ends", ChunkDelay: time.Hour})
	h.do("first")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.s.Handle(ctx, "second") }()
	require.Eventually(t, func() bool { return strings.HasSuffix(out.String(), "partial ") }, 10*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, "one\npartial \n[message cancelled]\n", out.String())
	assert.Equal(t, []string{"user message first", "assistant message one"}, h.shape())
}

// The first message of a branch is taken back too: the branch is unborn
// again, and the message is an orphan the reflog names.
func TestTurn_CancelledFirstMessageLeavesTheBranchUnborn(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(held(t), llmtest.Answer("hi"))
	require.NoError(t, h.interrupt("hello", 1))
	assert.Contains(t, h.out.String(), "[message cancelled]")
	assert.Empty(t, h.shape())
	log, err := h.tr.Reflog(context.Background(), "HEAD")
	require.NoError(t, err)
	assert.Equal(t, repl.ActionCancel, log[0].Action)
	assert.True(t, log[0].New.IsZero())
	all, err := h.tr.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "hello", all.Orphans[0].Commits[0].Text)

	h.do("hello")
	assert.Equal(t, []string{"user message hello", "assistant message hi"}, h.shape())
}

// When another writer committed on top of the cancelled message, it stays
// and the error says so.
func TestTurn_CancelledMessageStaysUnderAnotherWritersCommit(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.srv.Reply(llmtest.Answer("a"), llmtest.Reply{Content: "never sent", Hold: release})
	h.do("first")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.s.Handle(ctx, "second") }()
	require.Eventually(t, func() bool { return len(h.srv.Requests()) >= 2 }, 10*time.Second, time.Millisecond)
	other, err := tract.Open(h.tr.Path())
	require.NoError(t, err)
	_, err = other.Note(context.Background(), "another writer")
	require.NoError(t, err)
	require.NoError(t, other.Close())
	cancel()
	close(release)
	err = <-done
	assert.ErrorIs(t, err, repl.ErrCancelledKept)
	assert.ErrorIs(t, err, repl.ErrBranchMoved)
	shape := h.shape()
	assert.Contains(t, shape, "user message second")
}

// A cancelled attempt is not listed, and the branch does not change.
func TestRetry_CancelledAttemptIsNotListed(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a"), held(t))
	h.do("q", "/retry")
	before := h.head()
	require.NoError(t, h.interrupt("q again", 2))
	assert.Contains(t, h.out.String(), "[message cancelled]")
	assert.ErrorIs(t, h.fail("/apply"), repl.ErrNoAttempts)
	assert.Equal(t, before, h.head())
}

// A cancelled secret turn is not a failure: the next secret message is
// sent, without the cancelled one.
func TestSecret_CancelledTurnDoesNotBlock(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a"), held(t), llmtest.Answer("b"))
	h.do("q", "/secret on")
	before := h.head()
	require.NoError(t, h.interrupt("secret one", 2))
	h.do("secret two")
	assert.Equal(t, []string{"user: q", "assistant: a", "user: secret two"}, h.lastRequest())
	assert.Equal(t, before, h.head())
}

// The banners the prompt is made of, which a terminal colours.
func TestBanners(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Error(404, "gone"))
	h.fail("q")
	bs := h.s.Banners(context.Background())
	require.Len(t, bs, 1)
	assert.Equal(t, repl.BannerError, bs[0].Kind)
	h.do("/retry")
	assert.Regexp(t, `^\[error [0-9a-f]+\] retry\(0\)> $`, h.s.Prompt(context.Background()))
	paint := func(k repl.BannerKind, s string) string { return "<" + s + ">" }
	assert.Regexp(t, `^<\[error [0-9a-f]+\]> <retry\(0\)>> $`, repl.PromptOf(h.s.Banners(context.Background()), paint))
}

// syncBuffer is a buffer a test reads while a line writes to it.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
