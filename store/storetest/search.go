package storetest

import (
	"context"
	"fmt"
	"strings"
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
	return scan(t, s, query, limit, func(tx store.Tx) store.Tx { return tx })
}

// scan returns the hashes of the commits search.Scan finds for query in
// the transaction as, made of a transaction of s, gives it.
func scan(t *testing.T, s store.Store, query string, limit int, as func(store.Tx) store.Tx) []dag.Hash {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	var hs []dag.Hash
	view(t, s, func(tx store.Tx) error {
		hits, err := search.Scan(context.Background(), as(tx), q, limit)
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

// scanned returns what found does, reading every text instead of the
// word index.
func scanned(t *testing.T, s store.Store, query string, limit int) []dag.Hash {
	t.Helper()
	// The struct hides the transaction's word index from search.Scan.
	return scan(t, s, query, limit, func(tx store.Tx) store.Tx { return struct{ store.Tx }{tx} })
}

// indexAnswers fails t unless a store whose transactions keep a word
// index answers query from it (rather than reporting none, which makes
// search.Scan read every text).
func indexAnswers(t *testing.T, s store.Store, query string) {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	var terms []store.WordTerm
	for _, term := range q.Terms() {
		w, prefix := strings.CutSuffix(term, "*")
		terms = append(terms, store.WordTerm{Word: w, Prefix: prefix})
	}
	view(t, s, func(tx store.Tx) error {
		ix, ok := tx.(store.WordIndexTx)
		if !ok {
			return nil
		}
		indexed, err := ix.WordMatches(terms, func(dag.Hash, time.Time) (bool, error) { return false, nil })
		assert.True(t, indexed, "the store keeps a word index, and a new repository has one: %q is answered from it", query)
		return err
	})
}

func reversed(hs []dag.Hash) []dag.Hash {
	out := make([]dag.Hash, len(hs))
	for i, h := range hs {
		out[len(hs)-1-i] = h
	}
	return out
}

var searchTests = []subtest{
	{"the index answers as reading every text does", func(t *testing.T, s store.Store) {
		// Times out of order, in transactions of several sizes, some
		// commits equal in time, a diagnosis, a text shared by two
		// commits, an empty text, words beyond ASCII.
		texts := []string{"alpha beta", "beta gamma", "Gamma DELTA alpha", "", "ÉLAN élan naïve", "alphabet soup",
			"beta", "delta delta delta", "alpha beta gamma delta", "alpha beta"}
		for round := range 3 {
			update(t, s, func(tx store.Tx) error {
				for i, text := range texts[:3+3*round] {
					diagnosis := ""
					if i%4 == 1 {
						diagnosis = "epsilon went wrong"
					}
					if _, err := putText(tx, (i*7+round*5)%11, fmt.Sprintf("%s round%d", text, round), diagnosis); err != nil {
						return err
					}
				}
				return nil
			})
		}
		for _, q := range []string{"alpha", "beta gamma", "alpha*", "gam* del*", "epsilon", "epsilon beta", "élan", "éla*", "naï*",
			"naive", "round1", "round*", "delta round2", "zeta", "a*"} {
			for _, limit := range []int{0, 1, 3} {
				assert.Equal(t, scanned(t, s, q, limit), found(t, s, q, limit), "%q, limit %d", q, limit)
			}
			indexAnswers(t, s, q)
		}
	}},
	{"thousands of commits, newer ones written before older ones, are found newest first", func(t *testing.T, s store.Store) {
		// Each transaction writes older commits than the one before, so
		// the newest are among the first written: a search that reads
		// the last written first must not stop before it reaches them.
		for tx := range 3 {
			update(t, s, func(txn store.Tx) error {
				for i := range 1200 {
					n := 100000 - tx*10000 - i*3
					text := fmt.Sprintf("doc%d w%d tx%d", i, i%10, tx)
					if i%500 == 7 {
						text += " rare"
					}
					if _, err := putText(txn, n, text, ""); err != nil {
						return err
					}
				}
				return nil
			})
		}
		update(t, s, func(txn store.Tx) error { _, err := putText(txn, 1, "w3 rare oldest", ""); return err })
		for _, q := range []string{"rare", "w3", "w3 rare", "tx2 w1", "doc11*", "oldest"} {
			for _, limit := range []int{0, 1, 7, 100} {
				assert.Equal(t, scanned(t, s, q, limit), found(t, s, q, limit), "%q, limit %d", q, limit)
			}
			indexAnswers(t, s, q)
		}
	}},
	{"a text of more words than an index entry holds is found", func(t *testing.T, s store.Store) {
		var b strings.Builder
		for i := range 80000 { // 1.1 MB of distinct words
			fmt.Fprintf(&b, "longword%06d ", i)
		}
		b.WriteString("needle")
		var big, small, later dag.Hash
		update(t, s, func(tx store.Tx) (err error) {
			if small, err = putText(tx, 1, "a needle", ""); err != nil {
				return err
			}
			if big, err = putText(tx, 2, b.String(), "longword000001 needed"); err != nil {
				return err
			}
			later, err = putText(tx, 3, "needle longword000042", "")
			return err
		})
		assert.Equal(t, []dag.Hash{later, big, small}, found(t, s, "needle", 0))
		assert.Equal(t, []dag.Hash{later, big}, found(t, s, "needle", 2))
		assert.Equal(t, []dag.Hash{later, big}, found(t, s, "longword000042", 0))
		assert.Equal(t, []dag.Hash{big}, found(t, s, "longword07999* needed", 0))
		assert.Equal(t, []dag.Hash{later, big}, found(t, s, "longword00004* needle", 0))
		assert.Empty(t, found(t, s, "longword080000", 0))
		indexAnswers(t, s, "needle")
		update(t, s, func(tx store.Tx) error { return tx.DeleteCommit(big) })
		assert.Equal(t, []dag.Hash{later, small}, found(t, s, "needle", 0))
		assert.Empty(t, found(t, s, "needed", 0))
	}},
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
