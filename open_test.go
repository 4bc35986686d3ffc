package tract_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// OpenOrInit creates a missing repository and opens an existing one; many
// callers racing on a new path all end up in the one repository.
func TestOpenOrInit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agent", "tract.db")

	tr, err := tract.OpenOrInit(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.User(ctx, "first run")
	require.NoError(t, err)
	require.NoError(t, tr.Close())

	tr, err = tract.OpenOrInit(path, tract.WithNoSync())
	require.NoError(t, err)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"first run"}, textsOf(log), "the second run opens what the first made")
	require.NoError(t, tr.Close())

	t.Run("racing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tract.db")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr, err := tract.OpenOrInit(path, tract.WithNoSync())
				if err == nil {
					_, err = tr.User(ctx, "hello")
					tr.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			assert.NoError(t, err)
		}
		tr, err := tract.Open(path)
		require.NoError(t, err)
		defer tr.Close()
		log, err := tr.Log(ctx)
		require.NoError(t, err)
		assert.Len(t, log, 8, "one repository holds every caller's commit")
	})

	t.Run("not a repository", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "notes.txt")
		require.NoError(t, os.WriteFile(other, []byte("not a database"), 0o600))
		_, err := tract.OpenOrInit(other)
		assert.ErrorIs(t, err, tract.ErrNotRepository)
		data, err := os.ReadFile(other)
		require.NoError(t, err)
		assert.Equal(t, "not a database", string(data), "left alone")
	})
}

// Open of a path where no file is says so in both ways a caller checks:
// not a repository, and no such file.
func TestOpen_MissingFile(t *testing.T) {
	_, err := tract.Open(filepath.Join(t.TempDir(), "missing.db"))
	require.ErrorIs(t, err, tract.ErrNotRepository)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "no such file")
}
