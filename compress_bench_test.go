package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// cmpBenchChain returns n import messages alternating user and assistant,
// each of about 200 bytes, with no system prompt.
func cmpBenchChain(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	pad := strings.Repeat("lorem ipsum ", 15)
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("turn %05d: %s", i, pad)}
	}
	return msgs
}

// BenchmarkCompressRange compresses the first 9,000 commits of a
// 10,000-commit chain into one caller-supplied summary and replays the last
// 1,000 (target: under 100 ms). Each iteration first resets the branch to
// the original head, outside the timer. "durable" uses the default store
// (an fsync per transaction), "nosync" WithNoSync.
func BenchmarkCompressRange(b *testing.B) {
	for _, durable := range []bool{true, false} {
		name := "durable"
		if !durable {
			name = "nosync"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			var opts []tract.Option
			if !durable {
				opts = append(opts, tract.WithNoSync())
			}
			tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), opts...)
			require.NoError(b, err)
			b.Cleanup(func() { tr.Close() })
			head, err := tr.Import(ctx, cmpBenchChain(10_000))
			require.NoError(b, err)
			summary := tract.Summaries("Ten thousand turns about lorem ipsum; nothing was decided.")

			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				_, err := tr.Reset(ctx, head.String(), tract.Soft)
				require.NoError(b, err)
				b.StartTimer()

				res, err := tr.CompressRange(ctx, "", "HEAD~1000", summary)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Sources) != 9_000 || res.Replayed != 1_000 || len(res.Summaries) != 1 {
					b.Fatalf("compressed %d commits into %d summaries and replayed %d", len(res.Sources), len(res.Summaries), res.Replayed)
				}
			}
		})
	}
}
