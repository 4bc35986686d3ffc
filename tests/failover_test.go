//go:build unix

package tests

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres/pgtest"
)

// outcome is one run of a writer's or the reader's command.
type outcome struct {
	text     string // the message a writer committed
	ok       bool
	stderr   string
	start    time.Time
	finished time.Time
}

// The reason to keep a repository on a database server: a primary and a
// synchronous standby, tract given both hosts. Eight writer processes and
// a reader run; the primary is killed (SIGKILL) mid-load, its WAL sender
// stalled for the moment before, and the standby promoted. Every commit
// tract acknowledged is on the new primary, each writer commits again
// within seconds of the promotion with nothing done by hand, a command
// waiting on the server when it died fails with the connection-loss error
// and succeeds when run again, and fsck is clean. (With asynchronous
// replication, synchronous_standby_names empty, the same test loses the
// commits acknowledged while the sender stalled.)
//
// It runs under CI=true and with scripts/postgres -- go test ./tests/,
// once: not again in the pass of TRACT_TEST_BACKEND=postgres.
func TestFailover_SynchronousStandbyLosesNoAcknowledgedCommit(t *testing.T) {
	if onPostgres() {
		t.Skip("the failover test makes its own clusters; it runs in the file backend's pass")
	}
	p := pgtest.StartPair(t)
	password := urlPassword(t, p.URL)
	s := newSandbox(t).withEnv("TRACT_DB", p.URL)
	s.ok("migrate")
	s.ok("init")
	witnessDB := pgtest.WithParam(t, p.URL, "repository", "witness")
	witness := newSandbox(t).withEnv("TRACT_DB", witnessDB)
	witness.ok("init")

	const writers = 8
	stop := make(chan struct{})
	var mu sync.Mutex                       // guards results
	results := make([][]outcome, writers+1) // the last is the reader's
	record := func(i int, o outcome) {
		mu.Lock()
		defer mu.Unlock()
		results[i] = append(results[i], o)
	}
	// count counts the outcomes for which f holds.
	count := func(f func(i int, o outcome) bool) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for i, os := range results {
			for _, o := range os {
				if f(i, o) {
					n++
				}
			}
		}
		return n
	}
	var wg sync.WaitGroup
	stopped := false
	halt := func() { // stops the writers and the reader, at the latest when the test ends
		if !stopped {
			stopped = true
			close(stop)
		}
		wg.Wait()
	}
	defer halt()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				o := outcome{text: fmt.Sprintf("writer %d message %d", w, n), start: time.Now()}
				r := s.tract("commit", "--role", "user", "-m", o.text)
				o.finished, o.ok, o.stderr = time.Now(), r.Code == exitOK, r.Stderr
				record(w, o)
				if !o.ok {
					time.Sleep(20 * time.Millisecond) // a client's pause before it tries again
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			o := outcome{start: time.Now()}
			r := s.tract("log", "--oneline", "-n", "5")
			o.finished, o.ok, o.stderr = time.Now(), r.Code == exitOK, r.Stderr
			record(writers, o)
			if !o.ok {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	// Load: wait until the writers have committed a few dozen.
	deadline := time.Now().Add(20 * time.Second)
	for count(func(i int, o outcome) bool { return i < writers && o.ok }) < 40 {
		require.True(t, time.Now().Before(deadline), "the writers committed fewer than 40 in 20s")
		time.Sleep(50 * time.Millisecond)
	}

	// The witness: a commit that waits for its repository's writer lock,
	// which the test holds, when the primary dies: in flight for sure.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, p.ServerURL(t, 0))
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	// The repository's lock (an advisory lock, see store/postgres's
	// lockMode), taken exclusively.
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock(1953654128, hashtext('witness'))`)
	require.NoError(t, err)
	inFlight := witness.start("commit", "--role", "user", "-m", "in flight")
	// Watched from another connection: a transaction sees one snapshot
	// of pg_stat_activity.
	watch, err := pgx.Connect(ctx, p.ServerURL(t, 0))
	require.NoError(t, err)
	defer watch.Close(ctx)
	for {
		var waiting int
		require.NoError(t, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE $1::int = ANY (pg_blocking_pids(pid))`, conn.PgConn().PID()).Scan(&waiting))
		if waiting > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the witness never waited for the lock")
		time.Sleep(10 * time.Millisecond)
	}

	// The standby gets nothing for a moment before the primary dies: a
	// commit the primary made in that moment and acknowledged would be
	// lost. Synchronous replication acknowledges none: the writer whose
	// COMMIT waits for the standby holds the repository's lock, and the
	// others wait for it.
	resume := p.PauseSender(t)
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	p.Kill(t)
	resume()
	r := inFlight.wait()
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "lost the connection to the database server", "%s", r)
	assert.Contains(t, r.Stderr, "nothing of it was written", "%s", r)
	assertNoPassword(t, r, password)
	time.Sleep(200 * time.Millisecond) // the writers meet the dead primary for a while
	p.Promote(t)
	promoted := time.Now()

	// Every writer commits again, with nothing done by hand.
	resumed := func() bool {
		seen := map[int]bool{}
		count(func(i int, o outcome) bool {
			if i < writers && o.ok && o.start.After(promoted) {
				seen[i] = true
			}
			return false
		})
		return len(seen) == writers
	}
	for !resumed() {
		require.True(t, time.Now().Before(promoted.Add(10*time.Second)), "a writer did not commit within 10s of the promotion")
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a little load on the new primary
	halt()

	// The witness's command, run again, succeeds.
	r = witness.tract("commit", "--role", "user", "-m", "in flight")
	requireExit(t, r, exitOK)
	assert.Equal(t, []string{"in flight"}, texts(witness.log()))

	// Every acknowledged commit is on the new primary; failures were the
	// server's going away, in words that say so.
	onPrimary := map[string]bool{}
	for _, c := range s.log() {
		onPrimary[c.Text] = true
	}
	// A command failed in one of these ways: its connection broke
	// mid-transaction, or while it committed; or it started while the
	// primary was down, before the standby was promoted.
	known := regexp.MustCompile(`lost the connection to the database server|` +
		`while committing: .*the commit may or may not have been written|` +
		`no database server of 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+ \(database tract\) takes writes`)
	var acked, ackedBefore, failed, lost, unknown, noPrimary int
	var worstResume time.Duration
	for w := range writers {
		var firstAfter time.Time
		for _, o := range results[w] {
			switch {
			case o.ok:
				acked++
				if o.finished.Before(killed) {
					ackedBefore++
				}
				assert.True(t, onPrimary[o.text], "acknowledged %q is not on the new primary", o.text)
				if firstAfter.IsZero() && o.start.After(promoted) {
					firstAfter = o.finished
				}
			default:
				failed++
				assert.Regexp(t, known, o.stderr, "writer %d: %q failed otherwise", w, o.text)
				assert.NotContains(t, o.stderr, password)
				switch {
				case strings.Contains(o.stderr, "may or may not"):
					unknown++
				case strings.Contains(o.stderr, "lost the connection"):
					lost++
				case strings.Contains(o.stderr, "takes writes"):
					noPrimary++
					assert.Contains(t, o.stderr, "Once one is promoted", "the hint")
				}
			}
		}
		worstResume = max(worstResume, firstAfter.Sub(promoted))
	}
	readerOK := 0
	for _, o := range results[writers] {
		if o.ok {
			readerOK++
		} else {
			assert.Regexp(t, known, o.stderr, "the reader failed otherwise")
		}
	}
	assert.Less(t, worstResume, 5*time.Second, "a writer took this long after the promotion to commit")
	t.Logf("%d writers: %d commits acknowledged (%d before the kill), all on the new primary; %d failed attempts "+
		"(%d connections lost mid-transaction, %d commits of unknown outcome, %d while no server took writes); the standby promoted %s after the kill; "+
		"every writer committed again within %s of the promotion; the reader ran %d times",
		writers, acked, ackedBefore, failed, lost, unknown, noPrimary, promoted.Sub(killed).Round(time.Millisecond),
		worstResume.Round(time.Millisecond), readerOK)
	require.Positive(t, ackedBefore)
	assert.Positive(t, noPrimary, "a writer tried while the primary was down and no standby promoted")
	assert.Positive(t, unknown, "a writer's COMMIT waited for the standby when the primary died")
	s.fsckOK()
	witness.fsckOK()
}
