package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// A sorter whose directory refuses its run files (here a path that is a
// file, not a directory; a directory without write permission does the
// same for a user other than root) writes them to $TMPDIR; when that
// refuses them too, the error says what the file was for and to set
// TMPDIR.
func TestPackSorter_DirectoryRefusesRuns(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "repository.db")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	add := func(s *store.PackSorter) error {
		for i := range 200 {
			e := store.PackEntry{Kind: store.PackBlob, Hash: dag.Sum([]byte(fmt.Sprint(i))), Value: []byte(fmt.Sprint(i))}
			if err := s.Add(e); err != nil {
				return err
			}
		}
		return nil
	}

	t.Run("to TMPDIR", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		s := store.NewPackSorter(notDir, 512)
		defer s.Close()
		require.NoError(t, add(s))
		assert.Greater(t, s.Runs(), 1)
		n := 0
		for _, err := range s.Sorted() {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, 200, n)
	})
	t.Run("TMPDIR refuses too", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		t.Setenv("TMPDIR", missing)
		s := store.NewPackSorter(notDir, 512)
		defer s.Close()
		err := add(s)
		require.Error(t, err)
		assert.ErrorContains(t, err, "cannot create a temporary file to sort the input in, in "+notDir)
		assert.ErrorContains(t, err, "nor in "+missing)
		assert.ErrorContains(t, err, "set TMPDIR to a directory this user may write to")
	})
}
