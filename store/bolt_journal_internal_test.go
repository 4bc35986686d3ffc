package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// A write transaction that checkpointed the journal and then rolled back
// (its commit failed, say) leaves the session's index of the journal as
// the file has it: the record it appended, which the next write's record
// replaces under the same number, is not in the index.
func TestJournal_ARolledBackCheckpointLeavesTheIndex(t *testing.T) {
	b, _ := groupStore(t)
	b.journal = journalPolicy{records: 2, bytes: 1 << 20, recordBytes: 64 << 10, carryBytes: 16 << 10}
	ctx := context.Background()
	require.NoError(t, b.Update(ctx, func(tx Tx) error { _, err := tx.PutBlob([]byte("first")); return err }))
	errRolledBack := errors.New("the commit failed")
	err := b.inSession(ctx, true, func(s *session) error {
		return s.db.Update(func(tx *bolt.Tx) error {
			btx, err := b.beginWrite(s, tx)
			if err != nil {
				return err
			}
			if _, err := btx.PutBlob([]byte("rolled back, a long blob that the index must not keep")); err != nil {
				return err
			}
			if err := btx.finishWrite(); err != nil {
				return err
			}
			require.True(t, btx.checkpointed, "the record reached the bound")
			return errRolledBack
		})
	})
	require.ErrorIs(t, err, errRolledBack)
	// The next write's record takes the number again; waited for by
	// others, it leaves the checkpoint due.
	require.NoError(t, b.inSession(ctx, true, func(s *session) error {
		return s.db.Update(func(tx *bolt.Tx) error {
			btx, err := b.beginWrite(s, tx)
			if err != nil {
				return err
			}
			if _, err := btx.PutBlob([]byte("second")); err != nil {
				return err
			}
			btx.crowded = true
			if err := btx.finishWrite(); err != nil {
				return err
			}
			assert.False(t, btx.checkpointed)
			return nil
		})
	}))
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		for _, text := range []string{"first", "second"} {
			data, err := tx.Blob(dag.Sum([]byte(text)))
			require.NoError(t, err, text)
			assert.Equal(t, text, string(data))
		}
		ok, err := tx.HasBlob(dag.Sum([]byte("rolled back, a long blob that the index must not keep")))
		require.NoError(t, err)
		assert.False(t, ok)
		return nil
	}))
}
