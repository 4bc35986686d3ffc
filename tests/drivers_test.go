package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// goTool runs the go command in the module's root and returns its
// standard output.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go %s\n%s", strings.Join(args, " "), stderr.String())
	return string(out)
}

// deps returns the packages pkg depends on, itself included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	return strings.Fields(goTool(t, "list", "-deps", pkg))
}

// linksPgx reports the first package of pgx (or of its pool, puddle)
// among ds, "" when there is none.
func linksPgx(ds []string) string {
	for _, d := range ds {
		if strings.HasPrefix(d, "github.com/jackc/") {
			return d
		}
	}
	return ""
}

// A Go program that embeds a repository file links no database client:
// the PostgreSQL backend is a driver its package registers when a program
// imports it, and the tract command is such a program.
func TestDrivers_AFileOnlyProgramLinksNoPgx(t *testing.T) {
	t.Parallel()
	fileOnly := deps(t, "./tests/testdata/fileonly")
	assert.Contains(t, fileOnly, "github.com/tractdag/tract")
	assert.Contains(t, fileOnly, "github.com/tractdag/tract/store")
	assert.NotContains(t, fileOnly, "github.com/tractdag/tract/store/postgres")
	assert.Empty(t, linksPgx(fileOnly), "a program that embeds a file links pgx")

	cli := deps(t, "./cmd/tract")
	assert.Contains(t, cli, "github.com/tractdag/tract/store/postgres")
	assert.NotEmpty(t, linksPgx(cli), "the tract command keeps PostgreSQL")
}

// The program without the PostgreSQL driver works on its file, and a
// postgres:// URL gets an error naming the package to import, with the
// URL's password nowhere.
func TestDrivers_APostgresURLWithoutTheDriverSaysWhatToImport(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "fileonly")
	goTool(t, "build", "-o", bin, "./tests/testdata/fileonly")
	dir := t.TempDir()
	cmd := exec.Command(bin, dir, "postgres://ada:s3cret@db.invalid/tract?repository=bot", "postgresql://db.invalid/tract?password=s3cret")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 3, "%s", out)
	_, err = dag.ParseHash(lines[0])
	require.NoError(t, err, "the commit in the file: %s", lines[0])
	assert.Equal(t, `no store driver registered for postgres:// URLs: the program must import _ "github.com/tractdag/tract/store/postgres", which registers it`, lines[1])
	assert.Equal(t, `no store driver registered for postgresql:// URLs: the program must import _ "github.com/tractdag/tract/store/postgres", which registers it`, lines[2])
	assert.NotContains(t, string(out), "s3cret")
	_, err = os.Stat(filepath.Join(dir, "tract.db"))
	require.NoError(t, err)
}

// The tract command has the PostgreSQL driver and no other: a URL of
// another scheme is a usage error that says what a repository can be,
// and creates no file.
func TestDrivers_TheCommandRefusesAURLItHasNoDriverFor(t *testing.T) {
	t.Parallel()
	s := newSandbox(t).withEnv("TRACT_DB", "")
	for _, args := range [][]string{{"init"}, {"log"}, {"copy", "mysql://root:s3cret@db/x", "b.db"}} {
		if args[0] != "copy" {
			args = append([]string{"--db", "mysql://root:s3cret@db/x"}, args...)
		}
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "no store driver registered for mysql:// URLs (the program has drivers for postgres://, postgresql://)", r.String())
		assert.Contains(t, r.Stderr, "A repository is a file path or a postgres:// (postgresql://) URL.", r.String())
		assert.NotContains(t, r.Stderr, "s3cret", r.String())
		assert.NotContains(t, r.Stderr, "--help", r.String())
	}
	entries, err := os.ReadDir(s.dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, "mysql:", e.Name(), "a URL is not a path")
	}
}
