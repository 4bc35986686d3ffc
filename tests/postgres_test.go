package tests

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres/pgtest"
)

// pgSandbox returns a sandbox whose TRACT_DB is a fresh repository in the
// test database (not created yet), and the repository's URL.
func pgSandbox(t *testing.T) (*sandbox, string) {
	t.Helper()
	u := pgtest.RepositoryURL(t, pgtest.URL(t))
	return newSandbox(t).withEnv("TRACT_DB", u), u
}

func urlPassword(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.NotEmpty(t, pw, "the test database URL has a password")
	return pw
}

// assertNoPassword fails when any output of r shows pw.
func assertNoPassword(t *testing.T, r result, pw string) {
	t.Helper()
	assert.NotContains(t, r.Stdout, pw, "the password on stdout\n%s", r)
	assert.NotContains(t, r.Stderr, pw, "the password on stderr\n%s", r)
}

// The whole life of a repository in PostgreSQL through the CLI: migrate,
// init, commit, a validated chat that retries and purifies, log --all,
// reset, gc and fsck, with the URL in TRACT_DB and in --db, and the
// password in no output.
func TestPostgres_CLIEndToEnd(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	pw := urlPassword(t, db)
	run := func(args ...string) result {
		t.Helper()
		r := s.ok(args...)
		assertNoPassword(t, r, pw)
		return r
	}

	assert.Contains(t, run("migrate").Stdout, "The tract schema is up to date (version 3)")
	r := run("init")
	assert.Contains(t, r.Stderr, "Initialized empty tract repository in postgres://tract:xxxxx@")
	r = run("init")
	assert.Contains(t, r.Stderr, "Repository already exists")

	run("commit", "--role", "system", "-m", "Answer in JSON.")
	srv := retryServer(t)
	r = chatEnv(s, srv).tract("chat", "--validate", "json", "List three colours as JSON")
	requireExit(t, r, exitOK)
	assertNoPassword(t, r, pw)
	assert.Equal(t, goodJSON+"\n", r.Stdout)
	assert.Contains(t, r.Stderr, "accepted after 2 attempts")

	oneline := lines(run("log", "--oneline").Stdout)
	require.Len(t, oneline, 3, strings.Join(oneline, "\n"))
	all := lines(run("log", "--all").Stdout)
	require.Len(t, all, 7, strings.Join(all, "\n"))
	assert.Regexp(t, `^\|/  orphaned by purify`, all[4])
	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	assert.Equal(t, "purify", h.Orphans[0].Action)

	// The same repository through --db, from another directory.
	other := newSandbox(t)
	r = other.ok("--db", db, "log", "--oneline")
	assertNoPassword(t, r, pw)
	assert.Equal(t, oneline, lines(r.Stdout))

	run("reset", "--hard", "--force", "HEAD~2")
	assert.Len(t, lines(run("log", "--oneline").Stdout), 1)
	run("gc", "--expire", "now")
	assert.Len(t, s.logAll().Commits, 1)
	r = run("fsck")
	assert.Contains(t, r.Stdout, ": ok")
}

// What a database cannot do, and a database that cannot be used, fail
// with a message that says so and what to do, never with the password.
func TestPostgres_CLIErrors(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	pw := urlPassword(t, db)
	s.ok("init")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"compact", []string{"compact"}, exitError, []string{"is not a file", "VACUUM"}},
		{"salvage", []string{"fsck", "--salvage", "new.db"}, exitError, []string{"repository files", "no file to salvage"}},
		{"no repository", []string{"--db", strings.Replace(db, "repository=", "repository=x", 1), "log"}, exitNotFound,
			[]string{"no repository", "tract init"}},
		{"no schema", []string{"--db", pgtest.WithQuery(t, db, "search_path", "no_such_schema"), "log"}, exitError,
			[]string{"database has no tract schema", "tract migrate"}},
		{"wrong password", []string{"--db", strings.Replace(db, ":"+pw+"@", ":wrong-"+pw+"@", 1), "log"}, exitError,
			[]string{"password authentication failed", "Check the user and password"}},
		{"migrate a file", []string{"--db", "repo.db", "migrate"}, exitUsage, []string{"not a postgres:// URL"}},
		{"bad repository name", []string{"--db", pgtest.WithQuery(t, db, "repository", "a"), "log"}, exitError, []string{"repository parameter given 2 times"}},
		{"malformed query", []string{"--db", db + "%zz", "init"}, exitError, []string{`database URL: malformed query (after '?'): invalid URL escape "%zz"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.forTest(t).tract(tc.args...)
			requireExit(t, r, tc.code)
			for _, w := range tc.want {
				assert.Contains(t, r.Stderr, w, r.String())
			}
			assertNoPassword(t, r, pw)
			assert.NotContains(t, r.Stderr, "wrong-", "not even the wrong password")
		})
	}
	t.Run("migrate without a database", func(t *testing.T) {
		r := newSandbox(t).withEnv("TRACT_DB", "").tract("migrate")
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "migrate needs a database")
	})
}

// tract copy moves a repository from a file into PostgreSQL and back: the
// history reads the same at each end, a repository the database does not
// hold yet is made for the copy, and no output shows the password.
func TestPostgres_CopyFileToDatabaseAndBack(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	pw := urlPassword(t, db)
	file := newSandbox(t)
	file.initRepo()
	file.importMessages(40, func(i int) string { return fmt.Sprintf("message %d", i) })
	file.ok("switch", "-c", "side")
	file.commit("user", "on side")
	file.ok("reset", "HEAD~2")
	want := file.ok("log", "--all", "--oneline").Stdout

	s.ok("migrate")
	r := s.ok("copy", file.dbPath(), db)
	assertNoPassword(t, r, pw)
	assert.Contains(t, r.Stdout, "to postgres://tract:xxxxx@")
	assert.Equal(t, want, s.ok("log", "--all", "--oneline").Stdout)
	s.ok("fsck")

	r = s.tract("copy", file.dbPath(), db)
	requireExit(t, r, exitUsage)
	assertNoPassword(t, r, pw)
	assert.Contains(t, r.Stderr, "not empty")

	back := filepath.Join(t.TempDir(), "back.db")
	r = s.ok("copy", db, back)
	assertNoPassword(t, r, pw)
	assert.Equal(t, want, s.ok("--db", back, "log", "--all", "--oneline").Stdout)
	assert.Equal(t, file.ok("reflog").Stdout, s.ok("--db", back, "reflog").Stdout)
	s.ok("--db", back, "fsck")
}

// migrate --json prints the record docs/json.md documents.
func TestPostgres_MigrateJSONMatchesTheDocument(t *testing.T) {
	t.Parallel()
	s, _ := pgSandbox(t)
	o := jsonOutput{args: []string{"migrate", "--json"}, record: "migrate", shape: "object", out: s.ok("migrate", "--json").Stdout}
	doc, ok := docRecords(t)["migrate"]
	require.True(t, ok, "docs/json.md has no migrate section")
	recs := o.records(t)
	require.Len(t, recs, 1)
	for k := range recs[0] {
		assert.Contains(t, doc, k, "migrate prints %q, which docs/json.md does not list", k)
	}
	for k, optional := range doc {
		if !optional {
			assert.Contains(t, recs[0], k, "migrate lacks %q", k)
		}
	}
}

// A database URL with a query of pgx's besides tract's repository
// parameter names the same repository, whatever the order.
func TestPostgres_URLWithQuery(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	s.ok("init")
	s.commit("user", "hello")
	withQuery := pgtest.WithQuery(t, db, "application_name", "tract-e2e", "connect_timeout", "5")
	r := s.ok("--db", withQuery, "log", "--oneline")
	assert.Contains(t, r.Stdout, "user: hello")
	u, err := url.Parse(db)
	require.NoError(t, err)
	first := *u
	first.RawQuery = "application_name=tract-e2e&" + u.RawQuery
	r = s.ok("--db", first.String(), "log", "--oneline")
	assert.Contains(t, r.Stdout, "user: hello")
}
