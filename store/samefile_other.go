//go:build !linux

package store

import "os"

// namesFile reports whether path names the file held describes (held is
// the file's own FileInfo, from the open descriptor).
func namesFile(path string, held os.FileInfo) bool { return namesFileStat(path, held) }
