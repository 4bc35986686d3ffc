package store

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// groupStore opens a new file store (durable: grouping matters where
// syncs are paid for).
func groupStore(t *testing.T) (*Bolt, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := OpenBolt(path, BoltOptions{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b, path
}

// queuedWrites is how many write transactions wait in b's write group.
func queuedWrites(b *Bolt) int {
	b.ss.mu.Lock()
	s := b.ss.cur
	b.ss.mu.Unlock()
	if s == nil {
		return 0
	}
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

// groupOf runs fns as concurrent Updates of b, the first one's function
// held until all the others have queued behind it, so that they join its
// transaction. It returns each Update's error, or its panic as an error
// wrapping errPanicked, or errGoexited for a goroutine that ended in it.
func groupOf(t *testing.T, b *Bolt, fns ...func(Tx) error) []error {
	t.Helper()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	run := func(i int, fn func(Tx) error) {
		defer wg.Done()
		returned := false
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("%w: %v", errPanicked, r)
			} else if !returned {
				errs[i] = errGoexited
			}
		}()
		errs[i] = b.Update(context.Background(), fn)
		returned = true
	}
	started := make(chan struct{})
	wg.Add(1)
	go run(0, func(tx Tx) error {
		select {
		case <-started:
		default:
			close(started)
			deadline := time.Now().Add(10 * time.Second)
			for queuedWrites(b) < len(fns)-1 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
		}
		return fns[0](tx)
	})
	<-started
	for i, fn := range fns[1:] {
		wg.Add(1)
		go run(i+1, fn)
	}
	wg.Wait()
	return errs
}

var (
	errPanicked = errors.New("panicked")
	errGoexited = errors.New("the goroutine ended")
)

// Concurrent writes of one handle run in one transaction: one sync for
// all of them.
func TestGroup_ConcurrentWritesShareATransaction(t *testing.T) {
	b, _ := groupStore(t)
	var mu sync.Mutex
	txs := map[*bolt.Tx]int{}
	put := func(i int) func(Tx) error {
		return func(tx Tx) error {
			mu.Lock()
			txs[tx.(*boltTx).tx]++
			mu.Unlock()
			_, err := tx.PutBlob([]byte(fmt.Sprintf("blob %d", i)))
			return err
		}
	}
	errs := groupOf(t, b, put(0), put(1), put(2), put(3), put(4))
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Len(t, txs, 1, "every write ran in the same transaction")
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		for i := range 5 {
			ok, err := tx.HasBlob(dag.Sum([]byte(fmt.Sprintf("blob %d", i))))
			require.NoError(t, err)
			assert.True(t, ok, "blob %d", i)
		}
		return nil
	}))
}

// A write that fails or panics in a group takes none of the others down:
// they commit, it gets its own error (or panic) and leaves nothing
// behind. The others' functions run again in a new transaction, so
// what they wrote is there once.
func TestGroup_AFailingWriteTakesNoOtherDown(t *testing.T) {
	b, _ := groupStore(t)
	errOwn := errors.New("this write fails")
	var runs [5]atomic.Int32
	write := func(i int, end func() error) func(Tx) error {
		return func(tx Tx) error {
			runs[i].Add(1)
			name := fmt.Sprintf("refs/heads/w%d", i)
			if err := tx.SetRef(refs.Ref{Name: name, Hash: dag.Sum([]byte(name))}); err != nil {
				return err
			}
			if err := tx.AppendReflog(name, refs.Entry{Action: refs.ActionCommit, Message: name}); err != nil {
				return err
			}
			if _, err := tx.PutBlob([]byte(name)); err != nil {
				return err
			}
			return end()
		}
	}
	ok := func() error { return nil }
	errs := groupOf(t, b,
		write(0, ok),
		write(1, func() error { return errOwn }),
		write(2, ok),
		write(3, func() error { panic("write 3 panics") }),
		write(4, ok),
	)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], errOwn)
	assert.NoError(t, errs[2])
	assert.ErrorIs(t, errs[3], errPanicked)
	assert.ErrorContains(t, errs[3], "write 3 panics", "the panic reaches its own caller")
	assert.NoError(t, errs[4])
	assert.Equal(t, int32(3), runs[0].Load(), "the first write ran in each group that rolled back, and in the one that committed")
	assert.Equal(t, int32(2), runs[1].Load(), "the failing write ran in the group, then alone")
	assert.Equal(t, int32(2), runs[3].Load(), "the panicking write ran in the group, then alone")
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		for i := range 5 {
			name := fmt.Sprintf("refs/heads/w%d", i)
			committed := i != 1 && i != 3
			_, err := tx.Ref(name)
			if committed {
				assert.NoError(t, err, name)
			} else {
				assert.ErrorIs(t, err, ErrNotFound, name)
			}
			es, err := tx.Reflog(name)
			require.NoError(t, err)
			if committed {
				assert.Len(t, es, 1, "%s: the rolled-back run left no entry", name)
			} else {
				assert.Empty(t, es, name)
			}
			has, err := tx.HasBlob(dag.Sum([]byte(name)))
			require.NoError(t, err)
			assert.Equal(t, committed, has, name)
		}
		return nil
	}))
}

// A function that ends its goroutine (runtime.Goexit, as a test's
// FailNow does) ends its caller's, not the leader's: the others commit,
// and it leaves nothing behind.
func TestGroup_AWriteThatEndsItsGoroutineTakesNoOtherDown(t *testing.T) {
	b, _ := groupStore(t)
	put := func(text string) func(Tx) error {
		return func(tx Tx) error { _, err := tx.PutBlob([]byte(text)); return err }
	}
	errs := groupOf(t, b, put("first"), func(tx Tx) error {
		if _, err := tx.PutBlob([]byte("gone")); err != nil {
			return err
		}
		runtime.Goexit()
		return nil
	}, put("third"))
	assert.NoError(t, errs[0], "the leader's caller returned")
	assert.ErrorIs(t, errs[1], errGoexited)
	assert.NoError(t, errs[2])
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		for text, want := range map[string]bool{"first": true, "gone": false, "third": true} {
			ok, err := tx.HasBlob(dag.Sum([]byte(text)))
			require.NoError(t, err)
			assert.Equal(t, want, ok, text)
		}
		return nil
	}))
}

// A write alone runs once, whether it succeeds, fails or panics: its
// failure is its own.
func TestGroup_AloneRunsOnce(t *testing.T) {
	b, _ := groupStore(t)
	errOwn := errors.New("fails")
	var runs atomic.Int32
	err := b.Update(context.Background(), func(tx Tx) error {
		runs.Add(1)
		_, err := tx.PutBlob([]byte("kept out"))
		require.NoError(t, err)
		return errOwn
	})
	assert.ErrorIs(t, err, errOwn)
	assert.Equal(t, int32(1), runs.Load())
	assert.PanicsWithValue(t, "alone", func() {
		_ = b.Update(context.Background(), func(Tx) error {
			runs.Add(1)
			panic("alone")
		})
	})
	assert.Equal(t, int32(2), runs.Load())
	// The group is free again: the next write is not stuck behind them.
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("kept out")))
		assert.False(t, ok)
		return err
	}))
}

// A grouped write that deletes text has the file's free pages wiped before
// its Update returns, as a write alone does.
func TestGroup_ErasureCompletesBeforeReturn(t *testing.T) {
	b, path := groupStore(t)
	// Random bytes: kept as they are (compression would not make them
	// smaller), so a search of the raw file finds them while stored.
	secret := make([]byte, 120)
	_, _ = crand.Read(secret)
	secret = append([]byte("grouped secret: "), secret...)
	ctx := context.Background()
	require.NoError(t, b.Update(ctx, func(tx Tx) error { _, err := tx.PutBlob(secret); return err }))
	for i := range 4 {
		require.NoError(t, b.Update(ctx, func(tx Tx) error {
			_, err := tx.PutBlob(bytes.Repeat([]byte("filler "), 100*(i+1)))
			return err
		}))
	}
	has := func() bool {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return bytes.Contains(data, secret)
	}
	require.True(t, has(), "precondition: the text is in the file")
	put := func(i int) func(Tx) error {
		return func(tx Tx) error { _, err := tx.PutBlob([]byte(fmt.Sprintf("other %d", i))); return err }
	}
	errs := groupOf(t, b, put(0), func(tx Tx) error {
		return tx.DeleteBlob(dag.Sum(secret))
	}, put(2))
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.False(t, has(), "the deleted text is still in the file after its Update returned")
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		ok, err := tx.HasBlob(dag.Sum(secret))
		assert.False(t, ok)
		return err
	}))
}

// A background write waits for the handle's writes to pause: the signal
// it waits for comes when a group ends with none queued behind it, and
// not before; with none running it goes on at once.
func TestGroup_YieldWaitsForThePause(t *testing.T) {
	b, _ := groupStore(t)
	ctx := context.Background()
	require.NoError(t, b.Update(ctx, func(Tx) error { return nil })) // a session, idle
	b.ss.mu.Lock()
	s := b.ss.cur
	b.ss.mu.Unlock()
	require.NotNil(t, s)
	assert.Nil(t, s.group.quietCh(), "no write runs: nothing to wait for")

	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- b.Update(ctx, func(Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	quiet := s.group.quietCh()
	require.NotNil(t, quiet, "a write runs")
	yielded := make(chan struct{})
	go func() {
		b.yieldToWrites(ctx)
		close(yielded)
	}()
	select {
	case <-quiet:
		t.Fatal("the pause came while the write ran")
	default:
	}
	close(release)
	require.NoError(t, <-done)
	select {
	case <-quiet:
	default:
		t.Fatal("the write returned, and the pause was not signalled")
	}
	<-yielded
	assert.Nil(t, s.group.quietCh())
}

// A write that others wait for leaves the journal's checkpoint due, up
// to twice its bounds, to a transaction of the handle's background: a
// group of writes returns with the checkpoint due, the background does
// it, and past twice the bounds a crowded write does it itself.
func TestGroup_ACrowdedTransactionLeavesItsUpkeepToTheBackground(t *testing.T) {
	b, _ := groupStore(t)
	b.journal = journalPolicy{records: 2, bytes: 1 << 20, recordBytes: 64 << 10, carryBytes: 16 << 10}
	ctx := context.Background()
	put := func(name string) func(Tx) error {
		return func(tx Tx) error {
			_, err := tx.PutBlob([]byte(name))
			return err
		}
	}
	records := func() (n int) {
		require.NoError(t, b.View(ctx, func(tx Tx) error {
			n, _ = tx.(*boltTx).journal().size()
			return nil
		}))
		return n
	}
	require.NoError(t, b.Update(ctx, put("alone")))
	require.Equal(t, 1, records())
	checkpointed, err := writeBlob(b, "crowded", true, nil)
	require.NoError(t, err)
	assert.False(t, checkpointed, "others waited for the write")
	assert.Equal(t, 2, records(), "the bound reached, the checkpoint left due")
	require.NoError(t, b.upkeep(ctx))
	assert.Zero(t, records(), "the background's transaction checkpointed")

	require.NoError(t, b.Update(ctx, put("before")))
	for _, err := range groupOf(t, b, put("first"), put("second")) {
		require.NoError(t, err)
	}
	b.background.done.Wait()
	assert.Zero(t, records(), "the group left the checkpoint to the background, which did it")

	for i, want := range []bool{false, false, false, true} {
		checkpointed, err := writeBlob(b, fmt.Sprint("crowded ", i), true, nil)
		require.NoError(t, err)
		assert.Equal(t, want, checkpointed, "crowded write %d, at twice the bound", i)
	}
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		for _, name := range []string{"alone", "crowded", "before", "first", "second", "crowded 0", "crowded 3"} {
			ok, err := tx.HasBlob(dag.Sum([]byte(name)))
			require.NoError(t, err)
			assert.True(t, ok, name)
		}
		return nil
	}))
}

// A handle whose writes come one after another does its upkeep in them;
// one whose writes came concurrently a moment ago leaves it to the
// background, even from a write none waits for.
func TestGroup_ConcurrentWritesLeaveTheUpkeepAMoment(t *testing.T) {
	b, _ := groupStore(t)
	b.ss.mu.Lock()
	s := b.ss.cur
	b.ss.mu.Unlock()
	if s == nil {
		require.NoError(t, b.Update(context.Background(), func(tx Tx) error { _, err := tx.PutBlob([]byte("open")); return err }))
		b.ss.mu.Lock()
		s = b.ss.cur
		b.ss.mu.Unlock()
	}
	require.NotNil(t, s)
	assert.False(t, s.group.crowded(), "no write came concurrently")
	s.group.mu.Lock()
	s.group.crowdAt = time.Now()
	s.group.mu.Unlock()
	assert.True(t, s.group.crowded(), "a group just ended with others in it")
	s.group.mu.Lock()
	s.group.crowdAt = time.Now().Add(-crowdFor)
	s.group.mu.Unlock()
	assert.False(t, s.group.crowded(), "the moment passed")
}
