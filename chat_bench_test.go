package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// chatTimedClient passes calls on to a client and adds up the time they
// take, so a benchmark can tell the time tract adds around the model.
// Chat calls it from one goroutine at a time.
type chatTimedClient struct {
	llm.Client
	spent time.Duration
}

func (c *chatTimedClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := c.Client.Complete(ctx, req)
	c.spent += time.Since(start)
	return resp, err
}

// chatConstClient answers every request with the same text and keeps
// nothing, unlike llm.Scripted, which records every request (10,000
// messages each here) and so makes the garbage collector work harder as the
// benchmark runs.
type chatConstClient string

func (c chatConstClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: string(c), Model: "const", FinishReason: "stop"}, nil
}

// chatHistory returns n import messages alternating user and assistant.
func chatHistory(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	pad := strings.Repeat("x", 40)
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("history %06d %s", i, pad)}
	}
	return msgs
}

// BenchmarkChatValidatedTurn measures one Chat turn with the json validator
// on a 10,000-commit history in a durable (fsynced) repository. ns/attempt is
// the whole turn divided by the model answers it took; tract-ns/attempt
// leaves out the time spent inside the model client (target: under 2 ms).
// With the in-process Scripted client both are almost the same; the http
// variants go through the OpenAI client and the llmtest server. The retry
// variants answer invalid JSON first, so a turn is two attempts, a steering
// commit and a purify; cold drops the compile cache before every turn, as
// a new `tract chat` process starts without it.
func BenchmarkChatValidatedTurn(b *testing.B) {
	const valid, invalid = `{"ok":true}`, "not JSON"
	scripted := func(retries bool) llm.Client {
		s := llm.NewScripted()
		if retries {
			s.When("failed validation", llm.Reply{Content: valid}).Otherwise(llm.Reply{Content: invalid})
		} else {
			s.Otherwise(llm.Reply{Content: valid})
		}
		return s
	}
	server := func(b *testing.B, retries bool) llm.Client {
		srv := llmtest.NewServer(b)
		if retries {
			srv.When("failed validation", llmtest.Answer(valid)).Otherwise(llmtest.Answer(invalid))
		} else {
			srv.Otherwise(llmtest.Answer(valid))
		}
		return newChatClient(b, srv)
	}
	b.Run("const", func(b *testing.B) { benchChatTurns(b, chatConstClient(valid), 1, false) })
	b.Run("scripted", func(b *testing.B) { benchChatTurns(b, scripted(false), 1, false) })
	b.Run("scripted-retry", func(b *testing.B) { benchChatTurns(b, scripted(true), 2, false) })
	b.Run("scripted-cold", func(b *testing.B) { benchChatTurns(b, scripted(false), 1, true) })
	b.Run("http", func(b *testing.B) { benchChatTurns(b, server(b, false), 1, false) })
	b.Run("http-retry", func(b *testing.B) { benchChatTurns(b, server(b, true), 2, false) })
}

func benchChatTurns(b *testing.B, client llm.Client, attempts int, cold bool) {
	const history = 10_000
	ctx := context.Background()
	timed := &chatTimedClient{Client: client}
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithClient(timed))
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	_, err = tr.Import(ctx, chatHistory(history))
	require.NoError(b, err)
	_, err = tr.Compile(ctx)
	require.NoError(b, err)
	validate := tract.Validate(retry.JSON())

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			tr.DropCaches()
		}
		res, err := tr.Chat(ctx, fmt.Sprintf("question %d", i), validate)
		if err != nil {
			b.Fatal(err)
		}
		if res.Attempts != attempts {
			b.Fatalf("turn %d took %d attempts, want %d", i, res.Attempts, attempts)
		}
	}
	b.StopTimer()
	n := float64(b.N * attempts)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/attempt")
	b.ReportMetric(float64((b.Elapsed()-timed.spent).Nanoseconds())/n, "tract-ns/attempt")
}
