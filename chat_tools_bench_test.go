package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// toolStepsClient calls the tool "lookup" until the request holds n tool
// steps after its last user message, then answers. It keeps nothing, so
// that it costs next to nothing.
type toolStepsClient struct{ n int }

func (c toolStepsClient) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	steps := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "user"; i-- {
		if len(req.Messages[i].ToolCalls) > 0 {
			steps++
		}
	}
	if steps == c.n {
		return &llm.Response{Content: "sunny everywhere", Model: "const"}, nil
	}
	return &llm.Response{Model: "const", ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", steps+1), Type: "function",
		Function: llm.FunctionCall{Name: "lookup", Arguments: `{"city":"Paris"}`}}}}, nil
}

// BenchmarkChatToolSteps measures a Chat turn with tools on a file
// repository, against an in-process model and an instant tool: steps=3
// calls the tool three times before it answers, steps=0 answers at once
// (the same turn without a tool step). tract-ns/step is the turn's time,
// less the model's and the tool's, divided by its tool steps, the turn's
// user message, compile and final answer counted in it; what one step
// adds is (ns/op of steps=3 - ns/op of steps=0) / 3. fresh starts every
// turn on a new branch (NewConversation), so that the figures do not grow
// with the history; history answers on one branch that starts with 1,000
// commits and grows by a turn's commits every turn. nosync does not fsync
// (tract.WithNoSync); durable does, as a repository does by default, and
// its figures are mostly the disk's.
func BenchmarkChatToolSteps(b *testing.B) {
	for _, steps := range []int{0, 3} {
		b.Run(fmt.Sprintf("fresh/nosync/steps=%d", steps), func(b *testing.B) { benchToolSteps(b, steps, true, tract.WithNoSync()) })
		b.Run(fmt.Sprintf("fresh/durable/steps=%d", steps), func(b *testing.B) { benchToolSteps(b, steps, true) })
		b.Run(fmt.Sprintf("history/nosync/steps=%d", steps), func(b *testing.B) { benchToolSteps(b, steps, false, tract.WithNoSync()) })
	}
}

func benchToolSteps(b *testing.B, steps int, fresh bool, opts ...tract.Option) {
	ctx := context.Background()
	timed := &chatTimedClient{Client: toolStepsClient{steps}}
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), append(opts, tract.WithClient(timed))...)
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	if !fresh {
		_, err = tr.Import(ctx, chatHistory(1_000))
		require.NoError(b, err)
	}
	var inTool time.Duration
	lookup := tract.Tool("lookup", "Looks up the weather.", func(_ context.Context, in weatherArgs) (weather, error) {
		start := time.Now()
		defer func() { inTool += time.Since(start) }()
		return weather{City: in.City, Sky: "sunny"}, nil
	})
	tools := tract.Tools(lookup)

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		chatOpts := []tract.ChatOption{tools}
		if fresh {
			chatOpts = append(chatOpts, tract.NewConversation(fmt.Sprintf("c%d", i)))
		}
		res, err := tr.Chat(ctx, fmt.Sprintf("question %d", i), chatOpts...)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.ToolSteps) != steps {
			b.Fatalf("turn %d made %d tool steps, want %d", i, len(res.ToolSteps), steps)
		}
	}
	b.StopTimer()
	if steps > 0 {
		b.ReportMetric(float64((b.Elapsed()-timed.spent-inTool).Nanoseconds())/float64(b.N*steps), "tract-ns/step")
	}
}
