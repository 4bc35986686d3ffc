package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/store"
)

// createBolt creates a repository in a temporary directory without fsync
// and closes it when the test ends. Unlike storetest.NewBolt it does not
// fsck it then: these tests damage repositories on purpose.
func createBolt(t *testing.T) *store.Bolt {
	t.Helper()
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// rawDB reaches the bbolt handle of a Bolt store, each call in a session of
// its own, so tests can plant damage and read bbolt's own figures.
type rawDB struct{ b *store.Bolt }

func raw(b *store.Bolt) rawDB { return rawDB{b} }

func (r rawDB) View(fn func(*bolt.Tx) error) error {
	return r.b.Exclusive(context.Background(), func(db *bolt.DB) error { return db.View(fn) })
}

func (r rawDB) Update(fn func(*bolt.Tx) error) error {
	return r.b.Exclusive(context.Background(), func(db *bolt.DB) error { return db.Update(fn) })
}

func (r rawDB) Info() *bolt.Info {
	var info *bolt.Info
	_ = r.b.Exclusive(context.Background(), func(db *bolt.DB) error {
		info = db.Info()
		return nil
	})
	return info
}
