package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// copySource stores a chain of n commits of which the first half have
// counters entries (as a file written partly by an older tract), the
// branch main and a side branch on them with their reflogs, and returns
// the commits, oldest first.
func copySource(t *testing.T, s store.Store, n int) []dag.Hash {
	t.Helper()
	var hs []dag.Hash
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		var parents []dag.Hash
		var k store.Counters
		for i := range n {
			text := []byte(fmt.Sprintf("message %d, long enough to count some tokens", i))
			b, err := tx.PutBlob(text)
			if err != nil {
				return err
			}
			h, err := tx.PutCommit(&dag.Commit{Parents: parents, Kind: dag.KindMessage, Role: dag.RoleUser, Blob: b,
				Time: time.Unix(int64(i), 0).UTC()})
			if err != nil {
				return err
			}
			k = k.Next(dag.KindMessage, text)
			if i < n/2 {
				if err := tx.PutCounters(h, k); err != nil {
					return err
				}
			}
			hs, parents = append(hs, h), []dag.Hash{h}
		}
		for _, r := range []refs.Ref{{Name: refs.BranchRef("main"), Hash: hs[n-1]}, {Name: refs.BranchRef("side"), Hash: hs[1]}} {
			if err := tx.SetRef(r); err != nil {
				return err
			}
			if err := tx.AppendReflog(r.Name, refs.Entry{New: r.Hash, Time: time.Unix(99, 0).UTC(), Action: refs.ActionCommit, Message: "made"}); err != nil {
				return err
			}
		}
		return nil
	}))
	return hs
}

// contents is everything a store holds that a copy carries.
type contents struct {
	Blobs    map[dag.Hash]string
	Commits  map[dag.Hash]string
	Counters map[dag.Hash]store.Counters
	Refs     []refs.Ref
	Reflogs  map[string][]refs.Entry
}

func contentsOf(t *testing.T, s store.Store) contents {
	t.Helper()
	c := contents{Blobs: map[dag.Hash]string{}, Commits: map[dag.Hash]string{}, Counters: map[dag.Hash]store.Counters{},
		Reflogs: map[string][]refs.Entry{}}
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, b []byte) error { c.Blobs[h] = string(b); return nil }))
		require.NoError(t, tx.ForEachCommit(func(h dag.Hash, b []byte) error { c.Commits[h] = string(b); return nil }))
		require.NoError(t, tx.ForEachCounters(func(h dag.Hash, k store.Counters) error { c.Counters[h] = k; return nil }))
		var err error
		c.Refs, err = tx.Refs()
		require.NoError(t, err)
		names, err := tx.ReflogNames()
		require.NoError(t, err)
		for _, n := range names {
			if c.Reflogs[n], err = tx.Reflog(n); err != nil {
				return err
			}
		}
		return nil
	}))
	return c
}

// noPacks hides the packs of a store's transactions.
type noPacks struct{ store.Store }

func (s noPacks) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(struct{ store.Tx }{tx}) })
}

func TestCopy_CarriesEverythingAndReportsProgress(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		dst         func(t *testing.T) store.Store
		batchBytes  int
		wantBatches int
	}{
		{"to a file, one batch", func(t *testing.T) store.Store { return createBolt(t) }, 0, 1},
		{"to a file, a batch per few objects", func(t *testing.T) store.Store { return createBolt(t) }, 300, 9},
		{"to memory", func(*testing.T) store.Store { return store.NewMemory() }, 0, 1},
		{"to a store without packs", func(*testing.T) store.Store { return noPacks{store.NewMemory()} }, 300, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := store.NewMemory()
			hs := copySource(t, src, 10)
			dst := tc.dst(t)
			var mu sync.Mutex
			var reports [][2]int64
			res, err := store.Copy(ctx, src, dst, store.CopyBatchBytes(tc.batchBytes), store.CopyProgress(func(done, total int64) {
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, [2]int64{done, total})
			}))
			require.NoError(t, err)
			assert.Equal(t, contentsOf(t, src), contentsOf(t, dst))
			assert.Equal(t, &store.CopyResult{Source: store.MemoryPath, Destination: dst.Path(), Blobs: 10, Commits: 10,
				Bytes: res.Bytes, Counters: 5, Refs: 3, ReflogEntries: 2, Batches: tc.wantBatches}, res)
			assert.Greater(t, res.Bytes, int64(10*40))
			require.NotEmpty(t, reports)
			assert.Equal(t, [2]int64{20, 20}, reports[len(reports)-1], "the last report counts every object")
			require.NoError(t, dst.View(ctx, func(tx store.Tx) error {
				k, err := store.CountersOf(ctx, tx, hs[9], false)
				assert.EqualValues(t, 10, k.Depth)
				return err
			}))
		})
	}
}

func TestCopy_RefusesWhatItCannotCopyInto(t *testing.T) {
	ctx := context.Background()
	src := store.NewMemory()
	copySource(t, src, 2)
	_, err := store.Copy(ctx, src, src)
	require.ErrorIs(t, err, store.ErrSameRepository)

	dst := store.NewMemory()
	copySource(t, dst, 2)
	before := contentsOf(t, dst)
	_, err = store.Copy(ctx, src, dst)
	require.ErrorIs(t, err, store.ErrNotEmpty)
	assert.Contains(t, err.Error(), "it has the ref refs/heads/main")
	assert.Equal(t, before, contentsOf(t, dst))

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = store.Copy(cancelled, src, store.NewMemory())
	require.ErrorIs(t, err, context.Canceled)
}

// damaged serves a source whose object or index entry fails its check.
type damaged struct {
	store.Store
	blob     func(h dag.Hash, b []byte) []byte
	counters func(h dag.Hash, k store.Counters) store.Counters
}

type damagedTx struct {
	store.Tx
	d damaged
}

func (d damaged) View(ctx context.Context, fn func(store.Tx) error) error {
	return d.Store.View(ctx, func(tx store.Tx) error { return fn(damagedTx{tx, d}) })
}

func (tx damagedTx) ForEachBlob(fn func(dag.Hash, []byte) error) error {
	return tx.Tx.ForEachBlob(func(h dag.Hash, b []byte) error { return fn(h, tx.d.blob(h, b)) })
}

func (tx damagedTx) Counters(h dag.Hash) (store.Counters, bool, error) {
	k, ok, err := tx.Tx.Counters(h)
	return tx.d.counters(h, k), ok, err
}

// A copy that finds an object or an index entry that fails its check
// stops, names it, and leaves the destination as it was.
func TestCopy_DamageStopsTheCopyAndLeavesTheDestinationAsItWas(t *testing.T) {
	ctx := context.Background()
	src := store.NewMemory()
	hs := copySource(t, src, 6)
	var blob dag.Hash
	require.NoError(t, src.View(ctx, func(tx store.Tx) error {
		c, err := tx.Commit(hs[2])
		blob = c.Blob
		return err
	}))
	keep := func(_ dag.Hash, b []byte) []byte { return b }
	same := func(_ dag.Hash, k store.Counters) store.Counters { return k }
	for _, tc := range []struct {
		name string
		src  damaged
		want string
	}{
		{"a blob that does not hash to its key", damaged{src, func(h dag.Hash, b []byte) []byte {
			if h == blob {
				return []byte("changed")
			}
			return b
		}, same}, "blob " + blob.String() + ": its content hashes to " + dag.Sum([]byte("changed")).Short()},
		{"a counters entry that does not follow from its parent's", damaged{src, keep, func(h dag.Hash, k store.Counters) store.Counters {
			if h == hs[1] {
				k.Tokens++
			}
			return k
		}}, "commit " + hs[1].String() + ": its index entry (2 commits, 2 messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := createBolt(t)
			before := contentsOf(t, dst)
			_, err := store.Copy(ctx, tc.src, dst, store.CopyBatchBytes(100))
			require.ErrorIs(t, err, store.ErrCorrupt)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, contentsOf(t, dst))
			require.NoError(t, dst.View(ctx, func(tx store.Tx) error {
				unpublished, err := tx.(store.PackTx).UnpublishedPacks()
				assert.Empty(t, unpublished, "the copy's pack is dropped")
				return err
			}))
		})
	}
}

// CountersOf computes the entries missing along a chain from the nearest
// one stored, and stores them when asked to.
func TestCountersOf_FillsTheChainFromTheNearestEntry(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory()
	hs := copySource(t, m, 8)
	var want store.Counters
	require.NoError(t, m.View(ctx, func(tx store.Tx) error {
		for _, h := range hs {
			c, err := tx.Commit(h)
			require.NoError(t, err)
			text, err := tx.Blob(c.Blob)
			require.NoError(t, err)
			want = want.Next(c.Kind, text)
		}
		return nil
	}))
	count := func() (n int) {
		require.NoError(t, m.View(ctx, func(tx store.Tx) error {
			return tx.ForEachCounters(func(dag.Hash, store.Counters) error { n++; return nil })
		}))
		return n
	}
	require.NoError(t, m.View(ctx, func(tx store.Tx) error {
		k, err := store.CountersOf(ctx, tx, hs[7], false)
		assert.Equal(t, want, k)
		return err
	}))
	assert.Equal(t, 4, count(), "a read stores nothing")
	require.NoError(t, m.Update(ctx, func(tx store.Tx) error {
		k, err := store.CountersOf(ctx, tx, hs[7], true)
		assert.Equal(t, want, k)
		return err
	}))
	assert.Equal(t, 8, count())
	require.NoError(t, m.View(ctx, func(tx store.Tx) error {
		k, err := store.CountersOf(ctx, tx, dag.Hash{}, false)
		assert.Zero(t, k)
		return err
	}))
}
