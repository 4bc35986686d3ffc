package tract_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// wordsChain returns n import messages of about 300 bytes of words drawn
// from a vocabulary of 5,000 (Zipf-distributed, as in prose), with the
// word "needle" in one message of 1,000.
func wordsChain(n int) []tract.ImportMessage {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	msgs := make([]tract.ImportMessage, n)
	var b strings.Builder
	for i := range msgs {
		b.Reset()
		if i%1000 == 0 {
			b.WriteString("needle ")
		}
		for b.Len() < 300 {
			fmt.Fprintf(&b, "w%d ", z.Uint64())
		}
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: b.String()}
	}
	return msgs
}

// BenchmarkSearch measures a search of 100,000 messages: a rare word
// (one message in 1,000), the ten newest of a common one, and two words
// together.
func BenchmarkSearch(b *testing.B) {
	tr := benchTract(b, false)
	ctx := context.Background()
	_, err := tr.Import(ctx, wordsChain(100_000))
	require.NoError(b, err)
	for _, tc := range []struct {
		name, query string
		limit       int
	}{
		{"rare", "needle", 0},
		{"common-10", "w1", 10},
		{"two-words", "needle w2", 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q, err := search.ParseQuery(tc.query)
			require.NoError(b, err)
			for b.Loop() {
				n := 0
				for _, err := range tr.Search(ctx, q, tract.SearchLimit(tc.limit)) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n == 0 {
					b.Fatal("no match")
				}
			}
		})
	}
}

// BenchmarkLogGrep measures log --grep's walk over 100,000 messages: its
// rate in commits read per second.
func BenchmarkLogGrep(b *testing.B) {
	const n = 100_000
	tr := benchTract(b, false)
	ctx := context.Background()
	_, err := tr.Import(ctx, wordsChain(n))
	require.NoError(b, err)
	g, err := search.NewGrep([]string{`needle w[0-9]+ w1\b`}, search.IgnoreCase())
	require.NoError(b, err)
	for b.Loop() {
		for _, err := range tr.LogSeq(ctx, tract.LogGrep(g)) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "commits/s")
}
