package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// progressLog records the reports of one operation.
type progressLog struct {
	mu      sync.Mutex
	reports []tract.Progress
}

func (l *progressLog) fn(p tract.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reports = append(l.reports, p)
}

// check requires monotonic counts whose last report is done == total ==
// want, in unit.
func (l *progressLog) check(t *testing.T, want int64, unit string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotEmpty(t, l.reports)
	last := l.reports[len(l.reports)-1]
	assert.Equal(t, tract.Progress{Done: want, Total: want, Unit: unit}, last)
	for i, p := range l.reports {
		assert.LessOrEqual(t, p.Done, max(p.Total, p.Done))
		if i > 0 {
			assert.GreaterOrEqual(t, p.Done, l.reports[i-1].Done, "done never decreases")
		}
	}
}

func TestProgress_ImportFsckStatsGC(t *testing.T) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"))
	require.NoError(t, err)
	defer tr.Close()

	const n = 3000
	msgs := func(yield func(tract.ImportMessage, error) bool) {
		for i := range n {
			if !yield(tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("message %d", i)}, nil) {
				return
			}
		}
	}
	var imp progressLog
	_, err = tr.ImportSeq(ctx, msgs, tract.ImportBatch(500, 0), tract.ImportProgress(imp.fn))
	require.NoError(t, err)
	imp.check(t, n, "messages")

	var fsck progressLog
	rep, err := tr.Fsck(ctx, tract.FsckProgress(fsck.fn))
	require.NoError(t, err)
	fsck.check(t, int64(rep.Blobs+rep.Commits), "objects")

	var stats progressLog
	_, err = tr.Stats(ctx, tract.StatsFilter{Progress: stats.fn})
	require.NoError(t, err)
	stats.check(t, 0, "commits") // imported messages carry no metadata: nothing to read

	_, err = tr.Reset(ctx, "HEAD~1000", tract.Soft)
	require.NoError(t, err)
	var gc progressLog
	rm, err := tr.GC(ctx, tract.GCExpiry(0), tract.GCProgress(gc.fn))
	require.NoError(t, err)
	require.Equal(t, 1000, rm.Commits)
	gc.check(t, 1000, "commits")
}

func TestProgress_StatsCountsTheCommitsItReads(t *testing.T) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"))
	require.NoError(t, err)
	defer tr.Close()
	for i := range 5 {
		_, err := tr.User(ctx, "q", tract.WithMeta(map[string]any{"task": fmt.Sprint("t", i)}))
		require.NoError(t, err)
	}
	var stats progressLog
	_, err = tr.Stats(ctx, tract.StatsFilter{Progress: stats.fn})
	require.NoError(t, err)
	stats.check(t, 5, "commits")
}

// BenchmarkFsck_Progress compares a check with and without a progress
// callback: counting must not slow the work measurably.
func BenchmarkFsck_Progress(b *testing.B) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"))
	require.NoError(b, err)
	defer tr.Close()
	msgs := make([]tract.ImportMessage, 20000)
	for i := range msgs {
		msgs[i] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprint("message ", i)}
	}
	_, err = tr.Import(ctx, msgs)
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		opts []tract.FsckOption
	}{
		{"off", nil},
		{"on", []tract.FsckOption{tract.FsckProgress(func(tract.Progress) {})}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, err := tr.Fsck(ctx, bc.opts...)
				require.NoError(b, err)
			}
		})
	}
}
