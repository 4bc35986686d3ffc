package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// damageableRepo makes a repository file of 600 imported messages in s's
// directory and returns a copy of its bytes.
func damageableRepo(t *testing.T, s *sandbox) (db string, data []byte) {
	t.Helper()
	db = s.initRepo()
	s.importMessages(600, func(i int) string { return fmt.Sprintf("m%d", i) })
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	return db, data
}

// Every command on a file bbolt cannot open because its pages are damaged
// exits 1 (the repository is damaged), not 8 (not found), and says what
// to do: fsck and fsck --salvage, never 'tract init', nor bbolt's
// "assertion failed".
func TestDamagedFile_OpenFailureExitsOneWithFsckHint(t *testing.T) {
	fileOnly(t, "it truncates a file")
	t.Parallel()
	s := newSandbox(t)
	_, data := damageableRepo(t, s)
	path := filepath.Join(s.dir, "cut.db")
	require.NoError(t, os.WriteFile(path, data[:20000], 0o600))

	for _, args := range [][]string{
		{"log"}, {"status"}, {"show"}, {"commit", "--role", "user", "-m", "x"}, {"branch"}, {"gc"}, {"compile"},
	} {
		r := s.tract(append([]string{"--db", path}, args...)...)
		requireExit(t, r, exitError)
		assert.Contains(t, r.Stderr, "tract: open "+path+": repository is corrupted: ", r.String())
		assert.Contains(t, r.Stderr, "'tract fsck --salvage NEW.db'", r.String())
		assert.NotContains(t, r.Stderr, "assertion failed", r.String())
		assert.NotContains(t, r.Stderr, "tract init", r.String())
	}
	r := s.tract("copy", path, filepath.Join(s.dir, "x.db"))
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "repository is corrupted", r.String())
	assert.NotContains(t, r.Stderr, "tract init", r.String())
}

// fsck on a repository whose two meta pages are zeroed reports it damaged
// (exit 1) by reading the pages itself, and --salvage recovers its
// commits and branches (those still in the journal too); a text file
// stays not a repository (exit 8).
func TestFsck_BothMetaPagesZeroed(t *testing.T) {
	fileOnly(t, "it zeroes a file's meta pages")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.importMessages(100, func(i int) string { return fmt.Sprintf("m%d", i) })
	s.ok("branch", "side")
	for i := range 3 {
		s.commit("user", fmt.Sprintf("after the import %d", i))
	}
	want := s.ok("log", "--all", "--oneline").Stdout
	data := mustRead(t, db)
	clear(data[:2*4096])
	path := filepath.Join(s.dir, "zeroed.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))

	r := s.tract("--db", path, "fsck")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stdout, "neither meta page is valid", r.String())
	assert.Contains(t, r.Stdout, "checked 103 commits", r.String())
	assert.NotContains(t, r.Stderr, "tract init", r.String())

	r = s.tract("--db", path, "log")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "repository is corrupted: neither meta page is valid", r.String())

	out := filepath.Join(s.dir, "salvaged.db")
	r = s.tract("--db", path, "fsck", "--salvage", out)
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stdout, "salvaged 103 commits", r.String())
	assert.Equal(t, want, s.ok("--db", out, "log", "--all", "--oneline").Stdout)

	text := filepath.Join(s.dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, bytes.Repeat([]byte("just some text\n"), 1000), 0o600))
	r = s.tract("--db", text, "fsck")
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "not a tract repository", r.String())
}

// fsck --json on a repository with one of its pages zeroed, page by page
// (meta pages, root, free list, data): a report in tract's words, never an
// error, bbolt's panic text or page-type codes; a zeroed meta page names
// the page, what is wrong with it and which page the file is read
// through, and stderr says what to do.
func TestFsck_ZeroedPagesInTractsWords(t *testing.T) {
	fileOnly(t, "it zeroes pages of a file")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	for i := range 3 {
		s.commit("user", fmt.Sprintf("message %d", i))
	}
	data := mustRead(t, db)
	const page = 4096
	for n := range len(data) / page {
		damaged := bytes.Clone(data)
		clear(damaged[n*page : (n+1)*page])
		path := filepath.Join(s.dir, fmt.Sprintf("zero-%d.db", n))
		require.NoError(t, os.WriteFile(path, damaged, 0o600))

		r := s.tract("--db", path, "fsck", "--json")
		if r.Code != exitOK {
			requireExit(t, r, exitError)
			assert.Contains(t, r.Stderr, "'tract fsck --salvage NEW.db' copies what is intact", "page %d: %s", n, r)
		}
		var rep struct {
			Problems []struct{ Object, Message string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rep), "page %d: %s", n, r)
		for _, leak := range []string{"panic", "assertion failed", "bbolt", "unknown<", "type/flags", "invalid freelist"} {
			assert.NotContains(t, r.Stdout+r.Stderr, leak, "page %d: %s", n, r)
		}
		if n < 2 {
			require.NotEmpty(t, rep.Problems, "page %d", n)
			assert.Equal(t, fmt.Sprintf("page %d", n), rep.Problems[0].Object)
			assert.Contains(t, rep.Problems[0].Message, fmt.Sprintf("damaged meta page (all zeros): the file is read through meta page %d, as of transaction ", 1-n))
		}
	}

	clear(data[:page])
	path := filepath.Join(s.dir, "zero-0-text.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	r := s.tract("--db", path, "fsck")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stdout, "error: page 0: damaged meta page (all zeros): the file is read through meta page 1", r.String())
	assert.Contains(t, r.Stdout, "'tract fsck --salvage NEW.db' copies what is intact into a new one.", r.String())
}

// unwritableDir returns a directory the returned sandbox's commands may
// read but not add files to: root's directory, for the user nobody, when
// the tests run as root; else one without write permission. prepare, when
// set, fills it first; files it makes there are left writable for the
// returned sandbox.
func unwritableDir(t *testing.T, s *sandbox, prepare func(dir string)) (string, *sandbox) {
	t.Helper()
	dir := filepath.Join(s.dir, "ro")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if prepare != nil {
		prepare(dir)
		if os.Geteuid() == 0 {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				require.NoError(t, os.Chmod(filepath.Join(dir, e.Name()), 0o666))
			}
		}
	}
	if os.Geteuid() != 0 {
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir, s
	}
	for d := dir; strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	require.NoError(t, os.Chmod(filepath.Dir(tractBin), 0o755))
	return dir, s.asNobody()
}

// init where the file cannot be created says that its directory refuses
// it and what to do, not that an existing repository is read-only.
func TestInit_DirectoryNotWritable(t *testing.T) {
	fileOnly(t, "it creates a file")
	t.Parallel()
	s := newSandbox(t)
	dir, user := unwritableDir(t, s, nil)
	for _, db := range []string{filepath.Join(dir, "x.db"), filepath.Join(dir, "sub", "x.db")} {
		r := user.tract("--db", db, "init")
		requireExit(t, r, exitError)
		assert.Contains(t, r.Stderr, "cannot create repository "+db+": this user may not create files in the directory "+dir, r.String())
		assert.Contains(t, r.Stderr, "Choose a path in a directory you can write to", r.String())
		assert.NotContains(t, r.Stderr, "read-only", r.String())
		_, err := os.Stat(db)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	}
	r := user.in(dir).tract("init")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "may not create files in the directory "+dir, r.String())
}

// init and copy given a directory, or a file that is not a repository,
// where they would create one say what to choose instead, and never to
// run 'tract init'.
func TestInitAndCopy_PathThatIsNotARepository(t *testing.T) {
	fileOnly(t, "it names files")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	dir := filepath.Join(s.dir, "d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	garbage := filepath.Join(s.dir, "g.db")
	require.NoError(t, os.WriteFile(garbage, []byte("garbage\n"), 0o600))

	cases := []struct {
		name string
		args []string
		hint string
	}{
		{"init a directory", []string{"--db", dir, "init"},
			dir + " is a directory: give the path of a file in it, for example --db " + filepath.Join(dir, "tract.db")},
		{"init a file that is not a repository", []string{"--db", garbage, "init"},
			garbage + " is a file that is not a tract repository; init leaves it alone"},
		{"copy into a directory", []string{"copy", db, dir},
			"DST " + dir + " is a directory: give the path of a file in it"},
		{"copy into a file that is not a repository", []string{"copy", db, garbage},
			"DST is a file that is not a tract repository; copy leaves it alone. If an interrupted copy\n" +
				"left it, remove it and copy again (rm " + garbage + "); else give a path that does not exist yet."},
		{"copy from a missing file", []string{"copy", filepath.Join(s.dir, "missing.db"), filepath.Join(s.dir, "new.db")},
			"SRC must be a tract repository"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.forTest(t).tract(tc.args...)
			requireExit(t, r, exitNotFound)
			assert.Contains(t, r.Stderr, tc.hint, r.String())
			assert.NotContains(t, r.Stderr, "tract init", r.String())
		})
	}
	assert.Equal(t, "garbage\n", string(mustRead(t, garbage)), "left alone")
}

// An import large enough to sort on disk into a repository whose directory
// may not be written to (the file may) puts its sorted runs in the
// system's temporary directory; when TMPDIR refuses them too, the error
// says what the file was for and to set TMPDIR.
func TestImport_LargeIntoUnwritableDirectory(t *testing.T) {
	fileOnly(t, "it sorts beside a file")
	t.Parallel()
	s := newSandbox(t)
	var db string
	dir, user := unwritableDir(t, s, func(dir string) {
		db = filepath.Join(dir, "tract.db")
		s.ok("--db", db, "init")
	})
	var in strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&in, "{\"role\":\"user\",\"content\":\"%s %d\"}\n", strings.Repeat("x", 2000), i)
	}
	require.Greater(t, in.Len(), 3<<20, "more than one batch: the import sorts on disk")

	r := user.withEnv("TMPDIR", filepath.Join(s.dir, "missing")).tractStdin(in.String(), "--db", db, "import")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "cannot create a temporary file to sort the input in, in "+dir, r.String())
	assert.Contains(t, r.Stderr, "set TMPDIR", r.String())

	r = user.tractStdin(in.String(), "--db", db, "import")
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stderr, "Imported 2500 messages", r.String())
}

// A write to a repository fsck found damaged is refused with a message
// that names the repository.
func TestDamagedFile_WriteRefusalNamesTheRepository(t *testing.T) {
	fileOnly(t, "it damages a file's pages")
	t.Parallel()
	s := newSandbox(t)
	_, data := damageableRepo(t, s)
	from := len(data) / 3 / 4096 * 4096
	clear(data[from : from+4*4096])
	path := filepath.Join(s.dir, "zeroed.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	requireExit(t, s.tract("--db", path, "fsck"), exitError)

	r := s.tract("--db", path, "commit", "--role", "user", "-m", "x")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "tract: commit: repository "+path+" is marked damaged: fsck found ", r.String())
}
