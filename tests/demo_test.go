package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// The README's first command: offline, keyless, and leaving nothing behind.
func TestDemo_RunsOfflineAndLeavesNothing(t *testing.T) {
	s := newSandbox(t)
	tmp := t.TempDir()
	s = s.withEnv("TMPDIR", tmp)
	for k := range s.env {
		require.NotContains(t, k, "OPENAI", "the environment must hold no model settings")
	}
	r := s.ok("demo")
	out := r.Stdout
	for _, want := range []string{
		"scripted",                         // it says the model is scripted
		"attempt 1/3: Sure! Here it is",    // the failed attempt
		"rejected: invalid JSON at line 1", // its diagnosis
		"steering (committed, then sent): Your previous response failed validation: invalid JSON", // the steering quotes it
		"attempt 2/3: passed",
		"purified",
		"✗ verification_failed",   // log --all: the orphaned attempt
		"steering: Your previous", // log --all: the steering
		"orphaned by purify",      // log --all: the purified branch
		"orphaned by compress",    // the compress
		"$ tract stats",
		"First-attempt success  1 (50.0%)",
		"demo-1:json   1      2         success (retry worked)",
		"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
		`tract chat --validate json "`,
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^\* [0-9a-f]{8} \(HEAD -> main\) summary: `), out, "the branch ends in the summary")
	assert.Empty(t, dirNames(t, s.dir), "nothing written to the working directory")
	assert.Empty(t, dirNames(t, tmp), "the temporary repository is removed")
}

func TestDemo_KeepSaysWhereTheRepositoryIs(t *testing.T) {
	s := newSandbox(t)
	tmp := t.TempDir()
	r := s.withEnv("TMPDIR", tmp).ok("demo", "--keep")
	kept := regexp.MustCompile(`The repository is kept at (\S+):`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, kept, r.String())
	assert.Equal(t, tmp, filepath.Dir(filepath.Dir(kept[1])))
	all := s.ok("--db", kept[1], "log", "--all", "--oneline").Stdout
	assert.Contains(t, all, "steering")
	s.ok("--db", kept[1], "fsck")
	assert.Empty(t, dirNames(t, s.dir))
}

func TestDemo_DBCreatesThatRepository(t *testing.T) {
	s := newSandbox(t)
	db := filepath.Join(t.TempDir(), "demo.db")
	r := s.ok("--db", db, "demo")
	assert.Contains(t, r.Stdout, "The repository is kept at "+db)
	s.ok("--db", db, "fsck")

	again := s.tract("--db", db, "demo")
	requireExit(t, again, exitUsage)
	assert.Contains(t, again.Stderr, "does not exist yet")
}

// A repository in the working directory (or named by TRACT_DB) is not the
// demo's: it is left as it was.
func TestDemo_LeavesTheRepositoryHereAlone(t *testing.T) {
	fileOnly(t, "it checks the repository file's bytes and time")
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "real work")
	before := s.snapshot()
	info, err := os.Stat(s.dbPath())
	require.NoError(t, err)

	s.withEnv("TMPDIR", t.TempDir(), "TRACT_DB", s.dbPath()).ok("demo")

	after, err := os.Stat(s.dbPath())
	require.NoError(t, err)
	assert.Equal(t, info.ModTime(), after.ModTime(), "the file was not written")
	s.requireUnchanged(before)
	assert.Equal(t, []string{".tract"}, dirNames(t, s.dir))
}
