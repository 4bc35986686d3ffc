package tract_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// BenchmarkCopy measures tract.Copy of a repository of 100,000 messages
// of about 100 bytes from one bbolt file into a new one (fsynced), and
// the most heap it held at once (sampled every millisecond), which a
// batch bounds whatever the repository's size.
func BenchmarkCopy(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	src := benchTract(b, false)
	_, err := src.Import(ctx, chain(n, 100, "copy"))
	require.NoError(b, err)
	require.NoError(b, src.Close())
	dir := b.TempDir()
	var peak atomic.Uint64
	batches := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		stop, done := make(chan struct{}), sync.WaitGroup{}
		done.Add(1)
		go func() {
			defer done.Done()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		res, err := tract.Copy(ctx, src.Path(), filepath.Join(dir, "copy", time.Now().Format("150405.000000000")+".db"))
		close(stop)
		done.Wait()
		if err != nil {
			b.Fatal(err)
		}
		batches = res.Batches
		if res.Commits != n {
			b.Fatalf("copied %d commits, want %d", res.Commits, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "messages/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(batches), "batches")
}
