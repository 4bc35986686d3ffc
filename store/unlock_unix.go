//go:build unix

package store

import (
	"os"
	"syscall"
)

// unlockFile drops bbolt's flock on f. Closing f alone is not enough when
// bbolt panicked after mapping the file: the mapping keeps the open file
// description, and with it the lock, alive.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
