package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

// openAgain opens the repository of s a second time: another pool, as
// another process has.
func openAgain(t *testing.T, s *postgres.Store) *postgres.Store {
	t.Helper()
	o, err := postgres.Open(context.Background(), urlOf(t, s))
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	return o
}

// commitOn appends a commit of text to branch as tract does: it reads the
// branch (locking it), puts the text and the commit, moves the branch,
// appends to its reflog, and appends to HEAD's too when HEAD names the
// branch.
func commitOn(s store.Store, branch, text string) error {
	return s.Update(context.Background(), func(tx store.Tx) error {
		var parents []dag.Hash
		old, err := tx.Ref(branch)
		if err == nil {
			parents = []dag.Hash{old.Hash}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		blob, err := tx.PutBlob([]byte(text))
		if err != nil {
			return err
		}
		h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Parents: parents, Time: time.Now()})
		if err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: branch, Hash: h}); err != nil {
			return err
		}
		e := refs.Entry{Old: old.Hash, New: h, Action: refs.ActionCommit, Message: text}
		if err := tx.AppendReflog(branch, e); err != nil {
			return err
		}
		head, err := tx.Ref(refs.HEAD)
		if err != nil || head.Target != branch {
			return err
		}
		return tx.AppendReflog(refs.HEAD, e)
	})
}

// Writers of different branches of one repository do not wait for each
// other: while one is inside its transaction, having read (and locked) its
// branch, a writer of another branch, on another pool, commits and
// returns.
func TestUpdate_WritersOfOtherBranchesOverlap(t *testing.T) {
	s := pgtest.NewUnchecked(t, pgtest.URL(t))
	other := openAgain(t, s)
	require.NoError(t, commitOn(s, "refs/heads/a", "a0"))
	require.NoError(t, commitOn(s, "refs/heads/b", "b0"))

	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo()
	held := make(chan error, 1)
	go func() {
		held <- s.Update(context.Background(), func(tx store.Tx) error {
			r, err := tx.Ref("refs/heads/a")
			if err != nil {
				return err
			}
			close(inside)
			<-release
			return tx.SetRef(refs.Ref{Name: "refs/heads/a", Hash: dag.Sum(r.Hash[:])})
		})
	}()
	<-inside
	require.NoError(t, commitOn(other, "refs/heads/b", "b1"), "a writer of another branch commits meanwhile")
	letGo()
	require.NoError(t, <-held)
	require.NoError(t, other.View(context.Background(), func(tx store.Tx) error {
		es, err := tx.Reflog("refs/heads/b")
		require.NoError(t, err)
		require.Len(t, es, 2)
		assert.Equal(t, "b1", es[1].Message)
		return nil
	}))
}

// Several writers, each with a pool of its own (as processes have), commit
// on their own branches at once, and one more on HEAD's: every commit is
// kept, each branch is one chain whose reflog names every move in order,
// HEAD's reflog has the moves of its branch, and the word index (its
// documents added unnumbered, then numbered) finds every text.
func TestUpdate_WritersOnTheirOwnBranchesLoseNothing(t *testing.T) {
	s := pgtest.New(t, pgtest.URL(t))
	const writers, each = 6, 15
	branches := []string{refs.BranchRef("main")} // HEAD's
	for i := range writers - 1 {
		branches = append(branches, refs.BranchRef(fmt.Sprintf("w%d", i)))
	}
	var wg sync.WaitGroup
	for _, branch := range branches {
		st := openAgain(t, s)
		wg.Go(func() {
			for j := range each {
				assert.NoError(t, commitOn(st, branch, fmt.Sprintf("%s message%d", branch, j)))
			}
		})
	}
	wg.Wait()
	check := func() {
		require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
			for _, branch := range branches {
				es, err := tx.Reflog(branch)
				require.NoError(t, err)
				require.Len(t, es, each, branch)
				for j, e := range es {
					assert.Equal(t, fmt.Sprintf("%s message%d", branch, j), e.Message)
					if j > 0 {
						assert.Equal(t, es[j-1].New, e.Old, "%s: entry %d follows the one before", branch, j)
					}
				}
				r, err := tx.Ref(branch)
				require.NoError(t, err)
				assert.Equal(t, es[each-1].New, r.Hash, branch)
				chain, err := store.ReadChain(tx, r.Hash, 2*each, dag.Hash{})
				require.NoError(t, err)
				assert.Len(t, chain, each, "%s is one chain of its commits", branch)
			}
			head, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Len(t, head, each, "HEAD's reflog has its branch's moves")
			for _, j := range []int{0, each - 1} {
				var found []dag.Hash
				ok, err := tx.(store.WordIndexTx).WordMatches([]store.WordTerm{{Word: "message" + fmt.Sprint(j)}},
					func(h dag.Hash, _ time.Time) (bool, error) { found = append(found, h); return true, nil })
				require.NoError(t, err)
				require.True(t, ok)
				assert.Len(t, found, len(branches), "every branch's message%d is found", j)
			}
			return nil
		}))
		problem, _, err := s.CheckWordIndex(context.Background())
		require.NoError(t, err)
		assert.Empty(t, problem)
	}
	check()
	postgres.SettleWords(s)
	check()
}

// Two writers read a branch that does not exist yet, and both make it:
// the one that commits second finds, on writing, that the other made it
// meanwhile (a row it could not lock when it read), and runs again,
// seeing it.
func TestUpdate_RefMadeMeanwhileRunsAgain(t *testing.T) {
	s := pgtest.NewUnchecked(t, pgtest.URL(t))
	other := openAgain(t, s)
	const name = "refs/heads/new"
	mine, theirs := dag.Sum([]byte("mine")), dag.Sum([]byte("theirs"))
	read, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(tx store.Tx) error {
			_, err := tx.Ref(name)
			if runs.Add(1) == 1 {
				close(read)
				<-release
			}
			if err == nil {
				return store.ErrExists
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return tx.SetRef(refs.Ref{Name: name, Hash: mine})
		})
	}()
	<-read
	require.NoError(t, other.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.Ref(name); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("ref %s: want missing, got %w", name, err)
		}
		return tx.SetRef(refs.Ref{Name: name, Hash: theirs})
	}), "the other writer does not wait: there was no row to lock")
	close(release)
	assert.ErrorIs(t, <-done, store.ErrExists, "the second run saw the branch made")
	assert.Equal(t, int32(2), runs.Load())
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		r, err := tx.Ref(name)
		assert.Equal(t, theirs, r.Hash)
		return err
	}))
}

// HEAD is read without its lock (writers of every branch read it): a
// writer that moves HEAD after another moved it since it read it runs
// again, and sees the other's move.
func TestUpdate_SymbolicRefMovedMeanwhileRunsAgain(t *testing.T) {
	s := pgtest.NewUnchecked(t, pgtest.URL(t))
	other := openAgain(t, s)
	read, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	var saw []string
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(tx store.Tx) error {
			head, err := tx.Ref(refs.HEAD)
			if err != nil {
				return err
			}
			saw = append(saw, head.Target)
			if runs.Add(1) == 1 {
				close(read)
				<-release
			}
			return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: refs.BranchRef("mine")})
		})
	}()
	<-read
	require.NoError(t, other.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.Ref(refs.HEAD); err != nil {
			return err
		}
		return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: refs.BranchRef("theirs")})
	}))
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, []string{refs.BranchRef("main"), refs.BranchRef("theirs")}, saw, "the second run read the other's move")
}

// A write that deletes an object needs the repository to itself: it takes
// it exclusively there and then, which waits for a writer at work (here
// one holding it exclusively too) and keeps every writer out until it
// ends. One that holds a ref locked by then runs again from the start,
// exclusively (taking the repository while it holds a ref could deadlock
// with a writer waiting for that ref).
func TestUpdate_DeletesRunExclusively(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base)
	other := openAgain(t, s)
	var hs []dag.Hash
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		for _, text := range []string{"doomed", "doomed too"} {
			h, err := tx.PutBlob([]byte(text))
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[0]})
	}))
	release := storetest.HoldWrite(t, other)
	var runs atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(tx store.Tx) error {
			runs.Add(1)
			return tx.DeleteBlob(hs[0])
		})
	}()
	waitForLockWaiter(t, base)
	release()
	require.NoError(t, <-done)
	assert.Equal(t, int32(1), runs.Load(), "taken exclusively in place")

	runs.Store(0)
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		runs.Add(1)
		if _, err := tx.Ref("refs/heads/main"); err != nil {
			return err
		}
		return tx.DeleteBlob(hs[1])
	}))
	assert.Equal(t, int32(2), runs.Load(), "run shared, then again exclusively")
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		for _, h := range hs {
			ok, err := tx.HasBlob(h)
			require.NoError(t, err)
			assert.False(t, ok)
		}
		return nil
	}))
}

// A writer that needs the repository exclusively gets it while writers on
// their own branches keep committing: the writers that come after it
// queue behind it, rather than sharing the repository with the ones
// before it for as long as they keep coming.
func TestUpdate_ExclusiveWriterIsNotStarved(t *testing.T) {
	s := pgtest.New(t, pgtest.URL(t))
	var stop atomic.Bool
	var commits atomic.Int32
	var wg sync.WaitGroup
	for i := range 4 {
		st := openAgain(t, s)
		wg.Go(func() {
			for j := 0; !stop.Load(); j++ {
				assert.NoError(t, commitOn(st, fmt.Sprintf("refs/heads/w%d", i), fmt.Sprintf("w%d %d", i, j)))
				commits.Add(1)
			}
		})
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	for commits.Load() < 20 {
		runtime.Gosched()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.Refs() // takes the repository exclusively
		return err
	}), "the exclusive writer got the repository while the others committed")
	stop.Store(true)
	wg.Wait()
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		n := 0
		for i := range 4 {
			es, err := tx.Reflog(fmt.Sprintf("refs/heads/w%d", i))
			require.NoError(t, err)
			n += len(es)
		}
		assert.Equal(t, int(commits.Load()), n, "every commit is kept")
		return nil
	}))
}
