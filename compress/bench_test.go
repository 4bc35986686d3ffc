package compress_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/dag"
)

// The compress-side share of compressing 9,000 commits with a
// caller-supplied summary: planning and checking, no model.
func BenchmarkPlanAndSummarize_9000(b *testing.B) {
	items := make([]compress.Item, 9000)
	items[0] = sys("You are a helpful assistant.")
	for i := 1; i < len(items); i++ {
		role := dag.RoleUser
		if i%2 == 0 {
			role = dag.RoleAssistant
		}
		items[i] = it(role, fmt.Sprintf("message %d: %s", i, sized("", 200)))
	}
	cfg := compress.Config{Content: "The conversation so far, in short."}
	b.ReportAllocs()
	for b.Loop() {
		p, err := compress.Plan(items)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := compress.SummarizeAll(context.Background(), p.Groups, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}
