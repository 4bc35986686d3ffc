package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// createRun creates a temporary file for a sort run in dir. On Linux it
// has no name at all (O_TMPFILE): a process killed at any instant leaves
// nothing behind. Filesystems without O_TMPFILE get a named file, removed
// at once (createNamedRun).
func createRun(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return createNamedRun(dir)
	}
	return os.NewFile(uintptr(fd), dir+"/(sort run)"), nil
}
