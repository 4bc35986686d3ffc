package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store"
)

// A repository file whose meta pages are damaged or cut off is a damaged
// repository (ErrCorrupt, which FsckFile reads around), while a file that
// is no bbolt file at all stays not a repository.
func TestOpenBolt_MetaDamageIsCorruptionNotAnotherFile(t *testing.T) {
	data, _ := populatedRepo(t)
	zeroed := bytes.Clone(data)
	clear(zeroed[:2*4096])
	tests := []struct {
		name    string
		content []byte
		corrupt bool
		wantMsg string
	}{
		{"both meta pages zeroed", zeroed, true, "neither meta page is valid"},
		{"cut inside the first page", data[:100], true, "the file is cut short: 100 bytes"},
		{"cut after the first page", data[:4096], true, "the file is cut short: 4096 bytes"},
		{"text", bytes.Repeat([]byte("not a bbolt file\n"), 2000), false, "not a tract repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			_, err := store.OpenBolt(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
			require.Error(t, err)
			assert.ErrorIs(t, err, store.ErrNotRepository, "a file OpenBolt cannot use")
			assert.Equal(t, tt.corrupt, errors.Is(err, store.ErrCorrupt), "%v", err)
			assert.ErrorContains(t, err, tt.wantMsg)

			r, err := store.FsckFile(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
			if !tt.corrupt {
				assert.ErrorIs(t, err, store.ErrNotRepository)
				return
			}
			require.NoError(t, err, "fsck reads a damaged file itself")
			assert.False(t, r.OK())
		})
	}
}

// With both meta pages gone there is no root to walk from, but FsckFile
// and Salvage find every object and ref page by page.
func TestSalvage_BothMetaPagesZeroed(t *testing.T) {
	data, _ := populatedRepo(t)
	dir := t.TempDir()
	intact := filepath.Join(dir, "intact.db")
	require.NoError(t, os.WriteFile(intact, data, 0o600))
	want, err := store.Salvage(intact, filepath.Join(dir, "from-intact.db"))
	require.NoError(t, err)
	require.Positive(t, want.Commits)

	damaged := bytes.Clone(data)
	clear(damaged[:2*4096])
	path := filepath.Join(dir, "r.db")
	require.NoError(t, os.WriteFile(path, damaged, 0o600))

	r, err := store.FsckFile(path, store.BoltOptions{})
	require.NoError(t, err)
	assert.False(t, r.OK())
	assert.Equal(t, want.Commits, r.Commits)

	out := filepath.Join(dir, "salvaged.db")
	rep, err := store.Salvage(path, out)
	require.NoError(t, err)
	assert.Equal(t, want.Commits, rep.Commits, "every commit is found page by page")
	assert.Equal(t, want.Refs, rep.Refs, "every ref")
	assert.Zero(t, rep.ReflogEntries, "the reflog is not placed without the meta pages")
	require.NotEmpty(t, rep.Lost)
	assert.Contains(t, rep.Lost[0].Message, "neither meta page is valid")

	check, err := store.FsckFile(out, store.BoltOptions{})
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)
}
