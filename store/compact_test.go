package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// Compact gives back the space deletes freed, keeps every object, and a
// handle opened before it goes on working, on the new file.
func TestBolt_CompactShrinksAndKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	other, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer other.Close()

	var kept, dropped []dag.Hash
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for i := range 3000 {
			h, err := tx.PutBlob([]byte(fmt.Sprintf("blob %d %0500d", i, i)))
			if err != nil {
				return err
			}
			if i%30 == 0 {
				kept = append(kept, h)
			} else {
				dropped = append(dropped, h)
			}
		}
		return nil
	}))
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for _, h := range dropped {
			if err := tx.DeleteBlob(h); err != nil {
				return err
			}
		}
		return nil
	}))
	before, after, err := b.Compact(context.Background())
	require.NoError(t, err)
	assert.Less(t, after, before/4, "%d bytes before, %d after", before, after)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, after, st.Size())
	left, err := filepath.Glob(path + ".compact-*")
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left")

	require.NoError(t, other.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.PutBlob([]byte("written after compact"))
		return err
	}))
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		for _, h := range kept {
			ok, err := tx.HasBlob(h)
			require.NoError(t, err)
			assert.True(t, ok)
		}
		ok, err := tx.HasBlob(dag.Sum([]byte("written after compact")))
		assert.True(t, ok, "both handles use the new file")
		return err
	}))
	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}
