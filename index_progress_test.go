package tract_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// A file of schema 7 (testdata/schema7.db, written by that tract: 303
// commits, an index of posting blocks and pending documents in the
// older format) is searched by reading every text until its first
// write, which builds the index again and reports the build to
// WithIndexProgress: counts that never decrease, one last report with
// Done equal to Total (303 commits), and no report from a read or a
// later write.
func TestIndexProgress_FirstWriteOfASchema7File(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(filepath.Join("testdata", "schema7.db"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tract.db")
	require.NoError(t, os.WriteFile(path, src, 0o600))

	var mu sync.Mutex
	var reports []tract.Progress
	tr, err := tract.Open(path, tract.WithNoSync(), tract.WithIndexProgress(func(p tract.Progress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	}))
	require.NoError(t, err)
	defer tr.Close()
	got := func() []tract.Progress {
		mu.Lock()
		defer mu.Unlock()
		return append([]tract.Progress(nil), reports...)
	}
	find := func(q string) []string {
		t.Helper()
		query, err := search.ParseQuery(q)
		require.NoError(t, err)
		out := []string{}
		for c, err := range tr.Search(ctx, query) {
			require.NoError(t, err)
			out = append(out, c.Text)
		}
		return out
	}

	assert.Equal(t, []string{"And Babbage?"}, find("babbage"), "read without an index")
	assert.Len(t, find("engine w3"), 18)
	assert.Empty(t, got(), "a read builds nothing")

	_, err = tr.User(ctx, "Babbage's engine")
	require.NoError(t, err)
	rs := got()
	require.NotEmpty(t, rs)
	last := rs[len(rs)-1]
	assert.Equal(t, tract.Progress{Done: 303, Total: 303, Unit: "commits"}, last)
	for i, p := range rs[:len(rs)-1] {
		assert.Less(t, p.Done, p.Total, "only the last report is complete")
		if i > 0 {
			assert.GreaterOrEqual(t, p.Done, rs[i-1].Done)
		}
	}
	assert.Equal(t, []string{"Babbage's engine", "And Babbage?"}, find("babbage"), "through the index the write built")
	assert.Len(t, find("engine w3"), 18)

	_, err = tr.User(ctx, "another")
	require.NoError(t, err)
	assert.Len(t, got(), len(rs), "built once")
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, "ok", report.WordIndex)
}
