package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/serve"
)

// BenchmarkProxy_Conversations sends requests from concurrent clients,
// each a conversation that grows by a question and its answer per
// request (20 requests, then a new one), through the proxy to a scripted
// upstream that answers at once, into a file repository with fsync.
func BenchmarkProxy_Conversations(b *testing.B) {
	repo, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"))
	require.NoError(b, err)
	defer repo.Close()
	model := llmtest.New()
	defer model.Close()
	model.Otherwise(llmtest.Answer("ok"))
	h, err := serve.New(context.Background(), repo, serve.WithOpenAI(model.URL(), "k"))
	require.NoError(b, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	var conv atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var msgs []msg
		for pb.Next() {
			if len(msgs) == 0 || len(msgs) > 40 {
				msgs = []msg{{"user", fmt.Sprintf("conversation %d", conv.Add(1))}}
			}
			body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
			resp, err := http.Post(proxy.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			msgs = append(msgs, msg{"assistant", "ok"}, msg{"user", "next"})
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
}

// BenchmarkNew_Index measures the Handler's start on a repository of 100
// conversations of 1,000 messages each: reading every branch once.
func BenchmarkNew_Index(b *testing.B) {
	repo, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	defer repo.Close()
	ctx := context.Background()
	for c := range 100 {
		msgs := make([]tract.ImportMessage, 1000)
		for i := range msgs {
			role := tract.RoleUser
			if i%2 == 1 {
				role = tract.RoleAssistant
			}
			msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("conversation %d, message %d", c, i)}
		}
		_, err := repo.CommitChainOn(ctx, fmt.Sprintf("c%d", c), tract.Hash{}, msgs)
		require.NoError(b, err)
	}
	b.ResetTimer()
	for range b.N {
		_, err := serve.New(ctx, repo)
		require.NoError(b, err)
	}
}
