//go:build !unix

package store

import "os"

// unlockFile is a no-op where bbolt does not lock with flock.
func unlockFile(*os.File) {}
