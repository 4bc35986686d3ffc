package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// Each transaction gives the server its bound as statement_timeout: the
// reply timeout, or the time left before its context's deadline when
// that is nearer; none when neither bounds it.
func TestStatementTimeout_FollowsReplyTimeoutAndDeadline(t *testing.T) {
	t.Parallel()
	base := pgtest.URL(t)
	for name, tc := range map[string]struct {
		reply    time.Duration
		deadline time.Duration
		min, max time.Duration // bounds of the setting; 0, 0: the server's default, 0
	}{
		"reply timeout":              {reply: 30 * time.Second, min: 30 * time.Second, max: 30 * time.Second},
		"deadline nearer":            {reply: 30 * time.Second, deadline: 5 * time.Second, min: 4 * time.Second, max: 5 * time.Second},
		"reply timeout nearer":       {reply: 2 * time.Second, deadline: time.Minute, min: 2 * time.Second, max: 2 * time.Second},
		"deadline and no reply wait": {deadline: 5 * time.Second, min: 4 * time.Second, max: 5 * time.Second},
		"no bound":                   {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := pgtest.New(t, base, postgres.WithReplyTimeout(tc.reply))
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			for _, run := range []func(context.Context, func(store.Tx) error) error{s.View, s.Update} {
				require.NoError(t, run(ctx, func(tx store.Tx) error {
					v, err := postgres.Setting(tx, "statement_timeout")
					require.NoError(t, err)
					got := settingDuration(t, v)
					assert.GreaterOrEqual(t, got, tc.min, "statement_timeout %s", v)
					assert.LessOrEqual(t, got, tc.max, "statement_timeout %s", v)
					return nil
				}))
			}
		})
	}
}

// settingDuration reads a duration setting as SHOW renders it ("30s",
// "4999ms", "0").
func settingDuration(t *testing.T, v string) time.Duration {
	t.Helper()
	if v == "0" {
		return 0
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "setting %q", v)
	return d
}

// A transaction whose context is done before it begins does not begin:
// the error is the context's, and nothing is written.
func TestContext_DoneBeforeTheTransaction(t *testing.T) {
	t.Parallel()
	s := pgtest.New(t, pgtest.URL(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := s.Update(ctx, func(tx store.Tx) error {
		ran = true
		return tx.SetRef(refs.Ref{Name: "refs/heads/never", Target: refs.BranchRef("main")})
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran)
	assert.ErrorIs(t, s.View(ctx, func(store.Tx) error { return nil }), context.Canceled)
}

// A writer waiting for the repository's writer lock, which another
// transaction holds exclusively (it listed the refs), gives up at its context's deadline with an error that
// says what it waited on; the holder goes on, unharmed.
func TestContext_DeadlineEndsTheWaitForTheWriterLock(t *testing.T) {
	t.Parallel()
	s := pgtest.New(t, pgtest.URL(t), postgres.WithReplyTimeout(0))
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.Refs(); err != nil {
				return err // run again holding the repository exclusively
			}
			close(holding)
			<-release
			return tx.SetRef(refs.Ref{Name: "refs/heads/holder", Target: refs.BranchRef("main")})
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Update(ctx, func(tx store.Tx) error {
		return tx.SetRef(refs.Ref{Name: "refs/heads/waiter", Target: refs.BranchRef("main")})
	})
	elapsed := time.Since(start)
	close(release)
	se := requireServerError(t, err, postgres.ErrTimeout, proxyAddr(t, s), "")
	assert.Equal(t, "waiting for the repository's writer lock", se.Op)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "before the deadline (waiting for the repository's writer lock)")
	assert.Less(t, elapsed, 5*time.Second, "the deadline bounds the wait")
	require.NoError(t, <-held)
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Ref("refs/heads/holder")
		assert.NoError(t, err, "the holder committed")
		_, err = tx.Ref("refs/heads/waiter")
		assert.ErrorIs(t, err, store.ErrNotFound, "the waiter wrote nothing")
		return nil
	}))
}
