package store_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
