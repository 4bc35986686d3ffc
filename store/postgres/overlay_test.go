package postgres_test

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

// A write transaction answers reads of what it wrote, and of the refs it
// read, without asking the server: here the server stops answering once
// they are known, and the reads still succeed; what it has not seen, it
// must ask for (and then times out).
func TestOverlay_WriteTransactionReadsItsOwnWrites(t *testing.T) {
	t.Parallel()
	_, p, s := openThrough(t)
	err := s.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.Ref(refs.HEAD) // HEAD, and the unborn main it names
		require.NoError(t, err)
		blob, err := tx.PutBlob([]byte("queued text"))
		require.NoError(t, err)
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(1, 0).UTC()}
		h, err := tx.PutCommit(c)
		require.NoError(t, err)
		require.NoError(t, tx.PutCounters(h, store.Counters{Depth: 1, Messages: 1, Tokens: 3}))
		require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h}))

		p.Freeze()
		got, err := tx.Blob(blob)
		require.NoError(t, err)
		assert.Equal(t, []byte("queued text"), got)
		ok, err := tx.HasCommit(h)
		require.NoError(t, err)
		assert.True(t, ok)
		back, err := tx.Commit(h)
		require.NoError(t, err)
		assert.Equal(t, blob, back.Blob)
		cs, ok, err := tx.Counters(h)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int64(3), cs.Tokens)
		r, err := tx.Ref("refs/heads/main")
		require.NoError(t, err)
		assert.Equal(t, h, r.Hash)
		_, err = tx.Ref(refs.HEAD)
		require.NoError(t, err)

		_, err = tx.Ref("refs/heads/never-read")
		require.Error(t, err, "a ref the transaction has not seen is asked of the server")
		p.Thaw()
		return err
	})
	require.Error(t, err)
}

// A symbolic ref is read with the ref it names and the counters of that
// ref's commit, in one round trip, and HEAD with ORIG_HEAD; a view answers
// the second read itself.
func TestOverlay_SymbolicRefBringsItsTarget(t *testing.T) {
	t.Parallel()
	direct, p, s := openThrough(t)
	var tip dag.Hash
	require.NoError(t, direct.Update(context.Background(), func(tx store.Tx) error {
		blob, err := tx.PutBlob([]byte("hello"))
		if err != nil {
			return err
		}
		if tip, err = tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(1, 0).UTC()}); err != nil {
			return err
		}
		if err := tx.PutCounters(tip, store.Counters{Depth: 1, Messages: 1, Tokens: 2}); err != nil {
			return err
		}
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: tip})
	}))
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		head, err := tx.Ref(refs.HEAD)
		require.NoError(t, err)
		assert.Equal(t, "refs/heads/main", head.Target)
		p.Freeze()
		defer p.Thaw()
		main, err := tx.Ref(head.Target)
		require.NoError(t, err)
		assert.Equal(t, tip, main.Hash)
		c, ok, err := tx.Counters(tip)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, store.Counters{Depth: 1, Messages: 1, Tokens: 2}, c)
		_, err = tx.Ref(refs.OrigHead) // read with HEAD, for status
		assert.ErrorIs(t, err, store.ErrNotFound)
		return nil
	}))
}
