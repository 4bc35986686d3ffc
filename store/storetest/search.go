package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
)

// found returns the hashes of the commits search.Scan finds for query in
// s, newest first, the newest limit of them when limit > 0: through the
// store's word index when it keeps one.
func found(t *testing.T, s store.Store, query string, limit int) []dag.Hash {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	var hs []dag.Hash
	view(t, s, func(tx store.Tx) error {
		hits, err := search.Scan(context.Background(), tx, q, limit)
		for _, h := range hits {
			hs = append(hs, h.Hash)
		}
		return err
	})
	return hs
}

// putText stores a commit of text (and diagnosis, when not empty) made
// at sample time n, and returns its hash.
func putText(tx store.Tx, n int, text, diagnosis string) (dag.Hash, error) {
	blob, err := tx.PutBlob([]byte(text))
	if err != nil {
		return dag.Hash{}, err
	}
	c := sampleCommit(n, blob)
	if diagnosis != "" {
		c.Meta = []byte(fmt.Sprintf(`{"diagnosis":%q}`, diagnosis))
	}
	return tx.PutCommit(c)
}

func reversed(hs []dag.Hash) []dag.Hash {
	out := make([]dag.Hash, len(hs))
	for i, h := range hs {
		out[len(hs)-1-i] = h
	}
	return out
}

var searchTests = []subtest{
	{"commits are found by the words of their texts and diagnoses, newest first", func(t *testing.T, s store.Store) {
		var red, fox, sky dag.Hash
		update(t, s, func(tx store.Tx) (err error) {
			if red, err = putText(tx, 1, "the red fox", ""); err != nil {
				return err
			}
			if fox, err = putText(tx, 3, "a Fox, quick", "Output was RED"); err != nil {
				return err
			}
			sky, err = putText(tx, 2, "Red wine, red sky", "")
			return err
		})
		assert.Equal(t, []dag.Hash{fox, sky, red}, found(t, s, "red", 0))
		assert.Equal(t, []dag.Hash{fox, sky}, found(t, s, "red", 2))
		assert.Equal(t, []dag.Hash{fox, red}, found(t, s, "red fox", 0), "words are ANDed, a diagnosis's with the text's")
		assert.Equal(t, []dag.Hash{fox}, found(t, s, "qu* output", 0), "a prefix")
		assert.Empty(t, found(t, s, "green", 0))
		assert.Empty(t, found(t, s, "red green", 0))
	}},
	{"a large batch and small commits after it are found alike", func(t *testing.T, s store.Store) {
		var batch []dag.Hash
		update(t, s, func(tx store.Tx) error {
			for i := range 600 {
				h, err := putText(tx, 1000-i, fmt.Sprintf("batch word%d common", i%7), "")
				if err != nil {
					return err
				}
				batch = append(batch, h)
			}
			return nil
		})
		var small []dag.Hash
		for i := range 5 {
			update(t, s, func(tx store.Tx) error {
				h, err := putText(tx, 2000+i, fmt.Sprintf("small word%d common", i), "")
				small = append(small, h)
				return err
			})
		}
		// The batch was written newest first: its first commit is its newest.
		assert.Equal(t, append(reversed(small), batch[:5]...), found(t, s, "common", 10))
		assert.Equal(t, []dag.Hash{small[3], batch[3], batch[10], batch[17]}, found(t, s, "word3", 4))
		assert.Len(t, found(t, s, "batch", 0), 600)
		assert.Len(t, found(t, s, "word*", 0), 605)
	}},
	{"deleted commits are not found", func(t *testing.T, s store.Store) {
		var keep, gone, later, blobFirst dag.Hash
		update(t, s, func(tx store.Tx) (err error) {
			if keep, err = putText(tx, 1, "shared kept", ""); err != nil {
				return err
			}
			if gone, err = putText(tx, 2, "shared zanzibar", ""); err != nil {
				return err
			}
			if later, err = putText(tx, 3, "shared quagga", ""); err != nil {
				return err
			}
			blobFirst, err = putText(tx, 4, "shared okapi", "")
			return err
		})
		blobOf := func(h dag.Hash) (b dag.Hash) {
			view(t, s, func(tx store.Tx) error {
				c, err := tx.Commit(h)
				if err == nil {
					b = c.Blob
				}
				return err
			})
			return b
		}
		update(t, s, func(tx store.Tx) error {
			if err := tx.DeleteCommit(gone); err != nil {
				return err
			}
			return tx.DeleteBlob(blobOf(gone))
		})
		assert.Empty(t, found(t, s, "zanzibar", 0))
		assert.Equal(t, []dag.Hash{blobFirst, later, keep}, found(t, s, "shared", 0))

		// The text first, then its commit in a later transaction.
		update(t, s, func(tx store.Tx) error { return tx.DeleteBlob(blobOf(blobFirst)) })
		update(t, s, func(tx store.Tx) error { return tx.DeleteCommit(blobFirst) })
		// The commit and its text in one transaction, the text first.
		quagga := blobOf(later)
		update(t, s, func(tx store.Tx) error {
			if err := tx.DeleteBlob(quagga); err != nil {
				return err
			}
			return tx.DeleteCommit(later)
		})
		assert.Empty(t, found(t, s, "okapi", 0))
		assert.Empty(t, found(t, s, "quagga", 0))
		assert.Equal(t, []dag.Hash{keep}, found(t, s, "shared", 0))
	}},
	{"a commit put and deleted in one transaction is not found", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			h, err := putText(tx, 1, "fleeting", "")
			if err != nil {
				return err
			}
			return tx.DeleteCommit(h)
		})
		assert.Empty(t, found(t, s, "fleeting", 0))

		// A commit whose text goes in the transaction that puts it.
		update(t, s, func(tx store.Tx) error {
			if _, err := putText(tx, 2, "ghostly", ""); err != nil {
				return err
			}
			return tx.DeleteBlob(dag.Sum([]byte("ghostly")))
		})
		assert.Empty(t, found(t, s, "ghostly", 0))
	}},
	{"a pack's commits are found once it is published", func(t *testing.T, s store.Store) {
		p, ok := s.(interface {
			Update(context.Context, func(store.Tx) error) error
		})
		require.True(t, ok)
		es, hs := packOf(t, 300, "packed")
		var id uint64
		packs := true
		require.NoError(t, p.Update(context.Background(), func(tx store.Tx) (err error) {
			ptx, ok := tx.(store.PackTx)
			if !ok {
				packs = false
				return nil
			}
			id, err = ptx.CreatePack(time.Now())
			return err
		}))
		if !packs {
			t.Skip("the store takes no packs")
		}
		update(t, s, func(tx store.Tx) error { return tx.(store.PackTx).AppendPack(id, time.Now(), es) })
		assert.Empty(t, found(t, s, "packed", 0), "an unpublished pack is invisible")
		update(t, s, func(tx store.Tx) error { return tx.(store.PackTx).PublishPack(id) })
		assert.Equal(t, reversed(hs)[:3], found(t, s, "packed", 3))
		assert.Equal(t, []dag.Hash{hs[299]}, found(t, s, "299", 0))
	}},
}
