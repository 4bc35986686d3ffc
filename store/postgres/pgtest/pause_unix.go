//go:build unix

package pgtest

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// Pause stops the server process (the backend) that serves the connection
// whose application_name is app and that is in state (pg_stat_activity's:
// "idle in transaction", "active"; with waiting set, one waiting for a
// lock), with SIGSTOP: the server hangs, mid-transaction or
// mid-statement, as a server that froze does. base is the URL of URL.
// It waits up to 10 seconds for such a backend. resume sends SIGCONT; it
// is also called when the test ends. The test is skipped when this
// process may not signal the server's processes (another user's).
func Pause(t testing.TB, base, app, state string, waiting bool) (resume func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var pid int
	for {
		err := conn.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE application_name = $1 AND state = $2 AND (wait_event_type = 'Lock') = $3`, app, state, waiting).Scan(&pid)
		if err == nil {
			break
		}
		require.ErrorIs(t, err, pgx.ErrNoRows)
		select {
		case <-ctx.Done():
			t.Fatalf("no backend of application %q in state %q (waiting %v) within 10s", app, state, waiting)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); errors.Is(err, syscall.EPERM) {
		t.Skipf("this process may not stop the server's backend (pid %d): %v", pid, err)
	} else {
		require.NoError(t, err)
	}
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	return resume
}
