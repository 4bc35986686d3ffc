//go:build !unix

package store

import "os"

// flockHeld reports false where bbolt's flock cannot be tested from here;
// such systems refuse to remove a file another process has open anyway.
func flockHeld(*os.File) bool { return false }
