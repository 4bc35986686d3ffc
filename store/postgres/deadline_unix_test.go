//go:build unix

package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// A server paused (SIGSTOP) in the middle of a transaction: the statement
// sent to it gets no reply, and the transaction ends at its bound (the
// context's deadline; else the reply timeout) with an error naming the
// server and what it waited on. Nothing of it is written, and the store
// works again once the server goes on.
func TestPausedServer_MidStatement(t *testing.T) {
	t.Parallel()
	base := pgtest.URL(t)
	for name, tc := range map[string]struct {
		deadline, reply time.Duration
		says            string
		deadlineErr     bool
	}{
		"context deadline": {deadline: 400 * time.Millisecond, says: "before the deadline (", deadlineErr: true},
		"reply timeout":    {reply: 400 * time.Millisecond, says: "within 400ms ("},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			app := fmt.Sprintf("tract-pause-%x", rand.Uint64())
			s := pgtest.New(t, pgtest.WithQuery(t, base, "application_name", app), postgres.WithReplyTimeout(tc.reply))
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			var resume func()
			var paused time.Time
			for _, run := range []struct {
				name string
				tx   func(context.Context, func(store.Tx) error) error
			}{{"View", s.View}, {"Update", s.Update}} {
				err := run.tx(ctx, func(tx store.Tx) error {
					if _, err := tx.Refs(); err != nil { // the transaction is under way
						return err
					}
					resume = pgtest.Pause(t, base, app, "idle in transaction", false)
					paused = time.Now()
					if run.name == "Update" {
						if err := tx.SetRef(refs.Ref{Name: "refs/heads/paused", Target: refs.BranchRef("main")}); err != nil {
							return err
						}
					}
					_, err := tx.Refs()
					return err
				})
				waited := time.Since(paused)
				resume()
				se := requireServerError(t, err, postgres.ErrTimeout, proxyAddr(t, s), "")
				assert.Contains(t, []string{"a query", "sending writes"}, se.Op, run.name)
				assert.Contains(t, err.Error(), tc.says+se.Op+")", run.name)
				assert.Contains(t, err.Error(), "nothing of it was written", run.name)
				if tc.deadlineErr {
					assert.ErrorIs(t, err, context.DeadlineExceeded, run.name)
				}
				assert.Less(t, waited, 5*time.Second, "%s: the bound ends the wait", run.name)
				if tc.deadline > 0 {
					break // the deadline is spent
				}
			}
			require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
				_, err := tx.Ref("refs/heads/paused")
				assert.ErrorIs(t, err, store.ErrNotFound, "nothing of the paused transaction was written")
				return nil
			}))
		})
	}
}
