package tract_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/tractdag/tract"
)

// conversationLines is a reader of n lines of fine-tuning JSONL (the
// openai format), made as they are read: each a conversation of a system
// prompt (the same in all), a question and an answer of about 150 bytes,
// each different.
type conversationLines struct {
	n, i int
	cur  []byte
}

func (c *conversationLines) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if len(c.cur) == 0 {
			if c.i == c.n {
				break
			}
			c.cur = fmt.Appendf(c.cur[:0], `{"messages":[{"role":"system","content":"You answer in one short paragraph."},`+
				`{"role":"user","content":"question %d: %s"},{"role":"assistant","content":"answer %d: %s"}]}`+"\n",
				c.i, lorem[:120], c.i, lorem[:140])
			c.i++
		}
		n := copy(p[k:], c.cur)
		c.cur = c.cur[n:]
		k += n
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// importConversationsPeak imports n generated conversations into a new
// file and returns the peak heap the import held.
func importConversationsPeak(tb testing.TB, tr *tract.Tract, n int) uint64 {
	var bs []tract.Branch
	var err error
	peak := measurePeak(func() {
		bs, err = tr.ImportConversations(context.Background(), "c", tract.ReadConversations(&conversationLines{n: n}))
	})
	if err != nil || len(bs) != n {
		tb.Fatalf("imported %d of %d conversations: %v", len(bs), n, err)
	}
	return peak
}

// BenchmarkImportConversations measures 'import --format openai' of 10k,
// 50k and 100k conversations (three messages each) into a file: time and
// peak heap, which must stay bounded (under 64 MiB) however many there are.
func BenchmarkImportConversations(b *testing.B) {
	for _, n := range []int{10_000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("conversations=%d", n), func(b *testing.B) {
			var worst uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				tr := benchTract(b, false)
				b.StartTimer()
				worst = max(worst, importConversationsPeak(b, tr, n))
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}
