package tract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
)

// peakHeap samples the heap in use while fn runs and returns the largest
// sample above what was in use before, in bytes.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak - min(peak, before.HeapInuse)
}

// benchMessages returns n messages alternating user and assistant, of
// about 200 bytes each.
func benchMessages(n, conv int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("conversation %d, message %d: %s", conv, i, strings.Repeat("lorem ipsum ", 16))}
	}
	return msgs
}

// BenchmarkExport_OpenAI exports 100,000 messages in the openai format:
// as one conversation, and as 1,000 branches of 100 messages. It reports
// the growth of the heap in use at its peak (heap-MB) besides time and
// allocations.
func BenchmarkExport_OpenAI(b *testing.B) {
	ctx := context.Background()
	for _, shape := range []struct {
		name        string
		convs, msgs int
	}{{"1x100000", 1, 100_000}, {"1000x100", 1000, 100}} {
		b.Run(shape.name, func(b *testing.B) {
			tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
			require.NoError(b, err)
			defer tr.Close()
			convs := func(yield func(tract.Conversation, error) bool) {
				for c := range shape.convs {
					if !yield(tract.Conversation{Messages: benchMessages(shape.msgs, c)}, nil) {
						return
					}
				}
			}
			_, err = tr.ImportConversations(ctx, "c", convs)
			require.NoError(b, err)
			benchExport(b, tr, export.OpenAI, shape.convs)
		})
	}
}

// BenchmarkExport_Preference exports the pairs of 2,000 validated turns
// (200 branches of 10 turns, each rejected once before it was accepted,
// the attempts left on the branch: 41 commits a branch) in the
// openai-preference format: 2,000 lines whose prompts are read again for
// each.
func BenchmarkExport_Preference(b *testing.B) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	defer tr.Close()
	meta := func(v any) json.RawMessage { raw, _ := json.Marshal(v); return raw }
	const branches, turns = 200, 10
	convs := func(yield func(tract.Conversation, error) bool) {
		for c := range branches {
			msgs := []tract.ImportMessage{{Role: tract.RoleSystem, Content: "Answer in JSON."}}
			for i := range turns {
				task := fmt.Sprintf("c%d-t%d", c, i)
				msgs = append(msgs,
					tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("Question %d of conversation %d?", i, c)},
					tract.ImportMessage{Role: tract.RoleAssistant, Content: "not json", Meta: meta(map[string]any{
						"attempt": 1, "valid": false, "diagnosis": "invalid JSON", "task": task, "validators": []string{"json"},
						"failure": map[string]any{"attempt": 1, "timestamp": "2026-03-01T12:00:00Z", "failure_type": "verification_failed", "error": "invalid JSON"}})},
					tract.ImportMessage{Kind: tract.KindSteering, Role: tract.RoleUser, Content: "Your previous response failed validation.",
						Meta: meta(map[string]any{"attempt": 1, "diagnosis": "invalid JSON", "task": task})},
					tract.ImportMessage{Role: tract.RoleAssistant, Content: `{"answer": 42}`, Meta: meta(map[string]any{
						"attempt": 2, "valid": true, "task": task, "validators": []string{"json"},
						"provenance": map[string]any{"attempts": 2, "diagnoses": []string{"invalid JSON"}}})},
				)
			}
			if !yield(tract.Conversation{Messages: msgs}, nil) {
				return
			}
		}
	}
	_, err = tr.ImportConversations(ctx, "c", convs)
	require.NoError(b, err)
	benchExport(b, tr, export.OpenAIPreference, branches*turns)
}

// benchExport times exports of every conversation of tr in format, each
// writing lines lines, and reports the highest peak heap of them.
func benchExport(b *testing.B, tr *tract.Tract, format export.Format, lines int) {
	ctx := context.Background()
	runtime.GC()
	b.ResetTimer()
	var peak uint64
	for b.Loop() {
		peak = max(peak, peakHeap(func() {
			res, err := tr.Export(ctx, io.Discard, format, tract.ExportAll())
			require.NoError(b, err)
			require.Equal(b, lines, res.Lines)
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
}
