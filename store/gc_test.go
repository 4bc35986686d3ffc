package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Garbage finds nothing without loading a graph when refs and unexpired
// reflog entries reach every commit, and marks the side chain once its
// entry expires; a ref to a missing commit is still an error.
func TestGarbage(t *testing.T) {
	ctx := context.Background()
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	for _, st := range []store.Store{store.NewMemory(), b} {
		main, mainBlobs := chainOf(t, dag.Hash{}, 3)
		side, sideBlobs := chainOfTexts(t, main[0].Hash, "attempt", 2)
		old := time.Now().Add(-time.Hour)
		require.NoError(t, st.Update(ctx, func(tx store.Tx) error {
			require.NoError(t, store.PutChain(tx, time.Now(), main, mainBlobs))
			require.NoError(t, store.PutChain(tx, time.Now(), side, sideBlobs))
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: main[2].Hash}))
			require.NoError(t, tx.SetRef(refs.Ref{Name: refs.HEAD, Target: "refs/heads/main"}))
			return tx.AppendReflog(refs.HEAD, refs.Entry{Old: side[1].Hash, New: main[2].Hash, Time: old, Action: "reset"})
		}))
		require.NoError(t, st.View(ctx, func(tx store.Tx) error {
			g, dead, n, err := store.Garbage(tx, func(e refs.Entry) bool { return e.Time.Before(old) })
			require.NoError(t, err)
			assert.Nil(t, g, "nothing to delete: no graph")
			assert.Nil(t, dead)
			assert.Zero(t, n)

			g, dead, n, err = store.Garbage(tx, func(refs.Entry) bool { return true })
			require.NoError(t, err)
			require.NotNil(t, g)
			assert.Equal(t, 2, n)
			assert.True(t, store.Dead(g, dead, side[0].Hash))
			assert.True(t, store.Dead(g, dead, side[1].Hash))
			assert.False(t, store.Dead(g, dead, main[0].Hash))
			return nil
		}))
		require.NoError(t, st.Update(ctx, func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: "refs/heads/lost", Hash: dag.Hash{9}})
		}))
		require.NoError(t, st.View(ctx, func(tx store.Tx) error {
			_, _, _, err := store.Garbage(tx, func(refs.Entry) bool { return false })
			assert.ErrorContains(t, err, "missing")
			return nil
		}))
	}
}
