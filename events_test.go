//go:build unix

package tract_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// eventMix runs a scripted mix of turns on tr, reporting their events to
// live: accepted first try, retried then accepted, exhausted (purified
// and not), escalated by a 401 and by a blocked validator, a server
// error, and an untasked Generate retried then accepted.
func eventMix(t *testing.T, tr *tract.Tract, srv *llmtest.Server, live func(tract.Event)) {
	t.Helper()
	ctx := context.Background()
	srv.Reply(
		llmtest.Answer(chatValid),                              // t1
		llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // t2
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), // t3
		llmtest.Unauthorized(),                                   // t4
		llmtest.Answer("an answer"),                              // t5
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), // t6
		llmtest.Error(500, "the server is on fire"),            // t7
		llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // Generate
	)
	blocked := retry.CheckerFunc("env", func(context.Context, string) (retry.Verdict, error) {
		return retry.Verdict{Blocked: "the test database is down"}, nil
	})
	noRetries := newChatClient(t, srv, llm.WithMaxRetries(0))
	turns := []struct {
		task string
		opts []tract.ChatOption
	}{
		{"t1", nil},
		{"t2", nil},
		{"t3", []tract.ChatOption{tract.MaxAttempts(2)}},
		{"t4", nil},
		{"t5", []tract.ChatOption{tract.Validate(blocked)}},
		{"t6", []tract.ChatOption{tract.MaxAttempts(2), tract.Purify(false)}},
		{"t7", []tract.ChatOption{tract.UseClient(noRetries)}},
	}
	for _, tn := range turns {
		opts := append([]tract.ChatOption{tract.Task(tn.task), tract.Validate(retry.JSON()), tract.OnEvent(live)}, tn.opts...)
		if tn.task == "t5" {
			opts = append([]tract.ChatOption{tract.Task(tn.task), tract.OnEvent(live)}, tn.opts...)
		}
		_, _ = tr.Chat(ctx, chatQuestion, opts...)
	}
	_, err := tr.Generate(ctx, tract.Validate(retry.JSON()), tract.OnEvent(live), tract.ProvenanceNote())
	require.NoError(t, err)
	srv.Verify(t)
}

// The events regenerated from the commits are exactly those reported
// live, field for field and in order.
func TestEvents_RegeneratedEqualLive(t *testing.T) {
	tr, srv := newChatServerTract(t)
	var live []tract.Event
	eventMix(t, tr, srv, func(e tract.Event) { live = append(live, e) })

	got, err := tr.Events(context.Background(), tract.EventFilter{})
	require.NoError(t, err)
	require.Equal(t, live, got)

	type step struct {
		event          tract.EventType
		task           string
		attempt        int
		status, detail string
	}
	var steps []step
	for _, e := range got {
		s := step{event: e.Event, task: e.TaskID, attempt: e.Attempt, status: e.Status}
		switch e.Event {
		case tract.EventAttempt:
			s.detail = string(e.FailureType)
		case tract.EventEscalated:
			s.detail, s.attempt = string(e.Reason), e.Attempts
		case tract.EventResolved:
			s.detail, s.attempt = e.Resolution, e.TotalAttempts
		}
		steps = append(steps, s)
	}
	attempt, feedback, escalated, resolved := tract.EventAttempt, tract.EventFeedbackInjected, tract.EventEscalated, tract.EventResolved
	assert.Equal(t, []step{
		{attempt, "t1", 1, "success", ""},
		{resolved, "t1", 1, "", "success"},

		{attempt, "t2", 1, "failed", "verification_failed"},
		{feedback, "t2", 2, "", ""},
		{attempt, "t2", 2, "success", ""},
		{resolved, "t2", 2, "", "success"},

		{attempt, "t3", 1, "failed", "verification_failed"},
		{feedback, "t3", 2, "", ""},
		{attempt, "t3", 2, "failed", "verification_failed"},
		{escalated, "t3", 2, "", "max_retries_exceeded"},
		{resolved, "t3", 2, "", "escalated"},

		{attempt, "t4", 1, "failed", "execution_error"},
		{escalated, "t4", 1, "", "auth"},
		{resolved, "t4", 1, "", "escalated"},

		{attempt, "t5", 1, "failed", "verification_failed"},
		{escalated, "t5", 1, "", "blocked"},
		{resolved, "t5", 1, "", "escalated"},

		{attempt, "t6", 1, "failed", "verification_failed"},
		{feedback, "t6", 2, "", ""},
		{attempt, "t6", 2, "failed", "verification_failed"},
		{escalated, "t6", 2, "", "max_retries_exceeded"},
		{resolved, "t6", 2, "", "escalated"},

		{attempt, "t7", 1, "failed", "execution_error"},
		{resolved, "t7", 1, "", "failed"},

		{attempt, "", 1, "failed", "verification_failed"},
		{feedback, "", 2, "", ""},
		{attempt, "", 2, "success", ""},
		{resolved, "", 2, "", "success"},
	}, steps)

	// The timestamp is the commit's time, the duration what the answer
	// recorded; the turn's duration runs from the start of its first
	// attempt to the commit that ended it.
	first := got[0]
	assert.GreaterOrEqual(t, first.DurationMS, int64(0))
	assert.Equal(t, got[1].Timestamp.Sub(first.Timestamp).Milliseconds()+first.DurationMS, got[1].TotalDurationMS)
	show, err := tr.Show(context.Background(), first.Commit.String())
	require.NoError(t, err)
	assert.Equal(t, show.Time, first.Timestamp)
	rec, ok := show.AttemptRecord()
	require.True(t, ok)
	assert.Equal(t, first.DurationMS, rec.DurationMS)
}

func TestEvents_Filter(t *testing.T) {
	tr, srv := newChatServerTract(t)
	var live []tract.Event
	eventMix(t, tr, srv, func(e tract.Event) { live = append(live, e) })
	ctx := context.Background()

	got, err := tr.Events(ctx, tract.EventFilter{Task: "t2"})
	require.NoError(t, err)
	require.Len(t, got, 4)
	for _, e := range got {
		assert.Equal(t, "t2", e.TaskID)
	}
	since := live[5].Timestamp // t2's resolution
	got, err = tr.Events(ctx, tract.EventFilter{Since: since})
	require.NoError(t, err)
	assert.Equal(t, live[5:], got)
	got, err = tr.Events(ctx, tract.EventFilter{Since: since.Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, got)
}

// The answers to escalations (retry, fix, skip, abort) and the fresh retry
// context come out the same live and regenerated: the escalation, then
// the user's response, then the next round or the end; Stats counts the
// skipped and the aborted task.
func TestEvents_EscalationAnswersRegeneratedEqualLive(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // e1: retry
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // e2: fix
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), // e3: skip
		llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), // e4: abort
		llmtest.Answer(chatInvalid), llmtest.Answer(chatValid), // e5: fresh
	)
	var live []tract.Event
	var seen []tract.Escalation
	record := tract.OnEvent(func(e tract.Event) { live = append(live, e) })
	for _, tc := range []struct {
		task string
		opt  tract.ChatOption
	}{
		{"e1", answering(&seen, tract.Resolution{Action: tract.ResolveRetry})},
		{"e2", answering(&seen, tract.Resolution{Action: tract.ResolveFix, Instruction: "quote the keys"})},
		{"e3", answering(&seen, tract.Resolution{Action: tract.ResolveSkip})},
		{"e4", answering(&seen, tract.Resolution{Action: tract.ResolveAbort})},
		{"e5", tract.RetryContextStrategy(tract.ContextFresh)},
	} {
		_, _ = tr.Chat(ctx, chatQuestion, tract.Task(tc.task), tract.Validate(retry.JSON()), tract.MaxAttempts(2), record, tc.opt)
	}
	srv.Verify(t)

	got, err := tr.Events(ctx, tract.EventFilter{})
	require.NoError(t, err)
	stepsOf := func(es []tract.Event) []string {
		var steps []string
		for _, e := range es {
			s := e.TaskID + " " + string(e.Event)
			switch e.Event {
			case tract.EventUserResponse:
				s += " " + e.Response
			case tract.EventResolved:
				s += " " + e.Resolution
			}
			steps = append(steps, s)
		}
		return steps
	}
	require.Equal(t, stepsOf(live), stepsOf(got))
	require.Equal(t, live, got)

	assert.Equal(t, []string{
		"e1 attempt", "e1 feedback_injected", "e1 attempt", "e1 escalated", "e1 user_response retry",
		"e1 feedback_injected", "e1 attempt", "e1 resolved success",
		"e2 attempt", "e2 feedback_injected", "e2 attempt", "e2 escalated", "e2 user_response fix",
		"e2 feedback_injected", "e2 attempt", "e2 resolved success",
		"e3 attempt", "e3 feedback_injected", "e3 attempt", "e3 escalated", "e3 user_response skip", "e3 resolved skipped",
		"e4 attempt", "e4 feedback_injected", "e4 attempt", "e4 escalated", "e4 user_response abort", "e4 resolved aborted",
		"e5 attempt", "e5 feedback_injected", "e5 attempt", "e5 resolved success",
	}, stepsOf(got))

	st, err := tr.Stats(ctx, tract.StatsFilter{})
	require.NoError(t, err)
	assert.Equal(t, 5, st.TotalTasks)
	assert.Equal(t, 4, st.Escalations)
	assert.Equal(t, 1, st.Skipped)
	assert.Equal(t, 1, st.Aborted)
}

// A round that ended in a failed model call, answered fix (or retry), goes
// on with the error commit and the steering on the attempts chain: live,
// the events hold them as the regenerated stream does.
func TestEvents_FixAfterModelFailureRegeneratedEqualLive(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Unauthorized(), llmtest.Answer(chatValid))
	var live []tract.Event
	var seen []tract.Escalation
	_, err := tr.Chat(ctx, chatQuestion, tract.Task("m1"), tract.Validate(retry.JSON()),
		tract.OnEvent(func(e tract.Event) { live = append(live, e) }),
		answering(&seen, tract.Resolution{Action: tract.ResolveFix, Instruction: "answer in JSON"}))
	require.NoError(t, err)
	require.Len(t, seen, 1)

	got, err := tr.Events(ctx, tract.EventFilter{})
	require.NoError(t, err)
	require.Equal(t, live, got)
}
