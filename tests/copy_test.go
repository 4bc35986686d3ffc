package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// A copy carries the whole repository: log --all, every reflog, the
// branches and HEAD read the same on both sides, and fsck finds the copy
// clean.
func TestCopy_FileToFileReadsTheSame(t *testing.T) {
	fileOnly(t, "copies between files (TestPostgres_CopyFileToDatabaseAndBack copies through a database)")
	t.Parallel()
	s := newSandbox(t)
	src := s.initRepo()
	s.commit("system", "You are terse.")
	s.commit("user", "hello")
	s.commit("assistant", "hi")
	s.ok("switch", "-c", "side")
	s.commit("user", "on the side")
	s.ok("switch", "main")
	s.ok("reset", "--soft", "HEAD~1") // an orphan, and ORIG_HEAD
	s.importMessages(300, func(i int) string { return "bulk " + strings.Repeat("x", i%7) })

	dst := filepath.Join(s.dir, "backup", "copy.db")
	r := s.ok("copy", src, dst)
	assert.Regexp(t, `^Copied \d+ commits and \d+ blobs \([^)]+, every one re-hashed\), \d+ refs and \d+ reflog entries from `, r.Stdout)
	assert.Contains(t, r.Stdout, dst)

	c := s.withEnv("TRACT_DB", dst)
	for _, args := range [][]string{
		{"log", "--all"}, {"log", "--all", "--json"}, {"branch", "--json"}, {"status"},
		{"reflog", "HEAD"}, {"reflog", "main"}, {"reflog", "side"}, {"show", "ORIG_HEAD"}, {"stats", "--json"},
	} {
		// Only the repository's path, which status prints, differs.
		want := strings.ReplaceAll(s.ok(args...).Stdout, src, dst)
		assert.Equal(t, want, c.ok(args...).Stdout, "tract %v", args)
	}
	c.fsckOK()
	// The copy is a repository like any other.
	c.commit("user", "after the copy")
}

// A copy goes only into a new or empty repository; a second copy into
// the first one is refused and changes nothing.
func TestCopy_RefusesANonEmptyDestination(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	src := s.initRepo()
	s.commit("user", "hello")
	dst := filepath.Join(s.dir, "copy.db")
	c := s.withEnv("TRACT_DB", dst)

	c.ok("init") // empty: takes a copy
	s.ok("copy", src, dst)
	before := c.snapshot()
	s.commit("user", "more")

	r := s.tract("copy", src, dst)
	requireExit(t, r, exitUsage)
	assertNoCrash(t, r)
	assert.Contains(t, r.Stderr, "destination repository is not empty")
	assert.Contains(t, r.Stderr, "does not exist yet")
	c.requireUnchanged(before)
}

// An object whose bytes no longer match its hash stops the copy with an
// error naming it, and leaves no destination behind.
func TestCopy_CorruptObjectStopsTheCopy(t *testing.T) {
	fileOnly(t, "it corrupts an object in a file")
	t.Parallel()
	s := newSandbox(t)
	src := s.initRepo()
	marker := "a message whose bytes the disk will change"
	s.commit("user", marker)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.Contains(t, string(b), marker)
	b = bytes.ReplaceAll(b, []byte(marker), []byte(strings.Replace(marker, "disk", "DISK", 1)))
	require.NoError(t, os.WriteFile(src, b, 0o600))

	dst := filepath.Join(s.dir, "copy.db")
	r := s.tract("copy", src, dst)
	requireExit(t, r, exitError)
	assertNoCrash(t, r)
	assert.Contains(t, r.Stderr, "repository is corrupted")
	assert.Contains(t, r.Stderr, ": its content hashes to")
	assert.Contains(t, r.Stderr, "blob "+dag.Sum([]byte(marker)).String())
	_, err = os.Stat(dst)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
