package storetest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// seqOf yields xs, without errors.
func seqOf[E any](xs []E) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		for _, x := range xs {
			if !yield(x, nil) {
				return
			}
		}
	}
}

// docsOf returns the word index's documents of commits hs of pack es, in
// their order.
func docsOf(t *testing.T, es []store.PackEntry, hs []dag.Hash) []store.WordDoc {
	t.Helper()
	values := map[dag.Hash][]byte{}
	for _, e := range es {
		if e.Kind != store.PackCounters {
			values[e.Hash] = e.Value
		}
	}
	out := make([]store.WordDoc, len(hs))
	for i, h := range hs {
		c, err := dag.Decode(values[h])
		require.NoError(t, err)
		out[i] = store.WordDoc{Commit: h, Time: c.Time.UnixNano(), Words: store.CommitWords(c, string(values[c.Blob]))}
	}
	return out
}

// streams reports whether s's write transactions take a pack whole.
func streams(t *testing.T, s store.Store) bool {
	t.Helper()
	var ok bool
	err := s.Update(context.Background(), func(tx store.Tx) error {
		_, ok = tx.(store.PackStreamer)
		return errRolledBack
	})
	require.ErrorIs(t, err, errRolledBack)
	return ok
}

var errRolledBack = errors.New("rolled back")

var streamTests = []subtest{
	{"a streamed pack shows every object once", func(t *testing.T, s store.Store) {
		if !streams(t, s) {
			t.Skip("the store takes no pack whole")
		}
		main := putChain(t, s, 3)
		es, hs := packOf(t, 20, "streamed")
		// A blob of the pack is stored already, and a commit with other
		// counters, which the pack's replace.
		update(t, s, func(tx store.Tx) error {
			if _, err := tx.PutBlob([]byte("streamed 7")); err != nil {
				return err
			}
			if _, err := tx.PutBlob([]byte("streamed 5")); err != nil {
				return err
			}
			c, err := dag.Decode(docsValue(es, hs[5]))
			if err != nil {
				return err
			}
			if _, err := tx.PutCommit(c); err != nil {
				return err
			}
			return tx.PutCounters(hs[5], store.Counters{Depth: 99, Messages: 99, Tokens: 99})
		})
		update(t, s, func(tx store.Tx) error {
			return tx.(store.PackStreamer).StreamPack(seqOf(es), seqOf(docsOf(t, es, hs)))
		})

		assert.ElementsMatch(t, append(slices.Clone(main), hs...), visibleCommits(t, s))
		view(t, s, func(tx store.Tx) error {
			for i, h := range hs {
				c, err := tx.Commit(h)
				require.NoError(t, err)
				text, err := tx.Blob(c.Blob)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("streamed %d", i), string(text))
				cs, ok, err := tx.Counters(h)
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, int64(i+1), cs.Depth, "the pack's counters")
			}
			blobs := 0
			require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { blobs++; return nil }))
			assert.Equal(t, 3+20, blobs, "a blob stored already is kept once")
			return nil
		})
		r, err := store.Fsck(context.Background(), s)
		require.NoError(t, err)
		assert.True(t, r.OK(), "%v", r.Problems)
		assert.Equal(t, reversed(hs)[:3], found(t, s, "streamed", 3), "the newest first")
		assert.Equal(t, []dag.Hash{hs[5]}, found(t, s, "5", 0), "a commit stored already is found once")
		assert.Equal(t, []dag.Hash{hs[19]}, found(t, s, "19", 0))
	}},
	{"a streamed pack is numbered after the documents before it", func(t *testing.T, s store.Store) {
		if !streams(t, s) {
			t.Skip("the store takes no pack whole")
		}
		var early dag.Hash
		update(t, s, func(tx store.Tx) (err error) {
			early, err = putText(tx, 1, "streamed early", "")
			return err
		})
		es, hs := packOf(t, 5, "streamed")
		update(t, s, func(tx store.Tx) error {
			return tx.(store.PackStreamer).StreamPack(seqOf(es), seqOf(docsOf(t, es, hs)))
		})
		var late dag.Hash
		update(t, s, func(tx store.Tx) (err error) {
			late, err = putText(tx, 5000, "streamed late", "")
			return err
		})
		want := append([]dag.Hash{late}, reversed(hs)...)
		assert.Equal(t, append(want, early), found(t, s, "streamed", 0))
		assert.Equal(t, want[:2], found(t, s, "streamed", 2))
	}},
	{"a streamed pack goes with its transaction", func(t *testing.T, s store.Store) {
		if !streams(t, s) {
			t.Skip("the store takes no pack whole")
		}
		es, hs := packOf(t, 30, "streamed")
		failed := errors.New("the transaction fails after the stream")
		err := s.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.(store.PackStreamer).StreamPack(seqOf(es), seqOf(docsOf(t, es, hs))); err != nil {
				return err
			}
			return failed
		})
		require.ErrorIs(t, err, failed)
		assert.Empty(t, visibleCommits(t, s))
		assert.Empty(t, found(t, s, "streamed", 0))
		view(t, s, func(tx store.Tx) error {
			return tx.ForEachBlob(func(h dag.Hash, _ []byte) error {
				t.Errorf("blob %s is visible", h.Short())
				return nil
			})
		})
	}},
	{"a stream's errors are returned", func(t *testing.T, s store.Store) {
		if !streams(t, s) {
			t.Skip("the store takes no pack whole")
		}
		es, _ := packOf(t, 3, "streamed")
		broken := errors.New("the input broke")
		err := s.Update(context.Background(), func(tx store.Tx) error {
			docs := func(yield func(store.WordDoc, error) bool) { yield(store.WordDoc{}, broken) }
			return tx.(store.PackStreamer).StreamPack(seqOf(es), docs)
		})
		require.ErrorIs(t, err, broken)
		assert.Empty(t, visibleCommits(t, s))
	}},
}

// docsValue returns the value of h's commit entry in es.
func docsValue(es []store.PackEntry, h dag.Hash) []byte {
	for _, e := range es {
		if e.Kind == store.PackCommit && e.Hash == h {
			return e.Value
		}
	}
	return nil
}
