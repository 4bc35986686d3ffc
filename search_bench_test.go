package tract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
	"github.com/tractdag/tract/search"
)

// BenchmarkSearch measures a search of 100,000 messages: a rare word
// (one message in 1,000), the ten newest of a common one, and two words
// together.
func BenchmarkSearch(b *testing.B) {
	tr := benchTract(b, false)
	ctx := context.Background()
	_, err := tr.Import(ctx, testinput.WordMessages(100_000))
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
	_, err := tr.Import(ctx, testinput.WordMessages(n))
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
