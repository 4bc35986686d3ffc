package demo_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/demo"
)

func newRepo(t *testing.T) *tract.Tract {
	t.Helper()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"))
	require.NoError(t, err)
	t.Cleanup(func() {
		rep, err := tr.Fsck(context.Background())
		assert.NoError(t, err)
		if rep != nil {
			assert.True(t, rep.OK(), "fsck: %+v", rep)
		}
		assert.NoError(t, tr.Close())
	})
	return tr
}

func TestRun_RetriesPurifiesAndCompresses(t *testing.T) {
	tr := newRepo(t)
	var out bytes.Buffer
	res, err := demo.Run(context.Background(), tr, &out)
	require.NoError(t, err, out.String())

	assert.Equal(t, 2, res.JSON.Attempts)
	assert.True(t, res.JSON.Purified)
	assert.Equal(t, `{"name": "Ada Lovelace", "born": 1815}`, res.JSON.Text)
	require.Len(t, res.JSON.Diagnoses, 1)
	assert.Contains(t, res.Steering, res.JSON.Diagnoses[0], "the steering quotes the diagnosis")
	assert.Equal(t, 1, res.Command.Attempts)
	assert.Len(t, res.Compress.Summaries, 1)
	assert.Equal(t, 4, res.Requests)

	st, err := tr.Stats(context.Background(), tract.StatsFilter{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.TotalTasks)
	assert.Equal(t, 1, st.FirstAttemptSuccesses)
	assert.Equal(t, 1, st.RetrySuccesses)

	for _, want := range []string{"scripted", "attempt 1/3", "rejected: invalid JSON", "steering", "purified", "attempt 1/3: passed", "summary"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestRun_RefusesRepositoryWithCommits(t *testing.T) {
	tr := newRepo(t)
	_, err := tr.User(context.Background(), "real work")
	require.NoError(t, err)
	_, err = demo.Run(context.Background(), tr, &bytes.Buffer{})
	require.ErrorIs(t, err, demo.ErrNotEmpty)
	log, err := tr.Log(context.Background())
	require.NoError(t, err)
	assert.Len(t, log, 1, "nothing was written")
}

func TestRun_WritesOnlyInTheRepositoryDirectory(t *testing.T) {
	dir := t.TempDir()
	tr, err := tract.Init(filepath.Join(dir, "tract.db"))
	require.NoError(t, err)
	defer tr.Close()
	_, err = demo.Run(context.Background(), tr, &bytes.Buffer{})
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"tract.db"}, names)
}

// BenchmarkRun measures the whole demo on a fresh repository: it must stay
// well under the 2 s a newcomer waits for 'tract demo'.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"))
		require.NoError(b, err)
		b.StartTimer()
		_, err = demo.Run(context.Background(), tr, io.Discard)
		require.NoError(b, err)
		require.NoError(b, tr.Close())
	}
}
