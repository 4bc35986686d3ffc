package tract_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

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
