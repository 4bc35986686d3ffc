//go:build unix

package store

import (
	"os"
	"syscall"
)

// flockHeld reports whether another open file holds bbolt's flock on f's
// file, shared or exclusive: an exclusive flock cannot be taken at once.
func flockHeld(f *os.File) bool {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
