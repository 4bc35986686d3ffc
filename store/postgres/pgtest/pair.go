//go:build unix

package pgtest

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres"
)

// Pair is a PostgreSQL primary and its synchronous standby on loopback,
// started by scripts/postgres pair for one test and removed when it ends.
type Pair struct {
	// URL names both servers, primary first, with
	// target_session_attrs=read-write, and no repository.
	URL string
	// Dir holds the clusters: Dir/primary, Dir/standby.
	Dir    string
	script string
}

// StartPair starts a pair, or skips t when the PostgreSQL tests are not
// asked for: they are under CI=true, or with EnvURL set (scripts/postgres
// -- go test ./...). It needs the server's binaries on this machine, which
// scripts/postgres installs when they are missing. A pair takes about two
// seconds to start.
func StartPair(t testing.TB) *Pair {
	t.Helper()
	if os.Getenv("CI") != "true" && os.Getenv(EnvURL) == "" {
		t.Skip("the failover tests start a PostgreSQL primary and standby of their own: run them with " +
			"'scripts/postgres -- go test -run Failover ./...' (or CI=true)")
	}
	p := &Pair{script: script(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p.script, "pair").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		require.NoError(t, err, "scripts/postgres pair: %s", ee.Stderr)
	}
	require.NoError(t, err, "scripts/postgres pair")
	for _, line := range strings.Split(string(out), "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		value = strings.Trim(value, "'")
		switch name {
		case "TRACT_TEST_PAIR_URL":
			p.URL = value
		case "TRACT_TEST_PAIR_DIR":
			p.Dir = value
		}
	}
	require.NotEmpty(t, p.URL, "scripts/postgres pair printed no URL: %s", out)
	require.NotEmpty(t, p.Dir, "scripts/postgres pair printed no directory: %s", out)
	t.Cleanup(func() {
		if out, err := exec.Command(p.script, "stop", p.Dir).CombinedOutput(); err != nil {
			t.Errorf("scripts/postgres stop %s: %v: %s", p.Dir, err, out)
		}
	})
	_, err = postgres.Migrate(context.Background(), p.URL)
	require.NoError(t, err)
	return p
}

// script returns the path of scripts/postgres: the module's root is the
// first directory up from the test's that holds go.mod.
func script(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "postgres")
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// Kill kills the primary as a crash would: SIGKILL to every process of
// its cluster, with no goodbye to its clients or its standby.
func (p *Pair) Kill(t testing.TB) { p.run(t, "kill", filepath.Join(p.Dir, "primary")) }

// Promote makes the standby the primary, and returns once it takes writes.
func (p *Pair) Promote(t testing.TB) { p.run(t, "promote", filepath.Join(p.Dir, "standby")) }

func (p *Pair) run(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(p.script, args...).CombinedOutput()
	require.NoError(t, err, "scripts/postgres %v: %s", args, out)
}

// ServerURL is the URL of the primary (i = 0) or the standby (1) alone,
// for a test's own connections.
func (p *Pair) ServerURL(t testing.TB, i int) string {
	t.Helper()
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	hosts := strings.Split(u.Host, ",")
	require.Len(t, hosts, 2)
	u.Host = hosts[i]
	u.RawQuery = ""
	return u.String()
}

// PauseSender stops the primary's WAL sender (SIGSTOP), as a network that
// stalls would: the primary's WAL no longer goes to the standby, and a
// commit waits for it. (Stopping the standby's receiver would not do: what
// the sender sent waits in the socket's buffer, and arrives.) It returns
// the function that lets the sender go on, which also runs when the test
// ends.
func (p *Pair) PauseSender(t testing.TB) (resume func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, p.ServerURL(t, 0))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var pid int
	require.NoError(t, conn.QueryRow(ctx, `SELECT pid FROM pg_stat_replication`).Scan(&pid))
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	var once sync.Once
	resume = func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}
