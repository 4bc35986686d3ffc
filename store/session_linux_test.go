package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store"
)

// An idle handle keeps the file for its idle grace, but a process that
// queues for the file meanwhile does not wait for the grace to pass: the
// holder looks at the queue every millisecond and lets it in.
func TestSessions_IdleHolderLetsAQueuedWriterIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	first, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true, IdleGrace: time.Minute})
	require.NoError(t, err)
	defer first.Close()
	put := func(b *store.Bolt, text string) {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			_, err := tx.PutBlob([]byte(text))
			return err
		}))
	}
	put(first, "first") // the session stays open, idle, for a minute
	second, err := store.OpenBolt(path, store.BoltOptions{NoSync: true, LockTimeout: 30 * time.Second})
	require.NoError(t, err)
	defer second.Close()
	start := time.Now()
	put(second, "second")
	// A minute is the grace; a busy machine may delay the handover by
	// far less than that.
	assert.Less(t, time.Since(start), 10*time.Second, "the queued writer waited for the idle grace")
}
