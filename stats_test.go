//go:build unix

package tract_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

func TestStats_ScriptedMixOfTasks(t *testing.T) {
	tr, srv := newChatServerTract(t)
	eventMix(t, tr, srv, func(tract.Event) {})
	// t3 escalated; a second turn on it succeeds.
	srv.Reply(llmtest.Answer(chatValid))
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Task("t3"), tract.Validate(retry.JSON()))
	require.NoError(t, err)

	st, err := tr.Stats(context.Background(), tract.StatsFilter{})
	require.NoError(t, err)

	failed, accepted := 0, 0
	for _, c := range everyCommit(t, tr) {
		if r, ok := c.AttemptRecord(); ok && c.Kind == tract.KindMessage {
			if *r.Valid {
				accepted += r.Usage.TotalTokens
			} else {
				failed += r.Usage.TotalTokens
			}
		}
	}
	require.Positive(t, failed)
	assert.Equal(t, failed, st.TokensFailed)
	assert.Equal(t, accepted, st.TokensAccepted)

	// The Generate turn, without a task, is a task of its own.
	assert.Equal(t, 8, st.TotalTasks)
	assert.Equal(t, 1, st.FirstAttemptSuccesses)
	assert.Equal(t, 12.5, st.FirstAttemptSuccessPct)
	assert.Equal(t, 4, st.Retried, "t2, t3, t6, the turn without a task")
	assert.Equal(t, 3, st.RetrySuccesses, "t2, t3 on its second turn, the turn without a task")
	assert.Equal(t, 4, st.Escalations, "t3, t4, t5, t6")
	assert.Zero(t, st.Skipped)
	assert.Zero(t, st.Aborted)
	assert.Equal(t, 13, st.Attempts)
	assert.Equal(t, 1.63, st.MeanAttempts)
	assert.Equal(t, map[retry.FailureType]int{retry.FailureVerification: 7, retry.FailureExecution: 2}, st.FailureTypes)
	assert.Equal(t, 1, st.UntaskedTurns)
	require.Len(t, st.TopDiagnoses, 4)
	assert.Equal(t, 6, st.TopDiagnoses[0].Count)
	assert.Contains(t, st.TopDiagnoses[0].Diagnosis, "json")

	type row struct {
		task     string
		turns    int
		attempts int
		result   string
		escal    bool
	}
	var rows []row
	for _, ts := range st.Tasks {
		rows = append(rows, row{ts.Task, ts.Turns, ts.Attempts, ts.Result, ts.Escalated})
	}
	assert.Equal(t, []row{
		{"t1", 1, 1, "success", false},
		{"t2", 1, 2, "success", false},
		{"t3", 2, 3, "success", true},
		{"t4", 1, 1, "escalated", true},
		{"t5", 1, 1, "escalated", true},
		{"t6", 1, 2, "escalated", true},
		{"t7", 1, 1, "failed", false},
		{tract.NoTask, 1, 2, "success", false},
	}, rows)
}

func TestStats_Filter(t *testing.T) {
	tr, srv := newChatServerTract(t)
	var live []tract.Event
	eventMix(t, tr, srv, func(e tract.Event) { live = append(live, e) })
	ctx := context.Background()
	tests := []struct {
		name   string
		filter tract.StatsFilter
		tasks  []string
	}{
		{"prefix", tract.StatsFilter{TaskPrefix: "t1"}, []string{"t1"}},
		{"since", tract.StatsFilter{Since: live[2].Timestamp.Add(-time.Second)}, []string{"t2", "t3", "t4", "t5", "t6", "t7", tract.NoTask}},
		{"after all", tract.StatsFilter{Since: live[len(live)-1].Timestamp.Add(time.Second)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tr.Stats(ctx, tt.filter)
			require.NoError(t, err)
			var tasks []string
			for _, ts := range st.Tasks {
				tasks = append(tasks, ts.Task)
			}
			assert.Equal(t, tt.tasks, tasks)
			assert.Equal(t, len(tt.tasks), st.TotalTasks)
		})
	}
}

// A task whose escalation was answered skip, and that a later turn
// accepted, counts as skipped (and as a retry success): skipped says the
// task was given up once, whatever came after.
func TestStats_SkippedAtAnyTurn(t *testing.T) {
	tr, srv := newChatServerTract(t)
	ctx := context.Background()
	srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // t1: skipped, then accepted
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), llmtest.Answer(chatValid)) // t2: aborted, then accepted
	for _, tc := range []struct {
		task   string
		answer tract.ResolutionAction
	}{{"t1", tract.ResolveSkip}, {"t2", tract.ResolveAbort}} {
		var seen []tract.Escalation
		_, err := tr.Chat(ctx, chatQuestion, tract.Task(tc.task), tract.Validate(retry.JSON()), tract.MaxAttempts(2),
			answering(&seen, tract.Resolution{Action: tc.answer}))
		require.Error(t, err)
		_, err = tr.RetryLast(ctx, tract.Task(tc.task), tract.Validate(retry.JSON()))
		require.NoError(t, err)
	}
	st, err := tr.Stats(ctx, tract.StatsFilter{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.TotalTasks)
	assert.Equal(t, 1, st.Skipped)
	assert.Equal(t, 1, st.Aborted)
	assert.Equal(t, 2, st.RetrySuccesses)
	for _, ts := range st.Tasks {
		assert.Equal(t, tract.ResolvedSuccess, ts.Result, "the last turn's resolution")
	}
}
