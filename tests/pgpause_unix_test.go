//go:build unix

package tests

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

// A PostgreSQL server paused (SIGSTOP) in the middle of a command's
// statement: here the server process serving 'tract commit' is stopped
// while it waits for the repository's writer lock, which another writer
// then lets go. No reply ever comes; the command ends at its bound
// (reply_timeout) with exit 1 and a message that names the server, what
// the command waited on, and that nothing was written. Once the server
// goes on, the repository works and holds nothing of the command.
func TestPgRobust_ServerPausedMidStatement(t *testing.T) {
	t.Parallel()
	s, db := pgSandbox(t)
	s.ok("init")
	app := fmt.Sprintf("tract-cli-pause-%x", rand.Uint64())
	cli := s.withEnv("TRACT_DB", pgtest.WithQuery(t, db, "application_name", app, "reply_timeout", "3s"))

	release := storetest.HoldWrite(t, openAPI(t, db).Store())
	b := cli.start("commit", "--role", "user", "-m", "never written")
	resume := pgtest.Pause(t, pgtest.URL(t), app, "active", true)
	release() // the lock goes to a server process that is stopped
	start := time.Now()
	r := b.wait()
	resume()
	assert.Less(t, time.Since(start), 10*time.Second, "the reply timeout bounds the command")
	requireExit(t, r, exitError)
	assertNoPassword(t, r, urlPassword(t, db))
	assert.Contains(t, r.Stderr, "no reply from the database server 127.0.0.1:")
	assert.Contains(t, r.Stderr, "within 3s (waiting for the repository's writer lock)")
	assert.Contains(t, r.Stderr, "nothing of it was written")
	assert.Empty(t, s.ok("log", "--oneline").Stdout)
	s.ok("commit", "--role", "user", "-m", "after")
}
