//go:build !linux

package store

import "os"

// createRun creates a temporary file for a sort run in dir, removed at
// once where the system allows it (see createNamedRun).
func createRun(dir string) (*os.File, error) { return createNamedRun(dir) }
