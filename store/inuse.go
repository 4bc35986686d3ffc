package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// FileInUse reports whether a session of any process, this one included,
// has the repository file at path open: whether it holds, or waits at
// the head of the queue for, one of the file's locks. It takes no lock
// and never waits. A missing file is not in use.
//
// It tells a file a running command is writing from one a killed command
// left behind (a half-written copy, say), which is safe to remove. The
// answer holds for the moment of the call only.
func FileInUse(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check %s: %w", path, err)
	}
	defer f.Close()
	return queueHeld(f) || flockHeld(f), nil
}
