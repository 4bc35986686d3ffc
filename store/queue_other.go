//go:build !linux

package store

import (
	"context"
	"os"
	"time"
)

// Where open-file-description locks are missing there is no queue: bbolt's
// own flock, which polls every 50ms, is the only lock, and waiting sessions
// are served in no particular order.

// queueLock only checks ctx: bbolt's flock waits, polling, up to the
// deadline (see openDB).
func queueLock(ctx context.Context, f *os.File, exclusive bool, deadline time.Time) error {
	if err := ctx.Err(); err != nil {
		f.Close()
		return err
	}
	return nil
}

// defaultIdleGrace is DefaultIdleGrace here (see there).
const defaultIdleGrace = time.Millisecond

func queued(f *os.File) waiter { return noWaiter }

func unlockQueue(f *os.File) {}

// queueHeld reports false: there is no queue here (see flockHeld).
func queueHeld(*os.File) bool { return false }
