//go:build unix

package store_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// assertUnlocked fails unless an exclusive flock on path can be taken at
// once: nothing in this process still holds the file open and locked.
func assertUnlocked(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	require.NoError(t, err, "the file is still locked: a failed open leaked its descriptor")
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
}
