package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// batchTests check store.ReadBlobs, store.ReadCommits and store.ReadChain:
// through a store's store.BatchReader and store.ChainReader when it has
// them, through the one-at-a-time fallback otherwise.
var batchTests = []subtest{
	{"ReadBlobsInOrderWithMissingAsNil", func(t *testing.T, s store.Store) {
		texts := []string{"a", "", "c"}
		var hs []dag.Hash
		update(t, s, func(tx store.Tx) error {
			for _, text := range texts {
				h, err := tx.PutBlob([]byte(text))
				require.NoError(t, err)
				hs = append(hs, h)
			}
			return nil
		})
		missing := dag.Sum([]byte("missing"))
		ask := []dag.Hash{hs[2], missing, hs[0], hs[1], hs[2]}
		view(t, s, func(tx store.Tx) error {
			got, err := store.ReadBlobs(tx, ask)
			require.NoError(t, err)
			require.Len(t, got, len(ask))
			assert.Equal(t, "c", string(got[0]))
			assert.Nil(t, got[1], "a blob not stored is nil")
			assert.Equal(t, "a", string(got[2]))
			assert.NotNil(t, got[3], "an empty blob is not nil")
			assert.Empty(t, got[3])
			assert.Equal(t, "c", string(got[4]), "a hash asked twice is answered twice")
			got[0][0] = 'x'
			assert.Equal(t, "c", string(got[4]), "each answer is the caller's own")
			none, err := store.ReadBlobs(tx, nil)
			require.NoError(t, err)
			assert.Empty(t, none)
			return nil
		})
	}},
	{"ReadCommitsInOrderWithMissingAsNil", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 3)
		missing := dag.Sum([]byte("missing"))
		ask := []dag.Hash{hs[2], missing, hs[0], hs[2]}
		view(t, s, func(tx store.Tx) error {
			got, err := store.ReadCommits(tx, ask)
			require.NoError(t, err)
			require.Len(t, got, len(ask))
			for i, h := range ask {
				if h == missing {
					assert.Nil(t, got[i])
					continue
				}
				want, err := tx.Commit(h)
				require.NoError(t, err)
				assert.Equal(t, want, got[i], "commit %d", i)
			}
			return nil
		})
	}},
	{"ReadCountersInOrderWithMissing", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 3)
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.PutCounters(hs[0], store.Counters{Depth: 1, Messages: 1, Tokens: 2}))
			return tx.PutCounters(hs[2], store.Counters{Depth: 3, Messages: 2, Tokens: 7})
		})
		view(t, s, func(tx store.Tx) error {
			cs, ok, err := store.ReadCounters(tx, []dag.Hash{hs[2], hs[1], hs[0], hs[2]})
			require.NoError(t, err)
			assert.Equal(t, []bool{true, false, true, true}, ok)
			assert.Equal(t, []store.Counters{{Depth: 3, Messages: 2, Tokens: 7}, {}, {Depth: 1, Messages: 1, Tokens: 2},
				{Depth: 3, Messages: 2, Tokens: 7}}, cs)
			return nil
		})
	}},
	{"ReadManyAcrossManyQueries", func(t *testing.T, s store.Store) {
		// More than a batching store asks for in one query (1000 for
		// PostgreSQL), every other one missing.
		const n = 2500
		var ask []dag.Hash
		update(t, s, func(tx store.Tx) error {
			for i := range n {
				text := []byte(fmt.Sprintf("blob %d", i))
				if i%2 == 0 {
					_, err := tx.PutBlob(text)
					require.NoError(t, err)
				}
				ask = append(ask, dag.Sum(text))
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			got, err := store.ReadBlobs(tx, ask)
			require.NoError(t, err)
			require.Len(t, got, n)
			for i, b := range got {
				if i%2 == 0 {
					assert.Equal(t, fmt.Sprintf("blob %d", i), string(b))
				} else {
					assert.Nil(t, b, "blob %d", i)
				}
			}
			return nil
		})
	}},
	{"ReadInTheWritingTransaction", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			b, err := tx.PutBlob([]byte("new"))
			require.NoError(t, err)
			c, err := tx.PutCommit(sampleCommit(0, b))
			require.NoError(t, err)
			blobs, err := store.ReadBlobs(tx, []dag.Hash{b})
			require.NoError(t, err)
			assert.Equal(t, [][]byte{[]byte("new")}, blobs, "a blob put earlier in the transaction")
			links, err := store.ReadChain(tx, c, 10, dag.Hash{})
			require.NoError(t, err)
			assert.Len(t, links, 1, "a commit put earlier in the transaction")
			return nil
		})
	}},
	{"ReadChain", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 40) // oldest first
		newest := slices.Clone(hs)
		slices.Reverse(newest)
		var zero dag.Hash
		for _, tc := range []struct {
			name string
			from dag.Hash
			n    int
			stop dag.Hash
			want []dag.Hash
		}{
			{"whole chain", hs[39], 100, zero, newest},
			{"exactly its length", hs[39], 40, zero, newest},
			{"first n", hs[39], 5, zero, newest[:5]},
			{"one", hs[10], 1, zero, []dag.Hash{hs[10]}},
			{"before stop", hs[39], 100, hs[30], newest[:9]},
			{"stop beyond n", hs[39], 3, hs[30], newest[:3]},
			{"stop not on the chain", hs[20], 100, dag.Sum([]byte("elsewhere")), newest[19:]},
			{"from is stop", hs[5], 100, hs[5], nil},
			{"n is 0", hs[5], 0, zero, nil},
			{"from is zero", zero, 10, zero, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				view(t, s, func(tx store.Tx) error {
					links, err := store.ReadChain(tx, tc.from, tc.n, tc.stop)
					require.NoError(t, err)
					var got []dag.Hash
					for _, l := range links {
						got = append(got, l.Hash)
						hd, err := tx.CommitHeader(l.Hash)
						require.NoError(t, err)
						assert.Equal(t, hd, l.Header, "header of %s", l.Hash.Short())
						if l.Raw != nil {
							assert.Equal(t, l.Hash, dag.Sum(l.Raw), "encoding of %s", l.Hash.Short())
						}
					}
					assert.Equal(t, tc.want, got)
					return nil
				})
			})
		}
	}},
	{"ReadChainFollowsFirstParents", func(t *testing.T, s store.Store) {
		main := putChain(t, s, 3)
		var merge dag.Hash
		update(t, s, func(tx store.Tx) error {
			b, err := tx.PutBlob([]byte("side"))
			require.NoError(t, err)
			side, err := tx.PutCommit(sampleCommit(10, b))
			require.NoError(t, err)
			merge, err = tx.PutCommit(sampleCommit(11, b, main[2], side))
			return err
		})
		view(t, s, func(tx store.Tx) error {
			links, err := store.ReadChain(tx, merge, 10, dag.Hash{})
			require.NoError(t, err)
			var got []dag.Hash
			for _, l := range links {
				got = append(got, l.Hash)
			}
			assert.Equal(t, []dag.Hash{merge, main[2], main[1], main[0]}, got)
			return nil
		})
	}},
	{"ReadChainOfAMissingCommitIsNotFound", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 4)
		update(t, s, func(tx store.Tx) error { return tx.DeleteCommit(hs[1]) })
		view(t, s, func(tx store.Tx) error {
			_, err := store.ReadChain(tx, dag.Sum([]byte("missing")), 10, dag.Hash{})
			assert.ErrorIs(t, err, store.ErrNotFound, "from is not stored")
			_, err = store.ReadChain(tx, hs[3], 10, dag.Hash{})
			assert.ErrorIs(t, err, store.ErrNotFound, "a parent on the chain is not stored")
			links, err := store.ReadChain(tx, hs[3], 10, hs[1])
			require.NoError(t, err, "the missing commit is where the chain stops")
			assert.Len(t, links, 2)
			return nil
		})
	}},
}
