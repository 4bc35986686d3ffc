package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// contextTests cover store.ContextTx, on stores whose transactions have
// it.
var contextTests = []subtest{
	{"PutReadReplaceDelete", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 4)
		contexts := func(tx store.Tx) store.ContextTx {
			ct, ok := tx.(store.ContextTx)
			if !ok {
				t.Skip("the store keeps no compiled-context records")
			}
			return ct
		}
		view(t, s, func(tx store.Tx) error {
			rec, err := contexts(tx).Context(hs[0])
			assert.Nil(t, rec, "no record yet")
			return err
		})
		update(t, s, func(tx store.Tx) error {
			ct := contexts(tx)
			require.NoError(t, ct.PutContext(hs[1], []byte("record one"), nil))
			require.NoError(t, ct.PutContext(hs[2], []byte("record two"), nil))
			rec, err := ct.Context(hs[1])
			require.NoError(t, err)
			assert.Equal(t, []byte("record one"), rec, "visible in the same transaction")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			ct := contexts(tx)
			has, err := ct.HasContexts(hs)
			require.NoError(t, err)
			assert.Equal(t, []bool{false, true, true, false}, has)
			has, err = ct.HasContexts(nil)
			assert.Empty(t, has)
			return err
		})
		update(t, s, func(tx store.Tx) error {
			ct := contexts(tx)
			require.NoError(t, ct.PutContext(hs[3], []byte("one to three"), []dag.Hash{hs[1], hs[2]}))
			require.NoError(t, ct.DeleteContext(hs[0]), "deleting a missing record is not an error")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			has, err := contexts(tx).HasContexts(hs)
			assert.Equal(t, []bool{false, false, false, true}, has, "the replaced records went")
			return err
		})
		assert.ErrorIs(t, s.View(t.Context(), func(tx store.Tx) error {
			return contexts(tx).PutContext(hs[0], []byte("x"), nil)
		}), store.ErrReadOnly)
		assert.ErrorIs(t, s.View(t.Context(), func(tx store.Tx) error {
			return contexts(tx).DeleteContext(hs[3])
		}), store.ErrReadOnly)
		update(t, s, func(tx store.Tx) error { return contexts(tx).DeleteContext(hs[3]) })
		view(t, s, func(tx store.Tx) error {
			rec, err := contexts(tx).Context(hs[3])
			assert.Nil(t, rec)
			return err
		})
	}},
	{"Chain", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 3)
		// A record names the one before it in its bytes 1 to 32.
		rec := func(prev dag.Hash, text string) []byte {
			return append(append([]byte{1}, prev[:]...), text...)
		}
		update(t, s, func(tx store.Tx) error {
			ct, ok := tx.(store.ContextTx)
			if !ok {
				t.Skip("the store keeps no compiled-context records")
			}
			require.NoError(t, ct.PutContext(hs[0], rec(dag.Hash{}, "first"), nil))
			return ct.PutContext(hs[2], rec(hs[0], "third"), nil)
		})
		view(t, s, func(tx store.Tx) error {
			cr, ok := tx.(store.ContextChainReader)
			if !ok {
				t.Skip("the store reads no chains of records")
			}
			got, recs, err := cr.ContextChain(hs[2], 10)
			require.NoError(t, err)
			assert.Equal(t, []dag.Hash{hs[2], hs[0]}, got)
			assert.Equal(t, [][]byte{rec(hs[0], "third"), rec(dag.Hash{}, "first")}, recs)
			got, _, err = cr.ContextChain(hs[2], 1)
			require.NoError(t, err)
			assert.Equal(t, []dag.Hash{hs[2]}, got, "at most n")
			got, _, err = cr.ContextChain(hs[1], 10)
			assert.Empty(t, got, "no record")
			return err
		})
	}},
	{"DeleteCommitsDeletesTheirRecords", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 3)
		update(t, s, func(tx store.Tx) error {
			ct, ok := tx.(store.ContextTx)
			if !ok {
				t.Skip("the store keeps no compiled-context records")
			}
			require.NoError(t, ct.PutContext(hs[1], []byte("kept"), nil))
			require.NoError(t, ct.PutContext(hs[2], []byte("dead"), nil))
			return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[1]})
		})
		update(t, s, func(tx store.Tx) error {
			g, err := store.LoadGraph(tx)
			require.NoError(t, err)
			live, err := store.Reachable(tx, g)
			require.NoError(t, err)
			dead := make([]bool, len(live))
			for i := range live {
				dead[i] = !live[i]
			}
			_, err = store.DeleteCommits(tx, g, dead, func(refs.Entry) bool { return false }, nil)
			return err
		})
		view(t, s, func(tx store.Tx) error {
			has, err := tx.(store.ContextTx).HasContexts(hs[1:])
			assert.Equal(t, []bool{true, false}, has)
			return err
		})
	}},
}
