// Package storetest holds the conformance suite that every store.Store
// implementation passes, and helpers that open checked throwaway stores.
//
// A backend's test calls Run with a function that returns a new, empty store
// (what OpenBolt with Create or NewMemory returns: HEAD attached to the
// unborn branch main, nothing else):
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openMyStore(t) })
//	}
//
// Run closes each store when its subtest ends. Some subtests leave
// deliberate inconsistencies behind (a commit whose parent is missing), so
// the function must not return a store that fails the test on Fsck problems,
// as NewBolt and NewMemory do.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store"
)

// NewBolt creates a bbolt repository in a temporary directory (without
// fsync, which tests do not need) and, when the test ends, checks it with
// store.Fsck, failing the test on any problem, then closes it. It is the
// helper for tests that build on a store and should leave it consistent.
func NewBolt(t testing.TB) *store.Bolt {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	CheckOnCleanup(t, b)
	return b
}

// NewMemory returns a new in-memory store that is checked with store.Fsck
// when the test ends, like NewBolt.
func NewMemory(t testing.TB) *store.Memory {
	t.Helper()
	m := store.NewMemory()
	CheckOnCleanup(t, m)
	return m
}

// CheckOnCleanup registers a cleanup that runs store.Fsck on s, reports
// every problem as a test error (and a word index that Fsck had to
// rebuild), and closes s.
func CheckOnCleanup(t testing.TB, s store.Store) {
	t.Helper()
	t.Cleanup(func() {
		defer s.Close()
		r, err := store.Fsck(context.Background(), s)
		if err != nil {
			t.Errorf("fsck %s: %v", s.Path(), err)
			return
		}
		for _, p := range r.Problems {
			t.Errorf("fsck %s: %s", s.Path(), p)
		}
		if r.WordIndex == store.WordIndexRebuilt {
			t.Errorf("fsck %s: the word index did not match the commits (%s)", s.Path(), r.WordIndexProblem)
		}
	})
}
