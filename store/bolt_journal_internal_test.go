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
	const rolledBack = "rolled back, a long blob that the index must not keep"
	errRolledBack := errors.New("the commit failed")
	checkpointed, err := writeBlob(b, rolledBack, false, errRolledBack)
	require.ErrorIs(t, err, errRolledBack)
	require.True(t, checkpointed, "the record reached the bound")
	// The next write's record takes the number again; waited for by
	// others, it leaves the checkpoint due.
	checkpointed, err = writeBlob(b, "second", true, nil)
	require.NoError(t, err)
	assert.False(t, checkpointed)
	require.NoError(t, b.View(ctx, func(tx Tx) error {
		for _, text := range []string{"first", "second"} {
			data, err := tx.Blob(dag.Sum([]byte(text)))
			require.NoError(t, err, text)
			assert.Equal(t, text, string(data))
		}
		ok, err := tx.HasBlob(dag.Sum([]byte(rolledBack)))
		require.NoError(t, err)
		assert.False(t, ok)
		return nil
	}))
}

// writeBlob stores blob text in a write transaction of b's own, not
// grouped, that others wait for when crowded, and that ends with the
// error end after its journal record is written (nil: it commits). It
// reports whether the transaction checkpointed the journal.
func writeBlob(b *Bolt, text string, crowded bool, end error) (checkpointed bool, err error) {
	err = b.inSession(context.Background(), true, func(s *session) error {
		return s.db.Update(func(tx *bolt.Tx) error {
			btx, err := b.beginWrite(s, tx)
			if err != nil {
				return err
			}
			if _, err := btx.PutBlob([]byte(text)); err != nil {
				return err
			}
			btx.crowded = crowded
			if err := btx.finishWrite(); err != nil {
				return err
			}
			checkpointed = btx.checkpointed
			return end
		})
	})
	return checkpointed, err
}
