package tract_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

// openAgain opens a second handle on tr's file, closed when the test ends:
// to the file's lock it is another process.
func openAgain(t *testing.T, tr *tract.Tract, opts ...tract.Option) *tract.Tract {
	t.Helper()
	other, err := tract.Open(tr.Path(), append([]tract.Option{tract.WithNoSync()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	return other
}

// Eight goroutines append 40 commits each to one branch, through one shared
// handle or through a handle each: every commit lands, none is lost to a
// race, and each goroutine's commits keep their order.
func TestShared_ConcurrentCommittersOnOneBranchLoseNothing(t *testing.T) {
	const writers, each = 8, 40
	for _, handles := range []string{"one handle", "a handle each"} {
		t.Run(handles, func(t *testing.T) {
			ctx := context.Background()
			tr := newTract(t)
			handle := func(int) *tract.Tract { return tr }
			if handles == "a handle each" {
				hs := make([]*tract.Tract, writers)
				for i := range hs {
					hs[i] = openAgain(t, tr)
				}
				handle = func(i int) *tract.Tract { return hs[i] }
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						if _, err := handle(w).User(ctx, fmt.Sprintf("w%d-%02d", w, i)); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			log, err := tr.Log(ctx)
			require.NoError(t, err)
			require.Len(t, log, writers*each)
			last := make(map[int]int)
			for i := len(log) - 1; i >= 0; i-- {
				var w, n int
				_, err := fmt.Sscanf(log[i].Text, "w%d-%d", &w, &n)
				require.NoError(t, err)
				if prev, ok := last[w]; ok {
					assert.Equal(t, prev+1, n, "writer %d's commits out of order", w)
				}
				last[w] = n
			}
			assert.Len(t, last, writers)
		})
	}
}

// Agents on their own branches: each extends its branch through an
// OnBranch view, concurrently, and HEAD never moves.
func TestShared_AgentsOnTheirOwnBranches(t *testing.T) {
	const agents, each = 8, 40
	ctx := context.Background()
	tr := newTract(t)
	root, err := tr.System(ctx, "You are one of several agents.")
	require.NoError(t, err)
	for a := range agents {
		_, err := tr.CreateBranch(ctx, fmt.Sprintf("agent-%d", a), "")
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for a := range agents {
		wg.Go(func() {
			view := openAgain(t, tr).OnBranch(fmt.Sprintf("agent-%d", a))
			for i := range each {
				_, err := view.Assistant(ctx, fmt.Sprintf("agent %d step %d", a, i))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()

	branch, head, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", branch)
	assert.Equal(t, root, head, "HEAD did not move")
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, all.Commits, 1+agents*each, "every commit is reachable")
	assert.Empty(t, all.Orphans)
	for a := range agents {
		log, err := tr.Log(ctx, tract.LogFrom(fmt.Sprintf("agent-%d", a)))
		require.NoError(t, err)
		require.Len(t, log, 1+each)
		assert.Equal(t, fmt.Sprintf("agent %d step %d", a, each-1), log[0].Text)
	}
	reflog := readReflog(t, tr, "HEAD")
	for _, e := range reflog {
		assert.NotEqual(t, "commit (message assistant)", e.Message[:min(len(e.Message), 26)], "a view's commit appeared in HEAD's reflog")
	}
}

// readReflog returns a reflog, newest first.
func readReflog(t *testing.T, tr *tract.Tract, name string) []tract.ReflogEntry {
	t.Helper()
	es, err := tr.Reflog(context.Background(), name)
	require.NoError(t, err)
	return es
}

// While a chat waits for its model, another handle reads the turn as it
// happens and writes elsewhere, without waiting for the model: the file is
// not locked across the model call.
func TestShared_ReadsAndWritesWhileChatWaitsForModel(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	_, err := tr.System(ctx, "You answer in JSON.")
	require.NoError(t, err)
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: "not json"}, llmtest.Reply{Content: chatValid, Hold: hold})

	type outcome struct {
		res *tract.ChatResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
		done <- outcome{res, err}
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 5*time.Second, time.Millisecond)

	// A bounded wait: were the file locked across the model call, every
	// call below would fail with a *LockedError after it.
	other := openAgain(t, tr, tract.WithLockTimeout(2*time.Second))
	all, err := other.LogAll(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"system message", "user message", "assistant message", "user steering"}, chatShape(all.Commits),
		"the user message, the failed attempt and its steering are visible while the model answers again")
	st, err := other.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, st.Length)
	shown, err := other.Show(ctx, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, tract.KindSteering, shown.Kind)
	_, err = other.CreateBranch(ctx, "side", "HEAD~3")
	require.NoError(t, err)
	_, err = other.OnBranch("side").User(ctx, "meanwhile, on a side branch")
	require.NoError(t, err)

	close(hold)
	got := <-done
	require.NoError(t, got.err)
	assert.Equal(t, chatValid, got.res.Text)
	assert.True(t, got.res.Purified)
	log := chatLog(t, tr)
	assert.Equal(t, []string{"system message", "user message", "assistant message"}, chatShape(log))
	side, err := tr.Log(ctx, tract.LogFrom("side"))
	require.NoError(t, err)
	assert.Equal(t, "meanwhile, on a side branch", side[0].Text)
}

// A commit on the chat's branch while the model answers: the turn stops
// with a conflict, the other writer's commit stays on the branch, the
// attempts already made stay under it, and the accepted answer is kept off
// the branch, listed by LogAll and protected from GC until it expires.
func TestShared_CommitOnChatBranchIsConflict(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: "not json"}, llmtest.Reply{Content: chatValid, Hold: hold})
	done := make(chan error, 1)
	var res *tract.ChatResult
	go func() {
		var err error
		res, err = tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
		done <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 5*time.Second, time.Millisecond)
	other := openAgain(t, tr)
	interloper, err := other.User(ctx, "interloper")
	require.NoError(t, err)
	close(hold)
	err = <-done

	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.ErrorIs(t, err, tract.ErrConflict)
	assert.Equal(t, "refs/heads/main", conflict.Ref)
	assert.Equal(t, interloper, conflict.Actual)
	assert.Equal(t, "accepted answer", conflict.What)
	assert.Equal(t, conflict.Kept, res.Commit)
	assert.Contains(t, err.Error(), "branch main moved from "+conflict.Expected.Short()+" to "+interloper.Short())
	assert.Contains(t, err.Error(), "the accepted answer was kept off the branch as commit "+conflict.Kept.Short())

	log := chatLog(t, tr)
	assert.Equal(t, []string{"user message", "assistant message", "user steering", "user message"}, chatShape(log),
		"the attempt and steering stay, under the other writer's commit")
	assert.Equal(t, interloper, log[0].Hash)
	kept, err := tr.Show(ctx, conflict.Kept.String())
	require.NoError(t, err)
	assert.Equal(t, chatValid, kept.Text)
	assert.Equal(t, []tract.Hash{log[1].Hash}, kept.Parents, "the answer was made for the steered context")

	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "conflict", all.Orphans[0].Action)
	assert.Contains(t, all.Orphans[0].Reason, "accepted answer kept off main")

	removed, err := tr.GC(ctx)
	require.NoError(t, err)
	assert.Zero(t, removed.Commits, "the stranded answer is protected until its entry expires")
	removed, err = tr.GC(ctx, tract.GCExpiry(0))
	require.NoError(t, err)
	assert.Equal(t, 1, removed.Commits)
}

// Two handles on one file in one process take turns without deadlock, and
// an idle handle holds nothing.
func TestShared_TwoHandlesInOneProcess(t *testing.T) {
	ctx := context.Background()
	a := newTract(t)
	b := openAgain(t, a, tract.WithLockTimeout(time.Second))
	var wg sync.WaitGroup
	for _, h := range []*tract.Tract{a, b} {
		wg.Go(func() {
			for i := range 50 {
				_, err := h.User(ctx, fmt.Sprintf("turn %d", i))
				assert.NoError(t, err)
				_, err = h.Log(ctx, tract.LogLimit(1))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	log, err := b.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 100)

	// a is idle: b writes at once.
	_, err = b.Note(ctx, "b writes while a is open")
	require.NoError(t, err)
}

// A transaction of another handle makes a call wait at most its lock
// timeout, and then fail with a *LockedError naming the file.
func TestShared_LockTimeout(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	tests := []struct {
		timeout time.Duration
		waited  time.Duration
		other   *tract.Tract
	}{
		{timeout: 100 * time.Millisecond, waited: 100 * time.Millisecond},
		{timeout: 0, waited: 0}, // 0: do not wait
	}
	for i := range tests {
		tests[i].other = openAgain(t, tr, tract.WithLockTimeout(tests[i].timeout))
	}
	for _, tt := range tests {
		other := tt.other
		release := storetest.HoldWrite(t, tr.Store())
		_, err := other.User(ctx, "blocked")
		var locked *tract.LockedError
		require.ErrorAs(t, err, &locked)
		assert.Equal(t, tr.Path(), locked.Path)
		assert.Equal(t, tt.waited, locked.Waited)
		_, err = other.Log(ctx)
		require.ErrorAs(t, err, &locked, "reads wait for a writer too")
		release()
	}
	_, err := openAgain(t, tr, tract.WithLockTimeout(time.Second)).User(ctx, "after")
	require.NoError(t, err)
}

// A method's own context ends its wait for the file's lock, long before
// the lock timeout: at its deadline, or when it is cancelled (Ctrl-C), with
// a *LockedError naming the file that matches the context's error. So
// does a call of the same handle queued behind another that waits, and
// the exclusive work of fsck and compact, and the opening of a file
// under WithContext.
func TestShared_ContextEndsTheLockWait(t *testing.T) {
	tr := newTract(t)
	other := openAgain(t, tr, tract.WithLockTimeout(time.Minute))
	release := storetest.HoldWrite(t, tr.Store())
	defer release()
	queued := make(chan error, 1)
	queuedCtx, stopQueued := context.WithCancel(context.Background())
	defer stopQueued()
	go func() { // waits for the file: the calls below queue behind it in the handle
		_, err := other.User(queuedCtx, "queued")
		queued <- err
	}()
	for name, tc := range map[string]struct {
		ctx    func() (context.Context, context.CancelFunc)
		target error
		says   string
	}{
		"deadline": {
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 150*time.Millisecond)
			},
			target: context.DeadlineExceeded,
			says:   "another process held it past the deadline",
		},
		"cancelled": {
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(150*time.Millisecond, cancel)
				return ctx, cancel
			},
			target: context.Canceled,
			says:   "interrupted while waiting for the lock of repository " + tr.Path(),
		},
	} {
		for _, call := range []struct {
			name string
			run  func(context.Context) error
		}{
			{"write", func(ctx context.Context) error { _, err := other.User(ctx, "blocked"); return err }},
			{"read", func(ctx context.Context) error { _, err := other.Log(ctx); return err }},
			{"fsck", func(ctx context.Context) error { _, err := other.Fsck(ctx); return err }},
			{"compact", func(ctx context.Context) error { _, err := other.Compact(ctx); return err }},
			{"fsck of the file", func(ctx context.Context) error {
				_, err := tract.FsckFile(ctx, tr.Path(), tract.WithLockTimeout(time.Minute))
				return err
			}},
			{"open", func(ctx context.Context) error {
				again, err := tract.Open(tr.Path(), tract.WithLockTimeout(time.Minute), tract.WithContext(ctx))
				if err == nil {
					again.Close()
				}
				return err
			}},
		} {
			ctx, cancel := tc.ctx()
			start := time.Now()
			err := call.run(ctx)
			cancel()
			var locked *tract.LockedError
			require.ErrorAs(t, err, &locked, "%s %s", name, call.name)
			assert.ErrorIs(t, err, tc.target, "%s %s", name, call.name)
			assert.Equal(t, tr.Path(), locked.Path)
			assert.Contains(t, err.Error(), tc.says)
			assert.Less(t, time.Since(start), 10*time.Second, "%s %s: the context, not the minute's lock timeout, ends the wait", name, call.name)
		}
	}
	stopQueued()
	require.ErrorIs(t, <-queued, context.Canceled)
	release()
	_, err := other.User(context.Background(), "after")
	require.NoError(t, err, "the handle works once the file is free")
}

// WithReadOnly refuses writes; a file this process may only read can still
// be opened and read, and a write says why it fails.
func TestShared_ReadOnly(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "hello")
	require.NoError(t, err)

	ro := openAgain(t, tr, tract.WithReadOnly())
	log, err := ro.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 1)
	_, err = ro.User(ctx, "refused")
	assert.ErrorIs(t, err, tract.ErrReadOnly)

	if os.Geteuid() == 0 {
		t.Log("running as root, which may write any file: the file-permission case is tested end to end as an unprivileged user (tests/)")
		return
	}
	require.NoError(t, os.Chmod(tr.Path(), 0o400))
	t.Cleanup(func() { os.Chmod(tr.Path(), 0o600) })
	readOnly, err := tract.Open(tr.Path())
	require.NoError(t, err, "a file the user may only read opens")
	defer readOnly.Close()
	for _, read := range []func() error{
		func() error { _, err := readOnly.Log(ctx); return err },
		func() error { _, err := readOnly.LogAll(ctx); return err },
		func() error { _, err := readOnly.Status(ctx); return err },
		func() error { _, err := readOnly.Show(ctx, "HEAD"); return err },
	} {
		require.NoError(t, read())
	}
	_, err = readOnly.User(ctx, "refused")
	var roErr *tract.ReadOnlyError
	require.ErrorAs(t, err, &roErr)
	assert.ErrorIs(t, err, tract.ErrReadOnly)
	assert.Equal(t, 1, strings.Count(err.Error(), tr.Path()), "the path is named once: %v", err)
}

// A view acts on its branch: it commits, logs, compiles, reports status,
// resets and chats there, "HEAD" in its revisions means the branch, and
// HEAD itself never moves.
func TestOnBranch_ActsOnItsBranch(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	sys, err := tr.System(ctx, "shared system prompt")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "agent", "")
	require.NoError(t, err)
	mainTip, err := tr.User(ctx, "on main")
	require.NoError(t, err)

	agent := tr.OnBranch("agent")
	assert.Equal(t, "agent", agent.Branch())
	assert.Equal(t, "", tr.Branch())
	u, err := agent.User(ctx, "agent question")
	require.NoError(t, err)
	srv.Reply(llmtest.Answer("agent answer"))
	res, err := agent.Chat(ctx, "agent chat")
	require.NoError(t, err)
	assert.Equal(t, "agent answer", res.Text)

	msgs, err := agent.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"shared system prompt", "agent question", "agent chat", "agent answer"}, contents(msgs))
	assert.Equal(t, []string{"shared system prompt", "agent question", "agent chat"}, contents(srv.Requests()[0].Messages))
	st, err := agent.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "agent", st.Branch)
	assert.Equal(t, res.Commit, st.Head)
	assert.Equal(t, 4, st.Length)
	name, h, err := agent.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "agent", name)
	assert.Equal(t, res.Commit, h)
	at, err := agent.Resolve(ctx, "HEAD~2")
	require.NoError(t, err)
	assert.Equal(t, u, at, "HEAD means the view's branch")

	rr, err := agent.Reset(ctx, "HEAD~2", tract.Soft)
	require.NoError(t, err)
	assert.Equal(t, u, rr.To)
	log, err := agent.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"agent question", "shared system prompt"}, texts(log))

	// HEAD did not move, and its reflog has none of the view's moves.
	name, h, err = tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", name)
	assert.Equal(t, mainTip, h)
	for _, e := range readReflog(t, tr, "HEAD") {
		assert.NotContains(t, e.Message, "agent")
	}
	assert.NotEmpty(t, readReflog(t, tr, "refs/heads/agent"))
	_ = sys
}

func contents(msgs []tract.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// A view's branch must exist, except the unborn branch HEAD is on, and must
// be a valid name; closing a view ends only the view.
func TestOnBranch_MissingInvalidUnbornAndClose(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)

	first, err := tr.OnBranch("main").User(ctx, "first commit, through a view of the unborn branch")
	require.NoError(t, err)
	_, h, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, first, h)

	_, err = tr.OnBranch("nope").User(ctx, "x")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
	assert.ErrorContains(t, err, `"nope"`)
	_, err = tr.OnBranch("bad..name").Log(ctx)
	assert.ErrorIs(t, err, tract.ErrInvalidBranchName)

	view := tr.OnBranch("main")
	require.NoError(t, view.Close())
	_, err = view.Log(ctx)
	assert.ErrorIs(t, err, tract.ErrClosed)
	_, err = tr.Log(ctx)
	assert.NoError(t, err, "closing a view leaves the handle open")
	assert.Equal(t, tr.Path(), view.Path())
}

// Compress through a view works on the view's branch.
func TestOnBranch_Compress(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	for i := range 4 {
		_, err := tr.User(ctx, fmt.Sprintf("main %d", i))
		require.NoError(t, err)
	}
	_, err := tr.CreateBranch(ctx, "side", "")
	require.NoError(t, err)
	side := tr.OnBranch("side")
	_, err = side.Assistant(ctx, "side tail")
	require.NoError(t, err)
	res, err := side.CompressRange(ctx, "", "HEAD~1", tract.Summaries("four messages about main"))
	require.NoError(t, err)
	log, err := side.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"side tail", "four messages about main"}, texts(log))
	assert.Equal(t, res.NewHead, log[0].Hash)
	mainLog, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, mainLog, 4, "main is untouched")
}

// Reading every reflog: the stranded one is listed by name like any other,
// and a conflict's entry points at what it kept.
func TestShared_StrandedReflog(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: "the answer", Hold: hold})
	done := make(chan error, 1)
	go func() {
		_, err := tr.Chat(ctx, "question")
		done <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	_, err := openAgain(t, tr).Reset(ctx, "HEAD", tract.Soft) // no move: not a conflict
	require.NoError(t, err)
	_, err = openAgain(t, tr).Note(ctx, "a note from elsewhere")
	require.NoError(t, err)
	close(hold)
	var conflict *tract.ConflictError
	require.ErrorAs(t, <-done, &conflict)
	assert.Equal(t, "answer", conflict.What)

	var names []string
	require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
		names, err = tx.ReflogNames()
		if err != nil {
			return err
		}
		es, err := tx.Reflog("STRANDED")
		require.Len(t, es, 1)
		assert.Equal(t, conflict.Kept, es[0].New)
		assert.Equal(t, conflict.Expected, es[0].Old)
		assert.Equal(t, "conflict", es[0].Action)
		return err
	}))
	assert.True(t, slices.Contains(names, "STRANDED"), "reflogs: %v", names)
}

// Checkout and Switch move HEAD, from a view as from the handle.
func TestOnBranch_SwitchAndCheckoutMoveHEAD(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	first, err := tr.User(ctx, "first")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "side", "")
	require.NoError(t, err)
	side := tr.OnBranch("side")
	sideTip, err := side.Assistant(ctx, "on side")
	require.NoError(t, err)

	st, err := side.Switch(ctx, "fresh", true)
	require.NoError(t, err)
	assert.Equal(t, "fresh", st.Branch)
	assert.Equal(t, first, st.Head, "created at HEAD, not at the view's branch")
	st, err = side.Checkout(ctx, "side")
	require.NoError(t, err)
	assert.Equal(t, "side", st.Branch)
	assert.Equal(t, sideTip, st.Head)
	name, _, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "side", name)
}

// Another writer commits on the branch between two steps of a validated
// turn (from the OnAttempt callback, which runs with no lock held): the
// step that follows keeps what it made off the branch, and the turn ends.
func TestShared_ConflictAtEachStepOfATurn(t *testing.T) {
	tests := []struct {
		name      string
		replies   []string
		attempts  int
		interfere int // the attempt after which the other writer commits
		what      string
		// keptOnUser says the kept commit was made on the user message
		// (purify and exhaustion rewind to it); else on the attempt.
		keptOnUser bool
		keptText   string
		branch     []string // the branch afterwards, oldest first
	}{
		{
			name: "steering after a failed attempt", replies: []string{"not json"}, attempts: 3, interfere: 1, // no second call
			what: "steering message", keptText: chatSteering(chatJSONDiagnosis(t, "not json")),
			branch: []string{"user message", "assistant message", "user message"},
		},
		{
			name: "purify after the accepted attempt", replies: []string{"not json", chatValid}, attempts: 3, interfere: 2,
			what: "accepted answer", keptOnUser: true, keptText: chatValid,
			branch: []string{"user message", "assistant message", "user steering", "assistant message", "user message"},
		},
		{
			name: "error record after the last failed attempt", replies: []string{"not json", "still not json"}, attempts: 2, interfere: 2,
			what: "error record", keptOnUser: true,
			branch: []string{"user message", "assistant message", "user steering", "assistant message", "user message"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			tr, srv := newChatServerTract(t)
			for _, r := range tt.replies {
				srv.Reply(llmtest.Answer(r))
			}
			other := openAgain(t, tr, tract.WithLockTimeout(time.Second))
			var interloper, attemptCommit tract.Hash
			res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(tt.attempts),
				tract.OnAttempt(func(a tract.Attempt) {
					if a.Number == tt.interfere {
						attemptCommit = a.Commit
						var err error
						interloper, err = other.User(ctx, "interloper")
						require.NoError(t, err, "a callback runs with no lock held")
					}
				}))
			var conflict *tract.ConflictError
			require.ErrorAs(t, err, &conflict)
			assert.Equal(t, tt.what, conflict.What)
			assert.Equal(t, attemptCommit, conflict.Expected)
			assert.Equal(t, interloper, conflict.Actual)

			log := chatLog(t, tr)
			assert.Equal(t, tt.branch, chatShape(log))
			assert.Equal(t, interloper, log[0].Hash)
			kept, err := tr.Show(ctx, conflict.Kept.String())
			require.NoError(t, err)
			parent := attemptCommit
			if tt.keptOnUser {
				parent = res.User
			}
			assert.Equal(t, []tract.Hash{parent}, kept.Parents)
			if tt.keptText != "" {
				assert.Equal(t, tt.keptText, kept.Text)
			}
			if tt.what == "accepted answer" {
				assert.Equal(t, conflict.Kept, res.Commit)
				assert.Equal(t, chatValid, res.Text)
			}
			all := chatLogAll(t, tr)
			require.Len(t, all.Orphans, 1)
			assert.Equal(t, "conflict", all.Orphans[0].Action)
			assert.Equal(t, conflict.Kept, all.Orphans[0].Commits[0].Hash)
		})
	}
}

// CommitMany appends a chain in one transaction: every hash in order, each
// the parent of the next, metadata kept; a bad message writes nothing; and
// like Commit it appends to the tip, so batches and single commits from
// several goroutines all land.
func TestCommitMany(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	first, err := tr.System(ctx, "start")
	require.NoError(t, err)
	hs, err := tr.CommitMany(ctx, []tract.ImportMessage{
		{Role: tract.RoleUser, Content: "one"},
		{Role: tract.RoleAssistant, Content: "two", Meta: []byte(`{"step": 2}`)},
		{Kind: tract.KindNote, Role: tract.RoleSystem, Content: "three"},
	})
	require.NoError(t, err)
	require.Len(t, hs, 3)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"three", "two", "one", "start"}, texts(log))
	assert.Equal(t, []tract.Hash{hs[2], hs[1], hs[0], first}, []tract.Hash{log[0].Hash, log[1].Hash, log[2].Hash, log[3].Hash})
	assert.Equal(t, []tract.Hash{hs[0]}, log[1].Parents)
	assert.Equal(t, float64(2), log[1].MetaValue("step"))
	assert.Equal(t, tract.KindNote, log[0].Kind)
	reflog := readReflog(t, tr, "refs/heads/main")
	assert.Equal(t, "commit: 3 commits", reflog[0].Message)

	_, err = tr.CommitMany(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: "fine"}, {Role: tract.RoleUser, Content: ""}})
	assert.ErrorIs(t, err, tract.ErrInvalidText)
	assert.ErrorContains(t, err, "message 2")
	after, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, after, 4, "nothing of a failed batch is written")
	none, err := tr.CommitMany(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, none)

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				batch := make([]tract.ImportMessage, 10)
				for j := range batch {
					batch[j] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("batch %d.%d.%d", g, i, j)}
				}
				_, err := openAgain(t, tr).OnBranch("main").CommitMany(ctx, batch)
				assert.NoError(t, err)
				_, err = tr.User(ctx, fmt.Sprintf("single %d.%d", g, i))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	all, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 4+4*5*11)
}

// A batch of packMin (64) messages or more goes into a pack of its own
// on a file: it reads like any other commits, fsck counts the pack, and a
// hard reset deletes from it what it leaves behind.
func TestCommitMany_ALargeBatchIsAPack(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	batch := func(tag string) []tract.ImportMessage {
		msgs := make([]tract.ImportMessage, 300)
		for i := range msgs {
			msgs[i] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("%s %d", tag, i)}
		}
		return msgs
	}
	kept, err := tr.CommitMany(ctx, batch("kept"))
	require.NoError(t, err)
	secret, err := tr.CommitMany(ctx, batch("secret"))
	require.NoError(t, err)
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 2, report.Packs)
	st, err := tr.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 600, st.Length)
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 600)
	assert.Equal(t, "secret 299", msgs[599].Content)

	_, err = tr.Reset(ctx, kept[len(kept)-1].String(), tract.Hard)
	require.NoError(t, err)
	require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
		for _, h := range secret {
			has, err := tx.HasCommit(h)
			require.NoError(t, err)
			assert.False(t, has, "commit %s outlived the hard reset", h.Short())
		}
		return nil
	}))
	report, err = tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 300, report.Commits)
}
