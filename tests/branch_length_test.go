package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// One branch-name limit on every backend, 255 bytes, in tract's words:
// a 32,760-byte name used to reach bbolt ("branch: key too large", exit
// 1) on a file, and be taken by PostgreSQL. Run on both backends.
func TestBranch_NameLengthLimit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "a")
	longest := strings.Repeat("b", 255)
	s.ok("branch", longest)
	assert.Contains(t, s.ok("branch").Stdout, longest)
	for _, n := range []int{256, 32760, 40000} {
		name := strings.Repeat("x", n)
		for _, args := range [][]string{{"branch", name}, {"switch", "-c", name}} {
			r := s.tract(args...)
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, `invalid branch name "`+strings.Repeat("x", 64)+`…": a name is at most 255 bytes`, args[0])
			assert.NotContains(t, r.Stderr, "key too large")
			assert.Less(t, len(r.Stderr), 1000, "the error does not print the whole name")
		}
	}
	assert.Len(t, lines(s.ok("branch").Stdout), 2, "main and the 255-byte branch")
	// import --format openai names its branches NAME-N: a NAME of 254
	// bytes is refused before the input is read.
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "conv.jsonl"), []byte(`{"messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o600))
	r := s.tract("import", "--format", "openai", "--name", strings.Repeat("n", 254), "conv.jsonl")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "a name is at most 255 bytes, and this one has 256")
	// The 255-byte name goes into a file whatever the source's backend.
	dst := filepath.Join(s.dir, "copy.db")
	s.ok("copy", repoOf(s), dst)
	assert.Contains(t, s.withEnv("TRACT_DB", dst).ok("branch").Stdout, longest)
}

// repoOf is the sandbox's repository: its URL on PostgreSQL, else the
// file 'tract init' made.
func repoOf(s *sandbox) string {
	if s.repo != "" {
		return s.repo
	}
	return filepath.Join(s.dir, ".tract", "tract.db")
}

// A repository that already holds a longer name (PostgreSQL took any
// length; an older tract had no limit) stays readable: the branch is
// listed, read and deleted. A copy into another database keeps it; a
// copy into a file takes up to bbolt's 32 KiB key and refuses a longer
// name with an error in tract's words and what to do, leaving no file.
func TestBranch_ExistingLongNameOnPostgres(t *testing.T) {
	t.Parallel()
	s, u := pgSandbox(t)
	s.ok("init")
	s.commit("user", "a")
	mid, huge := strings.Repeat("m", 1000), strings.Repeat("h", 40000)
	tr, err := tract.Open(u)
	require.NoError(t, err)
	_, h, err := tr.Head(context.Background())
	require.NoError(t, err)
	require.NoError(t, tr.Store().Update(func(tx store.Tx) error {
		for _, name := range []string{mid, huge} {
			full := refs.BranchRef(name)
			if err := tx.SetRef(refs.Ref{Name: full, Hash: h}); err != nil {
				return err
			}
			if err := tx.AppendReflog(full, refs.Entry{New: h, Time: time.Now(), Action: refs.ActionBranch, Message: "branch: created from HEAD"}); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, tr.Close())

	out := s.ok("branch").Stdout
	assert.Contains(t, out, mid)
	assert.Contains(t, out, huge)
	assert.Contains(t, s.ok("log", "--oneline", huge).Stdout, "a")

	file := filepath.Join(s.dir, "copy.db")
	r := s.tract("copy", u, file)
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "ref refs/heads/"+strings.Repeat("h", 53)+"…: invalid branch name: the name is 40011 bytes, more than a repository file can hold (32768)")
	assert.Contains(t, r.Stderr, "'tract branch NEW OLD'")
	assert.Less(t, len(r.Stderr), 1500)
	_, err = os.Stat(file)
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused copy leaves no file")

	other := pgtest.RepositoryURL(t, pgtest.URL(t))
	s.ok("copy", u, other)
	assert.Contains(t, s.withEnv("TRACT_DB", other).ok("branch").Stdout, huge, "database to database keeps the name")

	s.ok("branch", "short", huge)
	s.ok("branch", "-d", huge)
	s.ok("copy", u, file)
	fs := s.withEnv("TRACT_DB", file)
	out = fs.ok("branch").Stdout
	assert.Contains(t, out, mid, "a 1,000-byte name fits a file")
	assert.Contains(t, out, "short")
	fs.ok("branch", "-d", mid)
}
