//go:build linux

package store_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// gateHeld reports whether someone queues for path's lock (holds the gate
// byte, far past the end of the file; see "Sharing the file" in
// docs/storage.md).
func gateHeld(t *testing.T, path string) bool {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart, Start: 1 << 62, Len: 1}
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk))
	return lk.Type != unix.F_UNLCK
}

// A handle that queued for the file while another file was renamed over
// the path gets the old file's lock, notices, and writes to the new file:
// nothing is written through a stale descriptor.
func TestBolt_WaiterFollowsAFileRenamedOverThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tract.db")
	replacement := filepath.Join(dir, "replacement.db")
	for _, p := range []string{path, replacement} {
		b, err := store.OpenBolt(p, store.BoltOptions{Create: true, NoSync: true})
		require.NoError(t, err)
		require.NoError(t, b.Close())
	}
	holder, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer holder.Close()
	waiter, err := store.OpenBolt(path, store.BoltOptions{NoSync: true, LockTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer waiter.Close()

	done := make(chan error, 1)
	require.NoError(t, holder.Exclusive(context.Background(), func(*bolt.DB) error {
		go func() {
			done <- waiter.Update(context.Background(), func(tx store.Tx) error {
				_, err := tx.PutBlob([]byte("where does this go?"))
				return err
			})
		}()
		require.Eventually(t, func() bool { return gateHeld(t, path) }, 5*time.Second, time.Millisecond, "the waiter never queued")
		return os.Rename(replacement, path)
	}))
	require.NoError(t, <-done)

	fresh, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true})
	require.NoError(t, err)
	defer fresh.Close()
	require.NoError(t, fresh.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("where does this go?")))
		assert.True(t, ok, "the write went to the file the path names now")
		return err
	}))
}
