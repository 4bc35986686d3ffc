package tract_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

// stepClock returns a deterministic clock advancing one millisecond per call.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// newTract opens a fresh repository and checks its integrity when the test ends.
func newTract(t *testing.T, opts ...tract.Option) *tract.Tract {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, append([]tract.Option{tract.WithNoSync(), tract.WithClock(stepClock())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		r, err := tr.Fsck(context.Background())
		if !errors.Is(err, tract.ErrClosed) {
			require.NoError(t, err)
			assert.True(t, r.OK(), "fsck: %v", r.Problems)
		}
		tr.Close()
	})
	return tr
}

// commitChain commits n alternating user/assistant messages.
func commitChain(t *testing.T, tr *tract.Tract, n int, tag string) []tract.Hash {
	t.Helper()
	var hs []tract.Hash
	for i := 0; i < n; i++ {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		h, err := tr.Commit(context.Background(), tract.KindMessage, role, fmt.Sprintf("%s %d", tag, i))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	return hs
}

func texts(cs []*tract.CommitInfo) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

func TestCommit_LogShowCompile(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	sys, err := tr.System(ctx, "be terse")
	require.NoError(t, err)
	_, err = tr.User(ctx, "hi", tract.WithMeta(map[string]any{"source": "test"}))
	require.NoError(t, err)
	_, err = tr.Note(ctx, "a note the model never sees")
	require.NoError(t, err)
	_, err = tr.Commit(ctx, tract.KindSteering, tract.RoleUser, "try again")
	require.NoError(t, err)
	_, err = tr.Commit(ctx, tract.KindError, tract.RoleAssistant, "boom")
	require.NoError(t, err)
	last, err := tr.Assistant(ctx, "hello")
	require.NoError(t, err)

	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"hello", "boom", "try again", "a note the model never sees", "hi", "be terse"}, texts(log))
	assert.Equal(t, last, log[0].Hash)
	assert.Equal(t, []string{"HEAD -> main"}, log[0].Refs)

	limited, err := tr.Log(ctx, tract.LogLimit(2))
	require.NoError(t, err)
	assert.Len(t, limited, 2)

	c, err := tr.Show(ctx, "HEAD~4")
	require.NoError(t, err)
	assert.Equal(t, "hi", c.Text)
	assert.JSONEq(t, `{"source":"test"}`, string(c.Meta))
	root, err := tr.Show(ctx, sys.String()[:6])
	require.NoError(t, err)
	assert.Empty(t, root.Parents)

	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []tract.Message{
		{Role: "system", Content: "be terse"},
		{Role: "user", Content: "hi"},
		{Role: "user", Content: "try again"},
		{Role: "assistant", Content: "hello"},
	}, msgs)
	withNotes, err := tr.Compile(ctx, tract.IncludeNotes())
	require.NoError(t, err)
	assert.Len(t, withNotes, 5)
	at, err := tr.Compile(ctx, tract.CompileAt("HEAD~4"))
	require.NoError(t, err)
	assert.Len(t, at, 2)
}

func TestCommit_HashesAreReproducibleWithInjectedClock(t *testing.T) {
	a := newTract(t)
	b := newTract(t)
	ha := commitChain(t, a, 5, "same")
	hb := commitChain(t, b, 5, "same")
	assert.Equal(t, ha, hb)
}

func TestCommit_BadInputLeavesNothing(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 2, "base")
	before, err := tr.LogAll(ctx)
	require.NoError(t, err)
	cases := []struct {
		name string
		kind tract.Kind
		role tract.Role
		text string
		opts []tract.CommitOption
		want error
	}{
		{"empty text", tract.KindMessage, tract.RoleUser, "", nil, tract.ErrInvalidText},
		{"invalid UTF-8", tract.KindMessage, tract.RoleUser, "bad \xff\xfe", nil, tract.ErrInvalidText},
		{"metadata array", tract.KindMessage, tract.RoleUser, "x", []tract.CommitOption{tract.WithMetaJSON([]byte(`[1,2]`))}, tract.ErrInvalidMeta},
		{"metadata string", tract.KindMessage, tract.RoleUser, "x", []tract.CommitOption{tract.WithMetaJSON([]byte(`"x"`))}, tract.ErrInvalidMeta},
		{"metadata broken", tract.KindMessage, tract.RoleUser, "x", []tract.CommitOption{tract.WithMetaJSON([]byte(`{bad`))}, tract.ErrInvalidMeta},
		{"unknown kind", tract.Kind("chit-chat"), tract.RoleUser, "x", nil, tract.ErrInvalidKind},
		{"unknown role", tract.KindMessage, tract.Role("narrator"), "x", nil, tract.ErrInvalidRole},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.Commit(ctx, tc.kind, tc.role, tc.text, tc.opts...)
			require.Error(t, err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			after, err := tr.LogAll(ctx)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the failed commit must leave nothing")
		})
	}
}

func TestCommit_DetachedHeadIsRefused(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 3, "m")
	st, err := tr.Checkout(ctx, hs[1].String())
	require.NoError(t, err)
	assert.True(t, st.Detached)
	_, err = tr.User(ctx, "lost?")
	require.ErrorIs(t, err, tract.ErrDetachedHead)
	assert.NotContains(t, err.Error(), "Switch(", "the library states the fact; the remedy is its caller's to give")

	st, err = tr.Switch(ctx, "side", true)
	require.NoError(t, err)
	assert.Equal(t, "side", st.Branch)
	h, err := tr.User(ctx, "on side")
	require.NoError(t, err)
	c, err := tr.Show(ctx, h.String())
	require.NoError(t, err)
	assert.Equal(t, []tract.Hash{hs[1]}, c.Parents)
}

func TestBranch_CreateListDeleteAndNames(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 2, "m")
	_, err := tr.CreateBranch(ctx, "feature/x", "")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "feature/x", "")
	assert.ErrorIs(t, err, tract.ErrBranchExists)
	bs, err := tr.Branches(ctx)
	require.NoError(t, err)
	assert.Equal(t, []tract.Branch{{Name: "feature/x", Hash: hs[1]}, {Name: "main", Hash: hs[1], Current: true}}, bs)

	for _, name := range []string{"has space", "a..b", "-leading", "ctl\x01char", "tab\tname", "", "HEAD", "x.lock"} {
		_, err := tr.CreateBranch(ctx, name, "")
		assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "name %q", name)
		_, err = tr.Switch(ctx, name, true)
		assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "name %q", name)
	}

	_, err = tr.DeleteBranch(ctx, "main")
	assert.ErrorIs(t, err, tract.ErrCurrentBranch)
	_, err = tr.DeleteBranch(ctx, "nope")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
	_, err = tr.DeleteBranch(ctx, "feature/x")
	require.NoError(t, err)
	bs, err = tr.Branches(ctx)
	require.NoError(t, err)
	assert.Len(t, bs, 1)
}

func TestResolve_UnknownAndAmbiguousRevisions(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.Resolve(ctx, "HEAD")
	assert.ErrorIs(t, err, tract.ErrUnknownRevision, "HEAD of an unborn branch")

	// Commit until two hashes share a 4-character prefix.
	seen := map[string]tract.Hash{}
	var prefix string
	for i := 0; prefix == ""; i++ {
		h, err := tr.User(ctx, fmt.Sprintf("message %d", i))
		require.NoError(t, err)
		p := h.String()[:4]
		if _, ok := seen[p]; ok {
			prefix = p
		}
		seen[p] = h
	}
	_, err = tr.Resolve(ctx, prefix)
	var amb *tract.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.Len(t, amb.Candidates, 2)
	assert.Contains(t, err.Error(), "ambiguous")

	for _, rev := range []string{"nope", "deadbeef", "HEAD~100000", "main~x", "~1", "abc"} {
		_, err := tr.Resolve(ctx, rev)
		assert.Error(t, err, rev)
	}
	_, err = tr.Resolve(ctx, "nope")
	assert.ErrorIs(t, err, tract.ErrUnknownRevision)
}

func TestReset_SoftOrphansAndLogAll(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 5, "m")
	res, err := tr.Reset(ctx, "HEAD~2", tract.Soft)
	require.NoError(t, err)
	assert.Equal(t, hs[4], res.From)
	assert.Equal(t, hs[2], res.To)
	assert.Equal(t, 2, res.Orphaned)
	orig, err := tr.Resolve(ctx, "ORIG_HEAD")
	require.NoError(t, err)
	assert.Equal(t, hs[4], orig)

	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, h.Commits, 3)
	require.Len(t, h.Orphans, 1)
	oc := h.Orphans[0]
	assert.Equal(t, hs[2], oc.Fork)
	assert.Equal(t, "reset", oc.Action)
	assert.Equal(t, []string{"m 4", "m 3"}, texts(oc.Commits))

	// The orphans survive gc while the reflog entry is young, and go after.
	rm, err := tr.GC(ctx)
	require.NoError(t, err)
	assert.Zero(t, rm.Commits)
	rm, err = tr.GC(ctx, tract.GCExpiry(0), tract.GCDryRun())
	require.NoError(t, err)
	assert.Equal(t, 2, rm.Commits)
	h, err = tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, h.Orphans, 1, "dry run removes nothing")
}

func TestReset_HardErasesWhatItLeavesBehind(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 2, "m")
	_, err := tr.User(ctx, "my key is sk-leaked-123")
	require.NoError(t, err)
	_, err = tr.Assistant(ctx, "noted")
	require.NoError(t, err)
	res, err := tr.Reset(ctx, "HEAD~2", tract.Hard)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Deleted.Commits)
	assert.Equal(t, 2, res.Deleted.Blobs)
	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, h.Commits, 2)
	assert.Empty(t, h.Orphans)
	for _, c := range h.Commits {
		assert.NotContains(t, c.Text, "sk-leaked")
	}
	_, err = tr.Resolve(ctx, "ORIG_HEAD")
	assert.Error(t, err, "ORIG_HEAD must not point at erased commits")

	// The text is gone from the file too, not only from the index.
	require.NoError(t, tr.Close())
	data, err := os.ReadFile(tr.Path())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "sk-leaked-123")
}

func TestGC_RemovesExpiredOrphans(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 4, "m")
	_, err := tr.Reset(ctx, "HEAD~2", tract.Soft)
	require.NoError(t, err)
	_, err = tr.User(ctx, "after")
	require.NoError(t, err)
	rm, err := tr.GC(ctx, tract.GCExpiry(0))
	require.NoError(t, err)
	assert.Equal(t, 2, rm.Commits)
	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Empty(t, h.Orphans)
	assert.Len(t, h.Commits, 3)

	// What GC deletes is erased from the file's bytes, like a hard reset.
	data, err := os.ReadFile(tr.Path())
	require.NoError(t, err)
	for i := 2; i < 4; i++ {
		assert.NotContains(t, string(data), fmt.Sprintf("m %d", i), "collected text is still in the file")
	}
	assert.Contains(t, string(data), "m 1", "precondition: the text format matched")
}

func TestImport_AllOrNothing(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.Import(ctx, []tract.ImportMessage{
		{Role: tract.RoleUser, Content: "one"},
		{Role: tract.RoleAssistant, Content: ""},
	})
	require.ErrorIs(t, err, tract.ErrInvalidText)
	assert.Contains(t, err.Error(), "message 2")
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Empty(t, log)

	tip, err := tr.Import(ctx, []tract.ImportMessage{
		{Role: tract.RoleSystem, Content: "sys"},
		{Role: tract.RoleUser, Content: "q", Meta: []byte(`{"n": 1}`)},
		{Role: tract.RoleAssistant, Content: "a", Kind: tract.KindNote},
	})
	require.NoError(t, err)
	log, err = tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "q", "sys"}, texts(log))
	assert.Equal(t, tip, log[0].Hash)
}

func TestBlobDedup_SameSystemPromptStoredOnce(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	for i := 0; i < 50; i++ {
		name := fmt.Sprintf("b%d", i)
		_, err := tr.Switch(ctx, name, true)
		require.NoError(t, err)
		_, err = tr.System(ctx, "the same long system prompt")
		require.NoError(t, err)
	}
	blobs := 0
	require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
		return tx.ForEachBlob(func(dag.Hash, []byte) error { blobs++; return nil })
	}))
	assert.Equal(t, 1, blobs)
}

// countingStore counts commit reads, to show Compile reads only new commits.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	reads int
}

type countingTx struct {
	store.Tx
	s *countingStore
}

func (s *countingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(countingTx{tx, s}) })
}

func (tx countingTx) Commit(h dag.Hash) (*dag.Commit, error) {
	tx.s.count()
	return tx.Tx.Commit(h)
}

func (tx countingTx) CommitHeader(h dag.Hash) (dag.Header, error) {
	tx.s.count()
	return tx.Tx.CommitHeader(h)
}

func (s *countingStore) count() {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
}

func (s *countingStore) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.reads
	s.reads = 0
	return n
}

func TestCompile_AfterAppendReadsOnlyNewCommits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	cs := &countingStore{Store: b}
	tr, err := tract.Open(path, tract.WithStore(cs))
	require.NoError(t, err)
	defer tr.Close()
	_, err = tr.Import(ctx, chainMessages(1000))
	require.NoError(t, err)

	_, err = tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1000, cs.take(), "a cold compile reads the chain")

	_, err = tr.User(ctx, "one more")
	require.NoError(t, err)
	cs.take()
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 1001)
	assert.Equal(t, 1, cs.take(), "only the new commit")

	mid, err := tr.Resolve(ctx, "HEAD~500")
	require.NoError(t, err)
	cs.take()
	_, err = tr.Compile(ctx, tract.CompileAt(mid.String()))
	require.NoError(t, err)
	assert.Equal(t, 0, cs.take(), "an ancestor of the cached chain")

	_, err = tr.Reset(ctx, "HEAD~10", tract.Soft)
	require.NoError(t, err)
	_, err = tr.User(ctx, "branching off")
	require.NoError(t, err)
	cs.take()
	msgs, err = tr.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 992)
	assert.Equal(t, 1, cs.take(), "a new commit on an older part of the chain")
}

func chainMessages(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		msgs[i] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("m%d", i)}
	}
	return msgs
}

func TestTract_ConcurrentCommitsFromGoroutines(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				_, err := tr.User(ctx, fmt.Sprintf("g%d-%d", g, i))
				assert.NoError(t, err)
				_, err = tr.Compile(ctx)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 160, "every commit is on the chain: none was lost to a race")
}

// Goroutines of one handle committing on their own branches, while
// others make writes that fail (a branch that exists, a view of a branch
// that does not): the writes run grouped, and a failing one takes none
// of the others down nor makes any of them count twice.
func TestTract_GroupedWritesStayAllOrNothing(t *testing.T) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db")) // durable: grouping happens during the syncs
	require.NoError(t, err)
	defer tr.Close()
	_, err = tr.User(ctx, "root")
	require.NoError(t, err)
	const writers, each = 6, 30
	for g := range writers {
		_, err := tr.CreateBranch(ctx, fmt.Sprintf("w%d", g), "")
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := tr.OnBranch(fmt.Sprintf("w%d", g))
			for i := range each {
				_, err := v.User(ctx, fmt.Sprintf("w%d-%d", g, i))
				assert.NoError(t, err)
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			missing := tr.OnBranch("missing")
			for i := range each {
				_, err := tr.CreateBranch(ctx, "w0", "")
				assert.ErrorIs(t, err, tract.ErrBranchExists)
				_, err = missing.User(ctx, fmt.Sprintf("lost %d", i))
				assert.ErrorIs(t, err, tract.ErrBranchNotFound)
			}
		}()
	}
	wg.Wait()
	for g := range writers {
		name := fmt.Sprintf("w%d", g)
		log, err := tr.OnBranch(name).Log(ctx)
		require.NoError(t, err)
		require.Len(t, log, each+1, name)
		for i, ci := range log[:each] {
			assert.Equal(t, fmt.Sprintf("w%d-%d", g, each-1-i), ci.Text, "%s: in order, once each", name)
		}
		es, err := tr.Reflog(ctx, name)
		require.NoError(t, err)
		assert.Len(t, es, each+1, "%s: one reflog entry per commit, and the branch's own", name)
	}
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

func TestOpen_Errors(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		_, err := tract.Open(filepath.Join(dir, "missing.db"))
		assert.ErrorIs(t, err, tract.ErrNotRepository)
		assert.Contains(t, err.Error(), "no such file")
	})
	t.Run("not a database", func(t *testing.T) {
		p := filepath.Join(dir, "junk.db")
		require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("not bbolt ", 2000)), 0o600))
		_, err := tract.Open(p)
		assert.ErrorIs(t, err, tract.ErrNotRepository)
	})
	t.Run("already exists", func(t *testing.T) {
		p := filepath.Join(dir, "twice.db")
		tr, err := tract.Init(p)
		require.NoError(t, err)
		require.NoError(t, tr.Close())
		_, err = tract.Init(p)
		assert.ErrorIs(t, err, tract.ErrExists)
	})
	t.Run("newer schema", func(t *testing.T) {
		p := filepath.Join(dir, "newer.db")
		b, err := store.OpenBolt(p, store.BoltOptions{Create: true})
		require.NoError(t, err)
		require.NoError(t, b.SetSchemaVersion(store.SchemaVersion+1))
		require.NoError(t, b.Close())
		_, err = tract.Open(p)
		assert.ErrorIs(t, err, tract.ErrNewerSchema)
		assert.Contains(t, err.Error(), "upgrade tract")
	})
	t.Run("locked by another holder", func(t *testing.T) {
		p := filepath.Join(dir, "locked.db")
		tr, err := tract.Init(p)
		require.NoError(t, err)
		defer tr.Close()
		defer storetest.HoldWrite(t, tr.Store())() // released before the deferred Close
		_, err = tract.Open(p, tract.WithLockTimeout(100*time.Millisecond))
		var le *tract.LockedError
		require.ErrorAs(t, err, &le, "Open reads the file, so it waits for the transaction")
		assert.Equal(t, p, le.Path)
		assert.Contains(t, err.Error(), "locked")
	})
	t.Run("file mode 0600", func(t *testing.T) {
		p := filepath.Join(dir, "mode.db")
		tr, err := tract.Init(p)
		require.NoError(t, err)
		require.NoError(t, tr.Close())
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	})
	t.Run("closed", func(t *testing.T) {
		tr, err := tract.Init(filepath.Join(dir, "closed.db"))
		require.NoError(t, err)
		require.NoError(t, tr.Close())
		ctx := context.Background()
		_, err = tr.Log(ctx)
		assert.ErrorIs(t, err, tract.ErrClosed)
		// Without a client too: the handle is closed before it lacks one.
		_, err = tr.Chat(ctx, "hi")
		assert.ErrorIs(t, err, tract.ErrClosed)
		_, err = tr.Generate(ctx)
		assert.ErrorIs(t, err, tract.ErrClosed)
	})
	t.Run("cancelled", func(t *testing.T) {
		tr, err := tract.Init(filepath.Join(dir, "cancelled.db"))
		require.NoError(t, err)
		defer tr.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = tr.Status(ctx)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestFsck_ReportsCorruptionWithoutPanicking(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "tract.db")
	tr, err := tract.Init(p)
	require.NoError(t, err)
	_, err = tr.Import(ctx, chainMessages(2000))
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	data, err := os.ReadFile(p)
	require.NoError(t, err)

	t.Run("truncated", func(t *testing.T) {
		q := filepath.Join(dir, "truncated.db")
		require.NoError(t, os.WriteFile(q, data[:len(data)/2], 0o600))
		checkDamaged(t, q)
	})
	t.Run("overwritten middle", func(t *testing.T) {
		q := filepath.Join(dir, "scribbled.db")
		bad := append([]byte(nil), data...)
		for i := len(bad) / 3; i < len(bad)/3+8192 && i < len(bad); i++ {
			bad[i] = byte(i * 7)
		}
		require.NoError(t, os.WriteFile(q, bad, 0o600))
		checkDamaged(t, q)
	})
}

// checkDamaged opens a damaged file: either Open refuses it, or Fsck and Log
// report problems; nothing may panic.
func checkDamaged(t *testing.T, path string) {
	t.Helper()
	tr, err := tract.Open(path)
	if err != nil {
		assert.NotContains(t, err.Error(), "goroutine")
		return
	}
	defer tr.Close()
	r, err := tr.Fsck(context.Background())
	if err == nil {
		assert.False(t, r.OK(), "fsck must notice the damage")
	}
	_, _ = tr.Log(context.Background())
	_, _ = tr.LogAll(context.Background())
}

func TestFindRepository_WalksUp(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, tract.DefaultDir, tract.DefaultFile)
	tr, err := tract.Init(p)
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	sub := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	got, err := tract.FindRepository(sub)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	_, err = tract.FindRepository(t.TempDir())
	assert.ErrorIs(t, err, tract.ErrNotRepository)
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	st, err := tr.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", st.Branch)
	assert.True(t, st.Head.IsZero())
	commitChain(t, tr, 3, "m")
	_, err = tr.Note(ctx, "n")
	require.NoError(t, err)
	st, err = tr.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, st.Length)
	assert.Equal(t, 3, st.Messages)
}
