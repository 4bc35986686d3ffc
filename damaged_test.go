package tract_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// A repository Fsck finds damaged refuses writes until it is checked clean
// again; Salvage copies what is intact into a new repository meanwhile.
func TestFsckFile_DamageMarksAndSalvageRecovers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	msgs := chain(600, 300, "m")
	_, err = tr.Import(ctx, msgs)
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	// Zero four pages a third of the way in: some commits lose their text
	// or their page.
	bad := append([]byte(nil), good...)
	from := len(bad) / 3 / 4096 * 4096
	clear(bad[from:][:4*4096])
	require.NoError(t, os.WriteFile(path, bad, 0o600))

	r, err := tract.FsckFile(ctx, path)
	require.NoError(t, err)
	require.False(t, r.OK(), "fsck missed four zeroed pages")

	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.User(ctx, "more")
	var damaged *tract.DamagedError
	require.ErrorAs(t, err, &damaged, "a write to a repository found damaged")
	assert.ErrorIs(t, err, tract.ErrDamaged)
	assert.Equal(t, len(r.Problems), damaged.Problems)
	assert.Equal(t, path, damaged.Path)
	assert.Contains(t, err.Error(), "repository "+path+" is marked damaged", "the message names the file")
	require.NoError(t, tr.Close())

	out := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := tract.Salvage(ctx, path, out)
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Lost)
	// Every commit that verifies comes back, even one whose parent or
	// text was on the zeroed pages.
	assert.Positive(t, rep.Commits)
	assert.LessOrEqual(t, rep.Commits, len(msgs))
	assert.True(t, rep.Commits < len(msgs) || rep.LostTexts > 0, "nothing lost on four zeroed pages: %+v", rep)
	check, err := tract.FsckFile(ctx, out)
	require.NoError(t, err)
	assert.True(t, check.OK(), "the salvaged repository: %v", check.Problems)

	// Repaired (the damaged pages put back) and checked clean, the file
	// takes writes again: the clean check clears the mark fsck left.
	marked, err := os.ReadFile(path)
	require.NoError(t, err)
	copy(marked[from:from+4*4096], good[from:])
	require.NoError(t, os.WriteFile(path, marked, 0o600))
	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.User(ctx, "more")
	require.ErrorIs(t, err, tract.ErrDamaged, "the mark outlives the repair until fsck runs")
	require.NoError(t, tr.Close())
	r, err = tract.FsckFile(ctx, path)
	require.NoError(t, err)
	require.True(t, r.OK(), "%v", r.Problems)
	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	_, err = tr.User(ctx, "more")
	assert.NoError(t, err)
}

// A file cut short at any page fails to open or read with an error that
// names the damage, never the Go runtime's text (which the memory faults
// of reading past a truncated file's end would give).
func TestTruncatedFile_ErrorsNameTheDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.Import(ctx, chain(300, 300, "m"))
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "side", "")
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	cut := filepath.Join(dir, "cut.db")
	failures := 0
	for size := 4096; size < len(good); size += 4096 {
		require.NoError(t, os.WriteFile(cut, good[:size], 0o600))
		check := func(what string, err error) {
			if err == nil {
				return
			}
			failures++
			assert.NotContains(t, err.Error(), "runtime error", "%s of a file cut at %d", what, size)
			assert.NotContains(t, err.Error(), "nil pointer", "%s of a file cut at %d", what, size)
		}
		tr, err := tract.Open(cut, tract.WithNoSync())
		check("open", err)
		if err != nil {
			continue
		}
		_, err = tr.Status(ctx)
		check("status", err)
		_, err = tr.LogAll(ctx)
		check("log --all", err)
		_, err = tr.Compile(ctx)
		check("compile", err)
		_, err = tr.Branches(ctx)
		check("branches", err)
		_, err = tr.Reflog(ctx, "HEAD")
		check("reflog", err)
		check("close", tr.Close())
	}
	assert.Positive(t, failures, "no cut made anything fail")
}
