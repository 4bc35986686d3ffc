package serve_test

import (
	"os"
	"syscall"
)

// dataSync makes f's written data durable as bbolt does on Linux:
// fdatasync.
func dataSync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
