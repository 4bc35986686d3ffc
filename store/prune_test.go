package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// A branch of three commits and a side chain of two hanging off its
// first: the side chain is reachable from no ref until a reflog names it,
// and deleting it takes its commits, its own blobs and the reflog entries
// that name them.
func TestPrune_ReachableOrphansAndDelete(t *testing.T) {
	st := store.NewMemory()
	main, mainBlobs := chainOf(t, dag.Hash{}, 3)
	side, sideBlobs := chainOfTexts(t, main[0].Hash, "attempt", 2)
	require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error {
		if err := store.PutChain(tx, time.Now(), main, mainBlobs); err != nil {
			return err
		}
		if err := store.PutChain(tx, time.Now(), side, sideBlobs); err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: main[2].Hash}); err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: refs.HEAD, Target: "refs/heads/main"}); err != nil {
			return err
		}
		return tx.AppendReflog(refs.HEAD, refs.Entry{Old: side[1].Hash, New: main[2].Hash, Time: time.Now(), Action: "reset", Message: "reset: moving away"})
	}))

	require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error {
		tips, err := store.RefTips(tx)
		require.NoError(t, err)
		assert.Equal(t, []dag.Hash{main[2].Hash, main[2].Hash}, tips, "HEAD (through main) and main")
		g, err := store.LoadGraph(tx)
		require.NoError(t, err)
		reach, err := store.Reachable(tx, g)
		require.NoError(t, err)
		dead := make([]bool, g.Len())
		for i := range g.Len() {
			dead[i] = !reach[i]
		}
		assert.True(t, store.Dead(g, dead, side[0].Hash))
		assert.False(t, store.Dead(g, dead, main[0].Hash))
		orphaned, err := store.OrphaningEntries(tx)
		require.NoError(t, err)
		assert.Equal(t, "reset", orphaned[side[1].Hash].Action, "the entry that left the side chain")

		d, err := store.DeleteCommits(tx, g, dead, func(refs.Entry) bool { return false }, nil)
		require.NoError(t, err)
		assert.Equal(t, store.Deleted{Commits: 2, Blobs: 2, ReflogEntries: 1}, d)
		_, err = tx.Commit(side[0].Hash)
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = store.ReadCommitsStored(tx, []dag.Hash{main[0].Hash, side[0].Hash})
		assert.ErrorIs(t, err, store.ErrNotFound, "a page with a missing commit")
		return nil
	}))
}

// AppendChainCommits reads a first-parent chain with its commits, those
// keep refuses left out, and ReadTexts their texts.
func TestPages_ChainAndTexts(t *testing.T) {
	st := store.NewMemory()
	commits, blobs := chainOf(t, dag.Hash{}, 5)
	require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error { return store.PutChain(tx, time.Now(), commits, blobs) }))

	require.NoError(t, st.View(context.Background(), func(tx store.Tx) error {
		notes := func(l store.ChainLink) bool { return l.Header.Kind != dag.KindNote }
		links, cs, err := store.AppendChainCommits(nil, tx, commits[4].Hash, 10, notes)
		require.NoError(t, err)
		require.Len(t, links, 5)
		assert.Equal(t, commits[4].Hash, store.ChainHashes(links)[0], "newest first")
		assert.Nil(t, cs[2], "commit 2 is a note: left out")
		assert.NotNil(t, cs[0])
		texts, err := store.ReadTexts(tx, []dag.Hash{commits[0].Commit.Blob, commits[4].Commit.Blob}, []dag.Hash{commits[0].Hash, commits[4].Hash})
		require.NoError(t, err)
		assert.Equal(t, []string{"message 0", "message 4"}, texts)
		return nil
	}))
}
