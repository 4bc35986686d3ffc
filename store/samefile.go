package store

import "os"

// namesFileStat is namesFile through os.Stat, where the system gives no
// cheaper way to a file's identity.
func namesFileStat(path string, held os.FileInfo) bool {
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}
