package tests

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres/pgtest"
)

// fakePassword is the password of URLs to fault servers: no output may
// show it.
const fakePassword = "hunter2-secret"

// A database that cannot be reached, or refuses the login, ends every
// command with exit 1, a message naming the server and the database and
// saying what is wrong, and a hint; never with the password.
func TestPgRobust_UnreachableOrRefusing(t *testing.T) {
	t.Parallel()
	base := "postgres://tract:" + fakePassword + "@127.0.0.1:5432/tract?connect_timeout=1"
	for name, tc := range map[string]struct {
		addr string
		says []string
	}{
		"refused": {pgtest.RefusedAddr(t), []string{"cannot reach the database server", "connection refused",
			"Check the host and port in --db or TRACT_DB"}},
		"never answers": {pgtest.HangServer(t), []string{"cannot reach the database server", "no reply within 1s",
			"connect_timeout=SECONDS"}},
		"closes at once": {pgtest.ClosingServer(t), []string{"cannot reach the database server"}},
		"too many connections": {pgtest.RefusingServer(t, "53300", "sorry, too many clients already"),
			[]string{"sorry, too many clients already (SQLSTATE 53300)", "Other clients hold every connection"}},
		"authentication": {pgtest.RefusingServer(t, "28P01", `password authentication failed for user "tract"`),
			[]string{`refused user "tract"`, "(SQLSTATE 28P01)", "~/.pgpass"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.WithAddr(t, base, tc.addr)
			s := newSandbox(t).withEnv("TRACT_DB", db)
			for _, args := range [][]string{{"log"}, {"migrate"}, {"commit", "--role", "user", "-m", "hello"}, {"fsck"}} {
				r := s.tract(args...)
				requireExit(t, r, exitError)
				assertNoPassword(t, r, fakePassword)
				assert.Contains(t, r.Stderr, tc.addr+" (database tract)", "%s", r)
				for _, w := range tc.says {
					assert.Contains(t, r.Stderr, w, "%s", r)
				}
			}
		})
	}
}

// The real test database with a wrong password: the server's own
// refusal, as authentication failed.
func TestPgRobust_WrongPassword(t *testing.T) {
	t.Parallel()
	db := pgtest.URL(t)
	right := urlPassword(t, db)
	wrong := strings.Replace(db, ":"+right+"@", ":"+fakePassword+"@", 1)
	r := newSandbox(t).withEnv("TRACT_DB", wrong).tract("log")
	requireExit(t, r, exitError)
	assertNoPassword(t, r, fakePassword)
	assertNoPassword(t, r, right)
	assert.Contains(t, r.Stderr, "password authentication failed")
	assert.Contains(t, r.Stderr, "Check the user and password")
}

// proxied returns a sandbox whose TRACT_DB names a created repository
// through a proxy, with reply_timeout set, the repository's direct URL and
// the proxy.
func proxied(t *testing.T, replyTimeout string) (*sandbox, string, *pgtest.Proxy) {
	t.Helper()
	s, db := pgSandbox(t)
	s.ok("init")
	p := pgtest.NewProxy(t, db)
	through := pgtest.WithParam(t, p.URL(t, db), "reply_timeout", replyTimeout)
	return s.withEnv("TRACT_DB", through), db, p
}

// A server that stops answering mid-command: the command ends after the
// reply timeout with exit 1, saying so, and how to wait longer. The
// timeout leaves room for the statements before the frozen one on a
// loaded machine (CI runs the race detector beside other packages: 300ms
// was once too short for BEGIN).
func TestPgRobust_ServerHangs(t *testing.T) {
	t.Parallel()
	s, db, p := proxied(t, "2s")
	pw := urlPassword(t, db)
	p.FreezeAt([]byte("pg_advisory_xact_lock_shared")) // the write's first statement, its writer lock
	r := s.tract("commit", "--role", "user", "-m", "never written")
	requireExit(t, r, exitError)
	assertNoPassword(t, r, pw)
	assert.Contains(t, r.Stderr, "no reply from the database server 127.0.0.1:")
	assert.Contains(t, r.Stderr, "within 2s (waiting for the repository's writer lock)")
	assert.Contains(t, r.Stderr, "nothing of it was written")
	assert.Contains(t, r.Stderr, "reply_timeout=2m")
	p.Thaw()
	assert.Empty(t, newSandbox(t).withEnv("TRACT_DB", db).ok("log", "--oneline").Stdout)
}

// When the reply to COMMIT is lost, the user is told the outcome is
// unknown and to look before running the command again; here it landed.
func TestPgRobust_CommitOutcomeUnknown(t *testing.T) {
	t.Parallel()
	s, db, p := proxied(t, "2s")
	p.FreezeAt([]byte("\x00COMMIT\x00")) // the COMMIT sent with the commit's writes
	r := s.tract("commit", "--role", "user", "-m", "maybe written")
	requireExit(t, r, exitError)
	assertNoPassword(t, r, urlPassword(t, db))
	assert.Contains(t, r.Stderr, "while committing")
	assert.Contains(t, r.Stderr, "the commit may or may not have been written")
	assert.Contains(t, r.Stderr, "Look with 'tract log'")
	p.Thaw()
	assert.Contains(t, newSandbox(t).withEnv("TRACT_DB", db).ok("log", "--oneline").Stdout, "maybe written")
}

// Ctrl-C stops a command waiting on a server that does not answer (no
// reply timeout here): exit 130, at once.
func TestPgRobust_InterruptStopsTheWait(t *testing.T) {
	t.Parallel()
	s, _, p := proxied(t, "0")
	p.FreezeAt([]byte("tract_refs")) // the first read of the log
	b := s.start("log")
	select {
	case <-p.Held():
	case <-time.After(commandTimeout):
		t.Fatal("the command never reached the frozen read")
	}
	require.NoError(t, b.cmd.Process.Signal(os.Interrupt))
	r := b.wait()
	requireExit(t, r, 130)
	assert.Contains(t, r.Stderr, "tract: interrupted")
	assert.NotContains(t, r.Stderr, "no reply")
}

// fsck on a database that finds problems points to backups, not to
// --salvage, which is for files; so does a command that reads the damage.
func TestPgRobust_DamageInADatabase(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	s.ok("init")
	s.ok("commit", "--role", "user", "-m", "soon damaged")
	u, err := url.Parse(db)
	require.NoError(t, err)
	repo := u.Query().Get("repository")
	conn, err := pgx.Connect(context.Background(), pgtest.URL(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tag, err := conn.Exec(context.Background(), `UPDATE tract_blobs SET data = 'garbled' WHERE repository = $1`, repo)
	require.NoError(t, err)
	require.Positive(t, tag.RowsAffected())

	r := s.tract("fsck")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stdout, "restore the database from a backup")
	assert.NotContains(t, r.Stdout+r.Stderr, "fsck --salvage NEW.db' copies")
}
