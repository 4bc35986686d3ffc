//go:build unix

package store_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store"
)

// FileInUse tells a repository file a store has open (in a transaction,
// or lingering between them) from one nobody has: what copy and salvage
// need to remove a partial file a killed run left, and only such a one.
func TestFileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	busy, err := store.FileInUse(path)
	require.NoError(t, err)
	assert.False(t, busy, "a missing file")

	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	inside := false
	require.NoError(t, b.View(func(store.Tx) error {
		inside, err = store.FileInUse(path)
		return err
	}))
	assert.True(t, inside, "a file in a read transaction")
	done := b.Linger()
	busy, err = store.FileInUse(path)
	require.NoError(t, err)
	assert.True(t, busy, "a file a store keeps open between transactions")
	done()
	require.NoError(t, b.Close())
	busy, err = store.FileInUse(path)
	require.NoError(t, err)
	assert.False(t, busy, "a closed file")
}
