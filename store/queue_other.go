//go:build !linux

package store

import (
	"os"
	"time"
)

// queueLocking is false where open-file-description locks are missing:
// bbolt's own flock, which polls every 50ms, is then the only lock, and
// waiting sessions are served in no particular order.
const queueLocking = false

func queueLock(f *os.File, exclusive bool, deadline time.Time) error { return nil }

func queued(f *os.File) waiter { return noWaiter }

func unlockQueue(f *os.File) {}
