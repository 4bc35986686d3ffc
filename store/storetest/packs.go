package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// packOf builds the sorted pack entries of n chained commits (with their
// blobs and counters) whose texts start with prefix, and returns the
// commits' hashes in chain order too.
func packOf(t *testing.T, n int, prefix string) ([]store.PackEntry, []dag.Hash) {
	t.Helper()
	var es []store.PackEntry
	var hs []dag.Hash
	var parent []dag.Hash
	var c store.Counters
	for i := range n {
		text := []byte(fmt.Sprintf("%s %d", prefix, i))
		blob := dag.Sum(text)
		cm := sampleCommit(1000+i, blob, parent...)
		raw, err := dag.Encode(cm)
		require.NoError(t, err)
		h := dag.Sum(raw)
		c = c.Next(cm.Kind, text)
		es = append(es,
			store.PackEntry{Kind: store.PackBlob, Hash: blob, Value: text},
			store.PackEntry{Kind: store.PackCommit, Hash: h, Value: raw},
			store.PackEntry{Kind: store.PackCounters, Hash: h, Value: c.Encode()})
		hs = append(hs, h)
		parent = []dag.Hash{h}
	}
	slices.SortFunc(es, store.PackEntry.Compare)
	return es, hs
}

func packTx(t *testing.T, tx store.Tx) store.PackTx {
	t.Helper()
	p, ok := tx.(store.PackTx)
	require.True(t, ok, "the store's transactions implement store.PackTx")
	return p
}

// createPack creates a pack holding es (appended in two calls) and returns
// its id, unpublished.
func createPack(t *testing.T, s store.Store, es []store.PackEntry) uint64 {
	t.Helper()
	var id uint64
	update(t, s, func(tx store.Tx) (err error) {
		id, err = packTx(t, tx).CreatePack(t0)
		return err
	})
	half := len(es) / 2
	for _, part := range [][]store.PackEntry{es[:half], es[half:]} {
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).AppendPack(id, t0.Add(time.Minute), part) })
	}
	return id
}

func visibleCommits(t *testing.T, s store.Store) []dag.Hash {
	t.Helper()
	var out []dag.Hash
	view(t, s, func(tx store.Tx) error {
		return tx.ForEachCommit(func(h dag.Hash, _ []byte) error {
			out = append(out, h)
			return nil
		})
	})
	return out
}

var packTests = []subtest{
	{"an unpublished pack is invisible", func(t *testing.T, s store.Store) {
		es, hs := packOf(t, 5, "staged")
		id := createPack(t, s, es)
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasCommit(hs[0])
			require.NoError(t, err)
			assert.False(t, ok)
			_, found, err := tx.Counters(hs[4])
			require.NoError(t, err)
			assert.False(t, found)
			infos, err := packTx(t, tx).UnpublishedPacks()
			require.NoError(t, err)
			assert.Equal(t, []store.PackInfo{{ID: id, Updated: t0.Add(time.Minute), Entries: int64(len(es))}}, infos)
			return nil
		})
		assert.Empty(t, visibleCommits(t, s))
	}},
	{"publishing shows every object once", func(t *testing.T, s store.Store) {
		main := putChain(t, s, 3)
		es, hs := packOf(t, 20, "packed")
		// One blob of the pack is in the main buckets already.
		update(t, s, func(tx store.Tx) error {
			_, err := tx.PutBlob([]byte("packed 7"))
			return err
		})
		id := createPack(t, s, es)
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).PublishPack(id) })

		assert.ElementsMatch(t, append(slices.Clone(main), hs...), visibleCommits(t, s))
		view(t, s, func(tx store.Tx) error {
			for i, h := range hs {
				c, err := tx.Commit(h)
				require.NoError(t, err)
				text, err := tx.Blob(c.Blob)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("packed %d", i), string(text))
				hd, err := tx.CommitHeader(h)
				require.NoError(t, err)
				assert.Equal(t, c.Blob, hd.Blob)
				cs, ok, err := tx.Counters(h)
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, int64(i+1), cs.Depth)
			}
			blobs := 0
			require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { blobs++; return nil }))
			assert.Equal(t, 3+20, blobs, "the blob in both places is listed once")
			counters := 0
			require.NoError(t, tx.ForEachCounters(func(dag.Hash, store.Counters) error { counters++; return nil }))
			assert.Equal(t, 20, counters)
			found, err := tx.CommitsWithPrefix(hs[3].String()[:8], 0)
			require.NoError(t, err)
			assert.Contains(t, found, hs[3])
			infos, err := packTx(t, tx).UnpublishedPacks()
			require.NoError(t, err)
			assert.Empty(t, infos)
			return nil
		})
		r, err := store.Fsck(context.Background(), s)
		require.NoError(t, err)
		assert.True(t, r.OK(), "%v", r.Problems)
	}},
	{"deletes reach published packs", func(t *testing.T, s store.Store) {
		es, hs := packOf(t, 4, "doomed")
		id := createPack(t, s, es)
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).PublishPack(id) })
		update(t, s, func(tx store.Tx) error {
			c, err := tx.Commit(hs[3])
			require.NoError(t, err)
			require.NoError(t, tx.DeleteCommit(hs[3]))
			require.NoError(t, tx.DeleteCounters(hs[3]))
			return tx.DeleteBlob(c.Blob)
		})
		assert.ElementsMatch(t, hs[:3], visibleCommits(t, s))
		view(t, s, func(tx store.Tx) error {
			_, ok, err := tx.Counters(hs[3])
			require.NoError(t, err)
			assert.False(t, ok)
			ok, err = tx.HasBlob(dag.Sum([]byte("doomed 3")))
			require.NoError(t, err)
			assert.False(t, ok)
			return nil
		})
	}},
	{"entries must come in order", func(t *testing.T, s store.Store) {
		es, _ := packOf(t, 3, "order")
		var id uint64
		update(t, s, func(tx store.Tx) (err error) {
			id, err = packTx(t, tx).CreatePack(t0)
			return err
		})
		swapped := slices.Clone(es)
		swapped[0], swapped[1] = swapped[1], swapped[0]
		err := s.Update(context.Background(), func(tx store.Tx) error { return packTx(t, tx).AppendPack(id, t0, swapped) })
		assert.ErrorContains(t, err, "out of order")
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).AppendPack(id, t0, es[3:]) })
		err = s.Update(context.Background(), func(tx store.Tx) error { return packTx(t, tx).AppendPack(id, t0, es[:3]) })
		assert.ErrorContains(t, err, "out of order", "an entry before what an earlier call appended")
	}},
	{"a rolled-back append leaves the pack as it was", func(t *testing.T, s store.Store) {
		es, _ := packOf(t, 3, "rollback")
		id := createPack(t, s, es[:4])
		boom := errors.New("boom")
		err := s.Update(context.Background(), func(tx store.Tx) error {
			require.NoError(t, packTx(t, tx).AppendPack(id, t0.Add(time.Hour), es[4:]))
			return boom
		})
		require.ErrorIs(t, err, boom)
		view(t, s, func(tx store.Tx) error {
			infos, err := packTx(t, tx).UnpublishedPacks()
			require.NoError(t, err)
			require.Len(t, infos, 1)
			assert.Equal(t, int64(4), infos[0].Entries)
			return nil
		})
	}},
	{"a dropped pack is gone", func(t *testing.T, s store.Store) {
		es, _ := packOf(t, 2, "dropped")
		id := createPack(t, s, es)
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).DropPack(id) })
		update(t, s, func(tx store.Tx) error { return packTx(t, tx).DropPack(id) })
		err := s.Update(context.Background(), func(tx store.Tx) error { return packTx(t, tx).AppendPack(id, t0, es) })
		assert.ErrorIs(t, err, store.ErrNotFound)
		err = s.Update(context.Background(), func(tx store.Tx) error { return packTx(t, tx).PublishPack(id) })
		assert.ErrorIs(t, err, store.ErrNotFound)
		view(t, s, func(tx store.Tx) error {
			infos, err := packTx(t, tx).UnpublishedPacks()
			require.NoError(t, err)
			assert.Empty(t, infos)
			return nil
		})
	}},
	{"pack writes are refused in a view", func(t *testing.T, s store.Store) {
		err := s.View(context.Background(), func(tx store.Tx) error {
			_, err := packTx(t, tx).CreatePack(t0)
			return err
		})
		assert.ErrorIs(t, err, store.ErrReadOnly)
	}},
}
