package store_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// fileHas reports whether the bytes of the file at path contain b.
func fileHas(t *testing.T, path string, b []byte) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.Contains(data, b)
}

// erasePending reads the pending-erasure record straight from the file.
func erasePending(t *testing.T, path string) bool {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	var pending bool
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		pending = tx.Bucket([]byte("meta")).Get([]byte("erase-pending")) != nil
		return nil
	}))
	return pending
}

// secretText returns a text with tag whose other bytes are random, so
// that it is kept as it is (compression would not make it smaller) and a
// search of the raw file finds it while it is stored.
func secretText(tag string) []byte {
	rest := make([]byte, 120)
	_, _ = crand.Read(rest)
	return append([]byte(tag+": "), rest...)
}

// Every write that drops stored text wipes the file's free pages before
// it returns: a deleted blob or commit, a rewritten reflog, a dropped pack.
func TestBolt_DeletingWritesLeaveNoBytesBehind(t *testing.T) {
	cases := []struct {
		name   string
		plant  func(tx store.Tx, secret []byte) error
		delete func(tx store.Tx, secret []byte) error
	}{
		{
			name:   "blob",
			plant:  func(tx store.Tx, secret []byte) error { _, err := tx.PutBlob(secret); return err },
			delete: func(tx store.Tx, secret []byte) error { return tx.DeleteBlob(dag.Sum(secret)) },
		},
		{
			name: "reflog entry",
			plant: func(tx store.Tx, secret []byte) error {
				return tx.AppendReflog(refs.HEAD, refs.Entry{Action: refs.ActionCommit, Message: string(secret)})
			},
			delete: func(tx store.Tx, _ []byte) error { return tx.ReplaceReflog(refs.HEAD, nil) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			b, err := store.OpenBolt(path, store.BoltOptions{Create: true})
			require.NoError(t, err)
			defer b.Close()
			secret := secretText(tc.name)
			// Pages go through several versions before the deletion, so
			// old copies of the text lie in free pages too.
			for i := range 5 {
				require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
					if i == 0 {
						return tc.plant(tx, secret)
					}
					_, err := tx.PutBlob([]byte(strings.Repeat("filler ", 100*i)))
					return err
				}))
			}
			require.True(t, fileHas(t, path, secret), "precondition: the text is in the file")

			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { return tc.delete(tx, secret) }))
			require.NoError(t, b.Close())
			assert.False(t, fileHas(t, path, secret), "the deleted text is still in the file")
			assert.False(t, erasePending(t, path), "the erasure is still marked pending")
		})
	}
}

// A crash between the transaction that deletes text and the wipe of the
// pages it freed leaves the pending record; the next open of the file, by
// any handle, read-only ones included, completes the erasure first.
func TestBolt_InterruptedErasureCompletesOnNextOpen(t *testing.T) {
	for _, opts := range []store.BoltOptions{{}, {ReadOnly: true}} {
		t.Run(map[bool]string{false: "read-write handle", true: "read-only handle"}[opts.ReadOnly], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			b, err := store.OpenBolt(path, store.BoltOptions{Create: true})
			require.NoError(t, err)
			store.WithoutJournal(b) // the test deletes the blob from its bucket
			secret := secretText("interrupted")
			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { _, err := tx.PutBlob(secret); return err }))
			require.NoError(t, b.Close())

			// What a kill right after the deleting commit leaves: the
			// deletion and its record, and the text in a free page.
			db, err := bolt.Open(path, 0o600, nil)
			require.NoError(t, err)
			h := dag.Sum(secret)
			require.NoError(t, db.Update(func(tx *bolt.Tx) error {
				require.NoError(t, tx.Bucket([]byte("blobs")).Delete(h[:]))
				return tx.Bucket([]byte("meta")).Put([]byte("erase-pending"), []byte{1})
			}))
			require.NoError(t, db.Close())
			require.True(t, fileHas(t, path, secret), "precondition: the deleted text is still in the file")

			b, err = store.OpenBolt(path, opts)
			require.NoError(t, err)
			require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
				ok, err := tx.HasBlob(h)
				assert.False(t, ok)
				return err
			}))
			require.NoError(t, b.Close())
			assert.False(t, fileHas(t, path, secret), "the next open left the deleted text in the file")
			assert.False(t, erasePending(t, path))
		})
	}
}
