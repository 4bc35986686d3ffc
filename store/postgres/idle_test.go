package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// Each write transaction sets its own idle timeout, and it ends with the
// transaction: a read afterwards, on what may be the same connection, sees
// the server's setting again.
func TestIdleTimeout_SetForEachWriteTransaction(t *testing.T) {
	base := pgtest.URL(t)
	const name = "idle_in_transaction_session_timeout"
	server := func(s store.Store) string {
		var v string
		require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
			var err error
			v, err = postgres.Setting(tx, name)
			return err
		}))
		return v
	}
	for _, tc := range []struct {
		name string
		opts []postgres.Option
		want string // "": the server's setting
	}{
		{"default", nil, "1min"},
		{"set", []postgres.Option{postgres.WithIdleTimeout(250 * time.Millisecond)}, "250ms"},
		// (Not to 2ms: a timeout that short can end the test's own
		// transaction between two statements on a busy machine.)
		{"rounded up to a millisecond", []postgres.Option{postgres.WithIdleTimeout(1500*time.Millisecond + 1)}, "1501ms"},
		{"capped", []postgres.Option{postgres.WithIdleTimeout(1000 * time.Hour)}, "2147483647ms"},
		{"zero keeps the server's", []postgres.Option{postgres.WithIdleTimeout(0)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pgtest.NewUnchecked(t, base, tc.opts...)
			before := server(s)
			require.NotEqual(t, "1min", before, "the test server's own setting must differ from the default")
			want := tc.want
			if want == "" {
				want = before
			}
			var got string
			require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
				var err error
				got, err = postgres.Setting(tx, name)
				return err
			}))
			assert.Equal(t, want, got, "in a write transaction")
			assert.Equal(t, before, server(s), "after it")
		})
	}
}

// lockWorkerEnv, when set, makes the test binary a writer process for the
// tests of a writer that vanishes: it opens the repository
// TRACT_PG_LOCK_URL with the idle timeout TRACT_PG_LOCK_IDLE, and inside a
// write transaction (holding the repository's lock, a ref move sent)
// prints "locked", then, as the variable says, stops itself with SIGSTOP
// ("stop") or waits for its standard input to close ("hold"). If it gets
// to go on, it prints "committed", or "failed: ERROR" when its
// transaction did not commit. It is checked in init, before the tests run.
const lockWorkerEnv = "TRACT_PG_LOCK_WORKER"

// lockWorkerRef is the ref the worker moves in its transaction.
const lockWorkerRef = "refs/heads/vanished"

func init() {
	if mode := os.Getenv(lockWorkerEnv); mode != "" {
		os.Exit(lockWorker(mode))
	}
}

func lockWorker(mode string) int {
	idle, err := time.ParseDuration(os.Getenv("TRACT_PG_LOCK_IDLE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "TRACT_PG_LOCK_IDLE:", err)
		return 2
	}
	s, err := postgres.Open(context.Background(), os.Getenv("TRACT_PG_LOCK_URL"), postgres.WithIdleTimeout(idle))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	err = s.Update(context.Background(), func(tx store.Tx) error {
		// Listing the refs takes the repository exclusively, so that every
		// other writer waits for this one.
		if _, err := tx.Refs(); err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: lockWorkerRef, Hash: dag.Sum([]byte("vanished"))}); err != nil {
			return err
		}
		if _, err := tx.Ref(lockWorkerRef); err != nil { // sends the queued write
			return err
		}
		fmt.Println("locked")
		switch mode {
		case "stop":
			return syscall.Kill(os.Getpid(), syscall.SIGSTOP) // returns after SIGCONT
		case "hold":
			_, err := io.Copy(io.Discard, os.Stdin)
			return err
		}
		return fmt.Errorf("unknown mode %q", mode)
	})
	if err != nil {
		kind := "other"
		if errors.Is(err, postgres.ErrConnectionLost) {
			kind = "connection lost"
		}
		fmt.Printf("failed (%s): %v\n", kind, err)
		return 1
	}
	fmt.Println("committed")
	return 0
}

// lockWorkerProc is a running lock worker.
type lockWorkerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startLockWorker starts a lock worker on the repository url and waits
// until it holds the lock. It is killed when the test ends.
func startLockWorker(t *testing.T, mode, url string, idle time.Duration) *lockWorkerProc {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), lockWorkerEnv+"="+mode, "TRACT_PG_LOCK_URL="+url, "TRACT_PG_LOCK_IDLE="+idle.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	w := &lockWorkerProc{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	require.True(t, w.out.Scan(), "the worker ended before it took the lock")
	require.Equal(t, "locked", w.out.Text())
	return w
}

// rest returns what the worker printed after "locked", once it exited.
func (w *lockWorkerProc) rest() string {
	var lines []string
	for w.out.Scan() {
		lines = append(lines, w.out.Text())
	}
	_ = w.cmd.Wait()
	return strings.Join(lines, "\n")
}

// waitForStopped polls until process pid is stopped (SIGSTOP), failing
// after ten seconds.
func waitForStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		require.NoError(t, err)
		// The state follows the command's name in parentheses.
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "T" {
			return
		}
		require.True(t, time.Now().Before(deadline), "the worker never stopped")
		time.Sleep(time.Millisecond)
	}
}

// lockedUpdate runs a ref move on s in the background and returns a
// channel that gets the moment its transaction held the lock (its function
// started), then its error.
func lockedUpdate(s store.Store, name string) (got <-chan time.Time, done <-chan error) {
	gotc, donec := make(chan time.Time, 1), make(chan error, 1)
	go func() {
		donec <- s.Update(context.Background(), func(tx store.Tx) error {
			select {
			case gotc <- time.Now():
			default: // run again after an abort: the first moment counts
			}
			return tx.SetRef(refs.Ref{Name: name, Hash: dag.Sum([]byte(name))})
		})
	}()
	return gotc, donec
}

// hasRef reports whether the repository has ref name.
func hasRef(t *testing.T, s store.Store, name string) bool {
	t.Helper()
	var found bool
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Ref(name)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		found = err == nil
		return err
	}))
	return found
}

// A writer process stopped (SIGSTOP) inside its transaction, holding the
// repository's lock with its connection open, as a frozen or partitioned
// client does, keeps the next writer waiting only for its idle timeout:
// then the server ends its session, the other writer commits, and the
// stopped one, resumed, finds that its transaction did not commit.
func TestIdleTimeout_FrozenWriterReleasesTheLock(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base)
	const idle = 500 * time.Millisecond
	w := startLockWorker(t, "stop", urlOf(t, s), idle)
	waitForStopped(t, w.cmd.Process.Pid)
	stopped := time.Now()

	got, done := lockedUpdate(s, "refs/heads/next")
	select {
	case at := <-got:
		t.Logf("the next writer got the lock %s after the worker stopped (idle timeout %s)", at.Sub(stopped).Round(time.Millisecond), idle)
	case <-time.After(30 * time.Second):
		t.Fatal("the next writer still waits for the stopped one's lock after 30s")
	}
	require.NoError(t, <-done)

	require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
	rest := w.rest()
	assert.True(t, strings.HasPrefix(rest, "failed (connection lost): "),
		"the resumed writer's transaction must fail as rolled back (ErrConnectionLost), not commit or end in doubt; it printed %q", rest)
	t.Logf("the resumed writer: %s", rest)
	assert.True(t, hasRef(t, s, "refs/heads/next"), "the next writer's ref move")
	assert.False(t, hasRef(t, s, lockWorkerRef), "the stopped writer's ref move was rolled back")
}

// A writer process killed (SIGKILL) inside its transaction frees the
// repository's lock as soon as the server sees its connection close, long
// before any idle timeout (an hour here). The time from the kill until the
// writer waiting behind it gets the lock is logged: its median, over the
// kills, is in docs/sharing.md.
func TestIdleTimeout_KilledWriterReleasesTheLockAtOnce(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base)
	kills := 11
	if testing.Short() {
		kills = 3
	}
	waits := make([]time.Duration, 0, kills)
	for i := range kills {
		w := startLockWorker(t, "hold", urlOf(t, s), time.Hour)
		name := fmt.Sprintf("refs/heads/after-kill-%d", i)
		got, done := lockedUpdate(s, name)
		waitForLockWaiter(t, base)
		killed := time.Now()
		require.NoError(t, w.cmd.Process.Kill())
		select {
		case at := <-got:
			waits = append(waits, at.Sub(killed))
		case <-time.After(30 * time.Second):
			t.Fatal("the next writer still waits for the killed one's lock after 30s")
		}
		require.NoError(t, <-done)
		assert.Empty(t, w.rest(), "the killed writer printed nothing more")
		assert.True(t, hasRef(t, s, name))
		assert.False(t, hasRef(t, s, lockWorkerRef), "the killed writer's ref move was rolled back")
	}
	slices.Sort(waits)
	t.Logf("kill → lock granted to the next writer, over %d kills: median %s, min %s, max %s",
		len(waits), waits[len(waits)/2], waits[0], waits[len(waits)-1])
}
