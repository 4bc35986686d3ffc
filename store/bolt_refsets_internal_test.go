package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// The states a process killed during an import of branches leaves, each
// read as all or nothing: refs staged with a pack not published are
// invisible and dropped with it; refs published and partly folded (a
// kill between two transactions of the fold) read as they did when
// published, and the next MergePacks folds the rest.
func TestRefsets_KilledBeforePublishOrWhileFolding(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "tract.db"), BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	at := time.Unix(1_700_000_000, 0).UTC()
	var tip dag.Hash
	require.NoError(t, b.Update(ctx, func(tx Tx) error {
		blob, err := tx.PutBlob([]byte("x"))
		if err != nil {
			return err
		}
		tip, err = tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: at})
		return err
	}))
	const n = 5000
	stage := func() uint64 {
		var id uint64
		require.NoError(t, b.Update(ctx, func(tx Tx) error {
			id, err = tx.(PackTx).CreatePack(at)
			return err
		}))
		rs := make([]refs.Ref, n)
		es := make([]refs.Entry, n)
		for i := range rs {
			rs[i] = refs.Ref{Name: refs.BranchRef(fmt.Sprintf("b-%04d", i)), Hash: tip}
			es[i] = refs.Entry{New: tip, Time: at, Action: refs.ActionImport, Message: fmt.Sprint(i)}
		}
		for from := 0; from < n; from += 1000 {
			require.NoError(t, b.Update(ctx, func(tx Tx) error {
				return tx.(PackRefTx).StagePackRefs(id, rs[from:from+1000], es[from:from+1000])
			}))
		}
		return id
	}
	visible := func() (refsN, logsN int) {
		require.NoError(t, b.View(ctx, func(tx Tx) error {
			all, err := tx.Refs()
			if err != nil {
				return err
			}
			names, err := tx.ReflogNames()
			refsN, logsN = len(all)-1, len(names) // HEAD
			for _, name := range []string{"refs/heads/b-0000", "refs/heads/b-2047", "refs/heads/b-2048", "refs/heads/b-4999"} {
				es, err := tx.Reflog(name)
				require.NoError(t, err)
				if refsN > 0 {
					require.Len(t, es, 1, name)
				} else {
					require.Empty(t, es, name)
				}
			}
			return err
		}))
		return refsN, logsN
	}

	// Killed before publishing: nothing to see; the pack's drop (gc)
	// takes the staged refs with it.
	id := stage()
	r, l := visible()
	assert.Equal(t, 0, r)
	assert.Equal(t, 0, l)
	require.NoError(t, b.Update(ctx, func(tx Tx) error { return tx.(PackTx).DropPack(id) }))
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		st := tx.(*boltTx).tx.Bucket(bucketRefStaging)
		require.NotNil(t, st)
		k, _ := st.Cursor().First()
		assert.Nil(t, k, "the staged refs went with the pack")
		return nil
	}))

	// Published, then killed after one transaction of the fold.
	id = stage()
	require.NoError(t, b.Update(ctx, func(tx Tx) error { return tx.(PackTx).PublishPack(id) }))
	require.NoError(t, b.Update(ctx, func(tx Tx) error {
		more, err := tx.(*boltTx).foldSome(foldBatch)
		assert.True(t, more)
		return err
	}))
	r, l = visible()
	assert.Equal(t, n, r)
	assert.Equal(t, n, l)
	rep, err := Fsck(ctx, b)
	require.NoError(t, err)
	assert.Empty(t, rep.Problems)

	require.NoError(t, b.MergePacks(ctx))
	r, l = visible()
	assert.Equal(t, n, r)
	assert.Equal(t, n, l)
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		assert.Nil(t, tx.(*boltTx).tx.Bucket(bucketRefsets), "every refset folded")
		return nil
	}))
}
