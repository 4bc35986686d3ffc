package tract_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// onBothBackends runs fn on a new repository in a file and one in
// PostgreSQL (skipped without a server: see pgtest.URL).
func onBothBackends(t *testing.T, fn func(t *testing.T, tr *tract.Tract)) {
	for _, backend := range []string{"file", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			if backend == "postgres" {
				path = pgtest.RepositoryURL(t, pgtest.URL(t))
			}
			tr, err := tract.Init(path, tract.WithNoSync(), tract.WithClock(stepClock()))
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, tr.Close()) })
			fn(t, tr)
		})
	}
}

func searchTexts(t *testing.T, tr *tract.Tract, query string, opts ...tract.SearchOption) []string {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	out := []string{}
	for c, err := range tr.Search(context.Background(), q, opts...) {
		require.NoError(t, err)
		out = append(out, c.Text)
	}
	return out
}

func logTexts(t *testing.T, tr *tract.Tract, opts ...tract.LogOption) []string {
	t.Helper()
	out := []string{}
	for c, err := range tr.LogSeq(context.Background(), opts...) {
		require.NoError(t, err)
		out = append(out, c.Text)
	}
	return out
}

// Search finds words across the history, orphans included, newest
// first; a hard reset's erasure takes its commits out of the results.
func TestSearch_NewestFirstAcrossOrphans(t *testing.T) {
	onBothBackends(t, testSearchNewestFirst)
}

func testSearchNewestFirst(t *testing.T, tr *tract.Tract) {
	ctx := context.Background()
	for _, text := range []string{"the red fox", "a blue whale", "Red wine, RED sky", "red alert"} {
		_, err := tr.User(ctx, text)
		require.NoError(t, err)
	}
	_, err := tr.Reset(ctx, "HEAD~1", tract.Soft) // "red alert" becomes an orphan
	require.NoError(t, err)

	assert.Equal(t, []string{"red alert", "Red wine, RED sky", "the red fox"}, searchTexts(t, tr, "RED"))
	assert.Equal(t, []string{"red alert", "Red wine, RED sky"}, searchTexts(t, tr, "red", tract.SearchLimit(2)))
	assert.Equal(t, []string{"Red wine, RED sky"}, searchTexts(t, tr, "sky red"))
	assert.Equal(t, []string{"a blue whale"}, searchTexts(t, tr, "wh*"))
	assert.Empty(t, searchTexts(t, tr, "green"))

	_, err = tr.User(ctx, "zanzibar")
	require.NoError(t, err)
	require.Equal(t, []string{"zanzibar"}, searchTexts(t, tr, "zanzibar"))
	_, err = tr.Reset(ctx, "HEAD~1", tract.Hard)
	require.NoError(t, err)
	assert.Empty(t, searchTexts(t, tr, "zanzibar"))
	if path := tr.Path(); !tract.IsDatabaseURL(path) {
		// Nor does the word index keep the erased text's word.
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "zanzibar")
	}

	ctx, cancel := context.WithCancel(ctx)
	cancel()
	q, _ := search.ParseQuery("red")
	for _, err := range tr.Search(ctx, q) {
		require.ErrorIs(t, err, context.Canceled)
	}
}

// LogGrep keeps the matching commits of the walk; LogLimit counts them.
func TestLogGrep(t *testing.T) { onBothBackends(t, testLogGrep) }

func testLogGrep(t *testing.T, tr *tract.Tract) {
	ctx := context.Background()
	for i, text := range []string{"alpha one", "beta two", "Alpha three", "gamma"} {
		_, err := tr.User(ctx, text)
		require.NoError(t, err, i)
	}
	g, err := search.NewGrep([]string{`^alpha`}, search.IgnoreCase())
	require.NoError(t, err)
	assert.Equal(t, []string{"Alpha three", "alpha one"}, logTexts(t, tr, tract.LogGrep(g)))
	assert.Equal(t, []string{"Alpha three"}, logTexts(t, tr, tract.LogGrep(g), tract.LogLimit(1)))
	assert.Equal(t, []string{"alpha one"}, logTexts(t, tr, tract.LogGrep(g), tract.LogFrom("HEAD~2")))
	g, err = search.NewGrep([]string{`two`, `gamma`})
	require.NoError(t, err)
	assert.Equal(t, []string{"gamma", "beta two"}, logTexts(t, tr, tract.LogGrep(g)))
}
