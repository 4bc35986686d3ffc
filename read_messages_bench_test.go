package tract_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/tractdag/tract"
)

// measurePeak runs fn and returns the most heap it held above what was in
// use before, sampled as samplePeak does.
func measurePeak(fn func()) uint64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop, peak := make(chan struct{}), make(chan uint64)
	go samplePeak(before.HeapAlloc, stop, peak)
	fn()
	close(stop)
	p := <-peak
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	p = max(p, after.HeapAlloc)
	return p - min(p, before.HeapAlloc)
}

// BenchmarkReadMessages_Rejects measures how fast, and in how much memory,
// import refuses an input over its limits (the default ones): a line of
// 1 GB (reading stops at the line size limit, 65 MiB), and one message
// of 50 MB (within the line limit; its text is over the message limit).
func BenchmarkReadMessages_Rejects(b *testing.B) {
	for _, tc := range []struct {
		name  string
		in    func() *generated
		which tract.SizeLimit
	}{
		{"line=1GB", func() *generated {
			return newGenerated(`{"role":"user","content":"`, strings.Repeat("x", 64<<10), `"}`, 1<<30/(64<<10))
		}, tract.LimitLineSize},
		{"message=50MB", func() *generated {
			return newGenerated(`{"role":"user","content":"`, strings.Repeat("x", 50_000), `"}`, 1000)
		}, tract.LimitMessageSize},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var worst, read uint64
			for i := 0; i < b.N; i++ {
				in := tc.in()
				var err error
				worst = max(worst, measurePeak(func() { _, err = readAll(in) }))
				requireTooLarge(b, err, tc.which)
				read = uint64(in.read)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(read)/(1<<20), "read-MiB")
		})
	}
}

// BenchmarkImport_Valid measures an import of 200 MB of JSON lines (1 KiB
// messages) through ReadMessages and ImportSeq: time and peak heap.
func BenchmarkImport_Valid(b *testing.B) {
	const size = 200_000_000
	line := `{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 85) + "\"}\n"
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tr := benchTract(b, false)
		in := newGenerated("", line, "", size/int64(len(line)))
		b.StartTimer()
		var res tract.ImportResult
		var err error
		peak := measurePeak(func() { res, err = tr.ImportSeq(ctx, tract.ReadMessages(in)) })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(in.read)/(1<<20)/b.Elapsed().Seconds()*float64(i+1), "MiB/s")
		_ = res
	}
}

// BenchmarkReadMessages_Lines measures reading 100,000 JSON lines of
// about 300 bytes, without importing them.
func BenchmarkReadMessages_Lines(b *testing.B) {
	line := `{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 23) + `\n\"quoted\" é"}` + "\n"
	b.SetBytes(int64(len(line)) * 100_000)
	for i := 0; i < b.N; i++ {
		n := 0
		for _, err := range tract.ReadMessages(newGenerated("", line, "", 100_000)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100_000 {
			b.Fatal(n)
		}
	}
}
