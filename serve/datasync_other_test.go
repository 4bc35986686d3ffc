//go:build !linux

package serve_test

import "os"

// dataSync makes f's written data durable as bbolt does here: fsync.
func dataSync(f *os.File) error { return f.Sync() }
