package tract_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// A repository in PostgreSQL opens by URL exactly as a file opens by
// path: Init, Open, OpenOrInit, FsckFile and OpenStore.
func TestDatabaseURL_OpensLikeAPath(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	require.True(t, tract.IsDatabaseURL(db))

	_, err := tract.Open(db)
	require.ErrorIs(t, err, tract.ErrNotRepository)

	r, err := tract.OpenOrInit(db, tract.WithClock(fixedClock()))
	require.NoError(t, err)
	assert.Equal(t, tract.Redact(db), r.Path())
	assert.Contains(t, r.Path(), ":xxxxx@")
	_, err = r.System(ctx, "You are terse.")
	require.NoError(t, err)
	_, err = r.User(ctx, "What is 2+2?")
	require.NoError(t, err)
	require.NoError(t, r.Close())

	_, err = tract.Init(db)
	require.ErrorIs(t, err, tract.ErrExists)

	r, err = tract.OpenOrInit(db)
	require.NoError(t, err, "OpenOrInit opens what is there")
	msgs, err := r.Compile(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "What is 2+2?", msgs[1].Content)
	require.NoError(t, r.Close())

	rep, err := tract.FsckFile(ctx, db)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 2, rep.Commits)

	st, err := tract.OpenStore(ctx, db, false)
	require.NoError(t, err)
	assert.IsType(t, &postgres.Store{}, st)
	require.NoError(t, st.Close())

	r, err = tract.Open(db)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Compact(ctx)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = tract.Salvage(ctx, db, t.TempDir()+"/new.db")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// Two handles (as two processes on two machines would have) commit on
// one branch at once, many times: no commit is lost and the branch is
// one chain, as with a file.
func TestDatabaseURL_ConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	first, err := tract.Init(db)
	require.NoError(t, err)
	defer first.Close()
	second, err := tract.Open(db)
	require.NoError(t, err)
	defer second.Close()

	const perWriter = 15
	var wg sync.WaitGroup
	for _, w := range []*tract.Tract{first, second} {
		wg.Go(func() {
			for range perWriter {
				_, err := w.User(ctx, "hello")
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	log, err := first.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 2*perWriter, "every commit is on the branch")
	rep, err := first.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

func TestMigrate_RefusesAFile(t *testing.T) {
	_, err := tract.Migrate(context.Background(), t.TempDir()+"/tract.db")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// A connection lost while a command reads a commit fails with the
// server's error, which names the commit once: "commit: commit 128a56e9:
// lost the connection …", not "commit 128a56e9: commit 128a56e9: …".
func TestDatabaseURL_LostConnectionNamesTheCommitOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	r, err := tract.Init(db)
	require.NoError(t, err)
	first, err := r.User(ctx, "first")
	require.NoError(t, err)
	_, err = r.Assistant(ctx, "second")
	require.NoError(t, err)
	require.NoError(t, r.Close())

	repeated := regexp.MustCompile(`(commit [0-9a-f]{8}): (read [a-z ]+: )?(commit [0-9a-f]{8}): `)
	ops := []struct {
		name string
		do   func(*tract.Tract) error
		// named is what the error names before the server's words.
		named string
		// at is the read whose reply never comes: the first of a
		// commit, or of counters, that the operation asks the server
		// for (what a transaction wrote itself, it does not ask).
		at string
	}{
		// A commit asks for nothing after the refs it reads (it knows
		// the counters of what it put are not there): the last writes,
		// sent with COMMIT.
		{"commit", func(r *tract.Tract) error { _, err := r.User(ctx, "third"); return err }, `^commit: ((commit|counters) [0-9a-f]{8}: (write: )?|postgres://[^ ]+: commit: )lost the connection`,
			"INSERT INTO tract_words"},
		{"reset", func(r *tract.Tract) error { _, err := r.Reset(ctx, first.String(), tract.Soft); return err }, `^reset: (commit|counters) [0-9a-f]{8}: lost the connection`,
			"SELECT raw FROM tract_commits"},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			p := pgtest.NewProxy(t, db)
			r, err := tract.Open(pgtest.WithParam(t, p.URL(t, db), "reply_timeout", "1m"))
			require.NoError(t, err)
			defer r.Close()
			// The reply to the first read of a commit (or its counters)
			// never comes: the connection breaks while the command waits
			// for it.
			p.FreezeAt([]byte(op.at))
			go func() {
				<-p.Held()
				p.Cut()
				p.Thaw()
			}()
			err = op.do(r)
			// The read may travel with the transaction's COMMIT (queued
			// work goes with the next round trip), and a connection lost
			// there leaves the commit's outcome unknown.
			if !errors.Is(err, postgres.ErrCommitUnknown) {
				require.ErrorIs(t, err, postgres.ErrConnectionLost)
			}
			assert.ErrorContains(t, err, "lost the connection")
			assert.NotRegexp(t, repeated, err.Error())
			assert.Regexp(t, op.named, err.Error())
		})
	}
}

// Writers on their own branches of one repository in PostgreSQL, each
// with a handle of its own (as processes have), commit at once, while one
// more commits on HEAD's branch: every commit is on its branch in order,
// each branch's reflog names its moves one after the other, HEAD's has
// its branch's, the repository checks clean (its word index included),
// and a search finds every branch's messages.
func TestPostgres_WritersOnTheirOwnBranchesLoseNothing(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	tr, err := tract.Init(db)
	require.NoError(t, err)
	defer tr.Close()
	_, err = tr.User(ctx, "root")
	require.NoError(t, err)
	const writers, each = 6, 12
	names := []string{""} // HEAD's branch
	for i := range writers - 1 {
		name := fmt.Sprintf("w%d", i)
		_, err := tr.CreateBranch(ctx, name, "")
		require.NoError(t, err)
		names = append(names, name)
	}
	var wg sync.WaitGroup
	for _, name := range names {
		h, err := tract.Open(db)
		require.NoError(t, err)
		defer h.Close()
		w := h
		if name != "" {
			w = h.OnBranch(name)
		}
		wg.Go(func() {
			for j := range each {
				_, err := w.User(ctx, fmt.Sprintf("writer%s says number%d", name, j))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()

	for _, name := range names {
		v := tr
		if name != "" {
			v = tr.OnBranch(name)
		}
		log, err := v.Log(ctx)
		require.NoError(t, err)
		require.Len(t, log, each+1, "every commit is on branch %q", name)
		for j, c := range log[:each] {
			assert.Equal(t, fmt.Sprintf("writer%s says number%d", name, each-1-j), c.Text)
		}
		ref := "main"
		if name != "" {
			ref = name
		}
		moves, err := tr.Reflog(ctx, ref)
		require.NoError(t, err)
		for i := 0; i+1 < len(moves); i++ {
			assert.Equal(t, moves[i+1].New, moves[i].Old, "%s@{%d} moves on from the move before", ref, i)
		}
		assert.Equal(t, log[0].Hash, moves[0].New, ref)
	}
	head, err := tr.Reflog(ctx, "HEAD")
	require.NoError(t, err)
	assert.Len(t, head, each+1, "HEAD's reflog has its branch's moves, the root's included")

	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	q, err := search.ParseQuery("number0")
	require.NoError(t, err)
	found := 0
	for c, err := range tr.Search(ctx, q) {
		require.NoError(t, err)
		assert.Contains(t, c.Text, "number0")
		found++
	}
	assert.Equal(t, writers, found, "a search finds every writer's first message")
}

// What takes the repository to itself (gc expiring every reflog entry, a
// hard reset, a deletion of a branch) runs while writers on their own
// branches commit: the writers wait for it, or it for them, and no commit
// of theirs is lost; what gc deletes is what the resets orphaned.
func TestPostgres_GCAndResetsBesideWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	tr, err := tract.Init(db)
	require.NoError(t, err)
	defer tr.Close()
	root, err := tr.User(ctx, "root")
	require.NoError(t, err)
	const writers, each = 4, 15
	for i := range writers {
		_, err := tr.CreateBranch(ctx, fmt.Sprintf("w%d", i), "")
		require.NoError(t, err)
	}
	_, err = tr.CreateBranch(ctx, "scratch", "")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range writers {
		h, err := tract.Open(db)
		require.NoError(t, err)
		defer h.Close()
		w := h.OnBranch(fmt.Sprintf("w%d", i))
		wg.Go(func() {
			for j := range each {
				_, err := w.User(ctx, fmt.Sprintf("w%d says %d", i, j))
				assert.NoError(t, err)
			}
		})
	}
	h, err := tract.Open(db)
	require.NoError(t, err)
	defer h.Close()
	scratch := h.OnBranch("scratch")
	orphaned := 0
	wg.Go(func() {
		for round := range 4 {
			for j := range 3 {
				_, err := scratch.User(ctx, fmt.Sprintf("scratch %d.%d", round, j))
				assert.NoError(t, err)
			}
			_, err := scratch.Reset(ctx, root.String(), tract.Hard)
			assert.NoError(t, err)
			orphaned += 3
			_, err = h.CreateBranch(ctx, fmt.Sprintf("temp%d", round), "w0")
			assert.NoError(t, err)
			_, err = h.DeleteBranch(ctx, fmt.Sprintf("temp%d", round))
			assert.NoError(t, err)
			_, err = h.GC(ctx, tract.GCExpiry(0))
			assert.NoError(t, err)
		}
	})
	wg.Wait()

	for i := range writers {
		log, err := tr.OnBranch(fmt.Sprintf("w%d", i)).Log(ctx)
		require.NoError(t, err)
		require.Len(t, log, each+1, "every commit of w%d is kept", i)
		assert.Equal(t, fmt.Sprintf("w%d says %d", i, each-1), log[0].Text)
	}
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 1+writers*each, rep.Commits, "the resets' %d orphans are gone, nothing else", orphaned)
}
