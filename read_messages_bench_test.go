package tract_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
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
		in    func() *testinput.Generated
		which tract.SizeLimit
	}{
		{"line=1GB", func() *testinput.Generated {
			return testinput.NewGenerated(`{"role":"user","content":"`, strings.Repeat("x", 64<<10), `"}`, 1<<30/(64<<10))
		}, tract.LimitLineSize},
		{"message=50MB", func() *testinput.Generated {
			return testinput.NewGenerated(`{"role":"user","content":"`, strings.Repeat("x", 50_000), `"}`, 1000)
		}, tract.LimitMessageSize},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var worst, read uint64
			for i := 0; i < b.N; i++ {
				in := tc.in()
				var err error
				worst = max(worst, measurePeak(func() { err = drainMessages(in) }))
				testinput.RequireTooLarge(b, err, tc.which)
				read = uint64(in.Delivered)
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(read)/(1<<20), "read-MiB")
		})
	}
}

// distinctLines is a reader of n JSON lines of about 1 KiB, each text
// different (so that no blob is shared), made as they are read.
type distinctLines struct {
	n, i int
	cur  []byte
	read int64
}

var lorem = strings.Repeat("lorem ipsum ", 84)

func (d *distinctLines) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if len(d.cur) == 0 {
			if d.i == d.n {
				break
			}
			d.cur = fmt.Appendf(d.cur[:0], "{\"role\":\"user\",\"content\":\"message %d %s\"}\n", d.i, lorem)
			d.i++
		}
		c := copy(p[k:], d.cur)
		d.cur = d.cur[c:]
		k += c
	}
	d.read += int64(k)
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// BenchmarkImport_Valid measures an import of 200 MB of JSON lines (1 KiB
// messages, all different) through ReadMessages and ImportSeq into a file:
// time and peak heap.
func BenchmarkImport_Valid(b *testing.B) {
	const messages = 200_000
	ctx := context.Background()
	var worst uint64
	var read int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tr := benchTract(b, false)
		in := &distinctLines{n: messages}
		b.StartTimer()
		var res tract.ImportResult
		var err error
		worst = max(worst, measurePeak(func() { res, err = tr.ImportSeq(ctx, tract.ReadMessages(in)) }))
		if err != nil || res.Messages != messages {
			b.Fatal(err, res.Messages)
		}
		read += in.read
	}
	b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(read)/(1<<20)/b.Elapsed().Seconds(), "MiB/s")
}

// BenchmarkReadMessages_Lines measures reading 100,000 JSON lines of
// about 300 bytes, without importing them.
func BenchmarkReadMessages_Lines(b *testing.B) {
	line := `{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 23) + `\n\"quoted\" é"}` + "\n"
	b.SetBytes(int64(len(line)) * 100_000)
	for i := 0; i < b.N; i++ {
		n := 0
		for _, err := range tract.ReadMessages(testinput.NewGenerated("", line, "", 100_000)) {
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

// drainMessages reads every message of in, and returns the first error.
func drainMessages(in io.Reader) error {
	for _, err := range tract.ReadMessages(in) {
		if err != nil {
			return err
		}
	}
	return nil
}
