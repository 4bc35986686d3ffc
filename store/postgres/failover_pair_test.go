//go:build unix

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// Stores opened before a failover go on after it, with nothing done to
// them: 8 goroutines, each with a Store of its own on the URL of a primary
// and its synchronous standby, write while the primary is killed and the
// standby promoted. A write fails only as the server's going away does
// (ErrConnectionLost, ErrCommitUnknown, or ErrUnreachable with
// ErrNoPrimary until the promotion); none fails once the standby is
// promoted, so no Store kept a dead connection; every write that
// succeeded is on the new primary.
func TestFailover_StoresFindThePromotedStandby(t *testing.T) {
	p := pgtest.StartPair(t)
	ctx := context.Background()
	u := pgtest.WithParam(t, p.URL, "repository", "failover")
	first, err := postgres.Create(ctx, u)
	require.NoError(t, err)
	require.NoError(t, first.Close())

	type write struct {
		h          dag.Hash
		err        error
		start, end time.Time
	}
	const writers = 8
	var mu sync.Mutex // guards writes
	writes := make([][]write, writers)
	succeeded := func(since time.Time) (all, each int) {
		mu.Lock()
		defer mu.Unlock()
		for _, ws := range writes {
			one := 0
			for _, w := range ws {
				if w.err == nil && w.start.After(since) {
					one++
				}
			}
			all += one
			if one > 0 {
				each++
			}
		}
		return all, each
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	for i := range writers {
		s, err := postgres.Open(ctx, u, postgres.WithConnectTimeout(5*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				w := write{start: time.Now()}
				w.err = s.Update(ctx, func(tx store.Tx) error {
					var err error
					w.h, err = tx.PutBlob(fmt.Appendf(nil, "writer %d write %d", i, n))
					return err
				})
				w.end = time.Now()
				mu.Lock()
				writes[i] = append(writes[i], w)
				mu.Unlock()
				if w.err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}

	deadline := time.Now().Add(20 * time.Second)
	for all, _ := succeeded(time.Time{}); all < 80; all, _ = succeeded(time.Time{}) {
		require.True(t, time.Now().Before(deadline), "fewer than 80 writes in 20s")
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill(t)
	time.Sleep(100 * time.Millisecond) // the writers meet the dead primary
	p.Promote(t)
	promoted := time.Now()
	for _, each := succeeded(promoted); each < writers; _, each = succeeded(promoted) {
		require.True(t, time.Now().Before(promoted.Add(10*time.Second)), "a Store did not write within 10s of the promotion")
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	check, err := postgres.Open(ctx, u)
	require.NoError(t, err)
	defer check.Close()
	var acked, failed int
	require.NoError(t, check.View(ctx, func(tx store.Tx) error {
		for i, ws := range writes {
			for _, w := range ws {
				if w.err == nil {
					acked++
					ok, err := tx.HasBlob(w.h)
					require.NoError(t, err)
					assert.True(t, ok, "writer %d: a write that succeeded is not on the new primary", i)
					continue
				}
				failed++
				lost := errors.Is(w.err, postgres.ErrConnectionLost) || errors.Is(w.err, postgres.ErrCommitUnknown) ||
					errors.Is(w.err, postgres.ErrUnreachable) && errors.Is(w.err, postgres.ErrNoPrimary)
				assert.True(t, lost, "writer %d failed otherwise: %v", i, w.err)
				assert.False(t, w.start.After(promoted), "writer %d failed after the promotion: %v", i, w.err)
			}
		}
		return nil
	}))
	t.Logf("%d Stores: %d writes succeeded, all on the new primary; %d failed, none after the promotion", writers, acked, failed)
}
