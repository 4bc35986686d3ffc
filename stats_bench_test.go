package tract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// statsHistory builds a repository of tasks validated turns worked on, 5
// commits each, as the turns write them: a third retried then accepted
// (user, failed answer, steering, accepted answer, provenance note), a
// third exhausted (user, two failed answers and the steering between,
// error commit), a third accepted at once and followed by two plain
// messages.
func statsHistory(b *testing.B, tasks int) *tract.Tract {
	b.Helper()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, tr.Close()) })
	meta := func(format string, args ...any) json.RawMessage { return json.RawMessage(fmt.Sprintf(format, args...)) }
	const (
		usage   = `"usage":{"prompt_tokens":90,"completion_tokens":10,"total_tokens":100}`
		failure = `"failure":{"attempt":%d,"timestamp":"2026-01-26T14:30:00Z","failure_type":"verification_failed","error":"invalid JSON at line %d"}`
	)
	var batch []tract.ImportMessage
	for i := range tasks {
		task := fmt.Sprintf("%02d-01:task-%d", i%50, i)
		user := tract.ImportMessage{Role: tract.RoleUser, Content: "question", Meta: meta(`{"task":%q}`, task)}
		failed := func(n int) tract.ImportMessage {
			return tract.ImportMessage{Role: tract.RoleAssistant, Content: "not json",
				Meta: meta(`{"attempt":%d,"duration_ms":1200,"valid":false,"task":%q,`+usage+`,`+failure+`}`, n, task, n, i%7)}
		}
		steer := tract.ImportMessage{Kind: tract.KindSteering, Role: tract.RoleUser, Content: "try again\nplease",
			Meta: meta(`{"attempt":1,"diagnosis":"invalid JSON","task":%q}`, task)}
		accepted := func(n int) tract.ImportMessage {
			return tract.ImportMessage{Role: tract.RoleAssistant, Content: `{"ok":true}`,
				Meta: meta(`{"attempt":%d,"duration_ms":900,"valid":true,"task":%q,`+usage+`,"provenance":{"attempts":%d,"diagnoses":[]}}`, n, task, n)}
		}
		switch i % 3 {
		case 0:
			batch = append(batch, user, failed(1), steer, accepted(2),
				tract.ImportMessage{Kind: tract.KindNote, Role: tract.RoleSystem, Content: "resolved after 2 attempts",
					Meta: meta(`{"task":%q,"provenance":{"attempts":2,"diagnoses":["invalid JSON"]}}`, task)})
		case 1:
			batch = append(batch, user, failed(1), steer, failed(2),
				tract.ImportMessage{Kind: tract.KindError, Role: tract.RoleAssistant, Content: "validation failed after 2 attempts",
					Meta: meta(`{"task":%q,"provenance":{"attempts":2,"diagnoses":["invalid JSON","invalid JSON"]}}`, task)})
		default:
			batch = append(batch, user, accepted(1),
				tract.ImportMessage{Role: tract.RoleUser, Content: "thanks"},
				tract.ImportMessage{Role: tract.RoleAssistant, Content: "you are welcome"},
				tract.ImportMessage{Role: tract.RoleUser, Content: "bye"})
		}
		if len(batch) >= 5000 || i == tasks-1 {
			_, err := tr.CommitMany(context.Background(), batch)
			require.NoError(b, err)
			batch = batch[:0]
		}
	}
	return tr
}

// Stats over 10,000 tasks in 50,000 commits.
func BenchmarkStats_10kTasks(b *testing.B) {
	tr := statsHistory(b, 10_000)
	ctx := context.Background()
	st, err := tr.Stats(ctx, tract.StatsFilter{})
	require.NoError(b, err)
	require.Equal(b, 10_000, st.TotalTasks)
	require.Equal(b, 3333, st.FirstAttemptSuccesses)
	require.Equal(b, 3333, st.Escalations)
	require.Equal(b, 3334, st.RetrySuccesses)
	b.ResetTimer()
	for b.Loop() {
		if _, err := tr.Stats(ctx, tract.StatsFilter{}); err != nil {
			b.Fatal(err)
		}
	}
}
