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

func spooled(t *testing.T, s *store.DocSpool) []store.WordDoc {
	t.Helper()
	var out []store.WordDoc
	for d, err := range s.Docs() {
		require.NoError(t, err)
		out = append(out, d)
	}
	return out
}

// A spool gives its documents back in the order added, as often as asked,
// and leaves no file behind.
func TestDocSpool_GivesTheDocumentsBackInOrder(t *testing.T) {
	dir := t.TempDir()
	s := store.NewDocSpool(dir)
	assert.Empty(t, spooled(t, s), "an empty spool")
	var want []store.WordDoc
	for i := range 3000 {
		d := store.WordDoc{Commit: dag.Sum([]byte(fmt.Sprint(i))), Time: int64(i) - 1500}
		for j := range i % 7 {
			d.Words = append(d.Words, fmt.Sprintf("w%d", i*j))
		}
		if i%100 == 0 {
			d.Words = append(d.Words, "", "ünïcödé")
		}
		require.NoError(t, s.Add(d))
		want = append(want, d)
	}
	assert.Equal(t, 3000, s.Len())
	got := spooled(t, s)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Commit, got[i].Commit)
		assert.Equal(t, want[i].Time, got[i].Time)
		assert.Equal(t, len(want[i].Words), len(got[i].Words))
		if len(want[i].Words) > 0 {
			assert.Equal(t, want[i].Words, got[i].Words)
		}
	}
	assert.Len(t, spooled(t, s), len(want), "read again")
	require.NoError(t, s.Close())
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// A spool whose directory refuses its file writes it in the temporary
// directory.
func TestDocSpool_FallsBackToTheTemporaryDirectory(t *testing.T) {
	s := store.NewDocSpool(filepath.Join(t.TempDir(), "missing"))
	t.Setenv("TMPDIR", t.TempDir())
	require.NoError(t, s.Add(store.WordDoc{Words: []string{"a"}}))
	assert.Len(t, spooled(t, s), 1)
	require.NoError(t, s.Close())
	_, err := os.Stat(os.Getenv("TMPDIR"))
	require.NoError(t, err)
}
