package tract_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkFdatasync measures the disk alone: one 4 KiB page of a file
// overwritten and made durable with fdatasync, as bbolt makes its pages
// durable. bbolt syncs twice per transaction (its pages, then its meta
// page), so half this rate is the two-sync bound a durable commit
// (BenchmarkCommitDurable) is compared with, beside an empty bbolt update
// (BenchmarkBboltUpdateBound), which also writes its free list and meta
// page.
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	require.NoError(b, err)
	defer f.Close()
	page := make([]byte, 4096)
	_, err = f.WriteAt(page, 0)
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		page[0] = byte(i)
		if _, err := f.WriteAt(page, 0); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/2, "two-sync-bound/s")
}

// BenchmarkCommitBesideBound measures a durable commit, a one-key bbolt
// update (BenchmarkBboltUpdateBound's pages=1, the bound) and an
// fdatasync of one page in one loop, in turns of 20 of each, timing each
// kind on its own: load that comes and goes on a shared machine then
// falls on the three alike, and commit/bound, their ratio, holds still
// where separate benchmarks, run one after the other, swing.
func BenchmarkCommitBesideBound(b *testing.B) {
	const turn = 20
	tr := benchTract(b, true)
	update := boundDB(b, 1, false)
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	require.NoError(b, err)
	defer f.Close()
	page := make([]byte, 4096)
	ctx := context.Background()
	var commits, updates, syncs time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i += turn {
		n := min(turn, b.N-i)
		start := time.Now()
		for j := range n {
			if _, err := tr.User(ctx, fmt.Sprintf("message %d", i+j)); err != nil {
				b.Fatal(err)
			}
		}
		commits += time.Since(start)
		start = time.Now()
		for j := range n {
			if err := update(i + j); err != nil {
				b.Fatal(err)
			}
		}
		updates += time.Since(start)
		start = time.Now()
		for j := range n {
			page[0] = byte(i + j)
			if _, err := f.WriteAt(page, 0); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
		}
		syncs += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/commits.Seconds(), "commits/s")
	b.ReportMetric(float64(b.N)/updates.Seconds(), "bound-updates/s")
	b.ReportMetric(float64(b.N)/syncs.Seconds(), "fdatasyncs/s")
	b.ReportMetric(updates.Seconds()/commits.Seconds(), "commit/bound")
	b.ReportMetric(0, "ns/op")
}
