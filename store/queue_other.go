//go:build !linux

package store

import (
	"os"
	"time"
)

// Where open-file-description locks are missing there is no queue: bbolt's
// own flock, which polls every 50ms, is the only lock, and waiting sessions
// are served in no particular order.

func queueLock(f *os.File, exclusive bool, deadline time.Time) error { return nil }

func queued(f *os.File) waiter { return noWaiter }

func unlockQueue(f *os.File) {}

// queueHeld reports false: there is no queue here (see flockHeld).
func queueHeld(*os.File) bool { return false }
