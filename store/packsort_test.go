package store_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// The sorter gives back every entry once, in Compare order, with its
// value, whether everything fitted in memory or went through many runs
// on disk; its files are gone after Close.
func TestPackSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var in []store.PackEntry
	for i := range 2000 {
		kind := []store.PackKind{store.PackBlob, store.PackCommit, store.PackCounters}[rng.IntN(3)]
		h := dag.Sum([]byte(fmt.Sprint(i % 1500))) // some (kind, hash) pairs come twice
		in = append(in, store.PackEntry{Kind: kind, Hash: h, Value: []byte(fmt.Sprintf("value of %d/%d", kind, i%1500))})
	}
	want := slices.Clone(in)
	slices.SortFunc(want, store.PackEntry.Compare)
	want = slices.CompactFunc(want, func(a, b store.PackEntry) bool { return a.Compare(b) == 0 })

	for _, tc := range []struct {
		name     string
		budget   int
		runs     bool
		maxRuns  int
		repeated int // times in is added
	}{
		{"in memory", 1 << 30, false, 0, 1},
		{"many runs", 4096, true, 15, 1},
		// About 400 buffers: runs merge into runs of 16 and 256 buffers
		// as they come, so a few dozen files stay open, not 400.
		{"runs merged as they come", 4096, true, 45, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := store.NewPackSorter(dir, tc.budget)
			for range tc.repeated {
				for _, e := range in {
					require.NoError(t, s.Add(e))
				}
			}
			assert.Equal(t, tc.runs, s.Runs() > 1, "%d runs", s.Runs())
			assert.LessOrEqual(t, s.Runs(), tc.maxRuns)
			var got []store.PackEntry
			for e, err := range s.Sorted() {
				require.NoError(t, err)
				got = append(got, e)
			}
			assert.Equal(t, want, got)
			require.NoError(t, s.Close())
			left, err := filepath.Glob(filepath.Join(dir, "*"))
			require.NoError(t, err)
			assert.Empty(t, left, "no file left in the directory")
		})
	}
}
