package events_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

func TestEvent_JSONAndText(t *testing.T) {
	at := time.Date(2026, 1, 26, 14, 30, 0, 0, time.UTC)
	tests := []struct {
		name       string
		event      events.Event
		json, text string
	}{
		{
			"failed attempt",
			events.Event{Timestamp: at, Event: events.EventAttempt, TaskID: "03-01:task-3", Attempt: 1, Status: "failed",
				FailureType: retry.FailureVerification, Error: `2 tests "failed"`, DurationMS: 45000},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"attempt","task_id":"03-01:task-3","attempt":1,"status":"failed",` +
				`"failure_type":"verification_failed","error":"2 tests \"failed\"","commit":"` + zeroHash + `","duration_ms":45000}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [03-01:task-3] attempt=1 status=failed type=verification_failed duration_ms=45000 error="2 tests \"failed\""`,
		},
		{
			"instant success",
			events.Event{Timestamp: at, Event: events.EventAttempt, Attempt: 1, Status: "success"},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"attempt","attempt":1,"status":"success","commit":"` + zeroHash + `","duration_ms":0}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [-] attempt=1 status=success duration_ms=0`,
		},
		{
			"fixed answer",
			events.Event{Timestamp: at, Event: events.EventAttempt, Attempt: 1, Status: "success", FixedBy: "json", DurationMS: 12},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"attempt","attempt":1,"status":"success","fixed_by":"json","commit":"` + zeroHash + `","duration_ms":12}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [-] attempt=1 status=success fixed_by="json" duration_ms=12`,
		},
		{
			"feedback",
			events.Event{Timestamp: at, Event: events.EventFeedbackInjected, TaskID: "x", Attempt: 2, FeedbackLines: 2},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"feedback_injected","task_id":"x","attempt":2,"feedback_lines":2,"commit":"` + zeroHash + `"}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [x] injecting_feedback attempt=2 lines=2`,
		},
		{
			"escalated",
			events.Event{Timestamp: at, Event: events.EventEscalated, TaskID: "x", Attempts: 3, Reason: record.EscalateMaxRetries},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"escalated","task_id":"x","attempts":3,"reason":"max_retries_exceeded","commit":"` + zeroHash + `"}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [x] escalating reason="max_retries_exceeded" attempts=3`,
		},
		{
			"user response",
			events.Event{Timestamp: at, Event: events.EventUserResponse, TaskID: "x", Response: "skip"},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"user_response","task_id":"x","response":"skip","commit":"` + zeroHash + `"}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [x] user_response="skip"`,
		},
		{
			"resolved",
			events.Event{Timestamp: at, Event: events.EventResolved, TaskID: "x", Resolution: "skipped", TotalAttempts: 3, TotalDurationMS: 600000},
			`{"timestamp":"2026-01-26T14:30:00Z","event":"resolved","task_id":"x","resolution":"skipped","total_attempts":3,"commit":"` + zeroHash + `","total_duration_ms":600000}`,
			`[2026-01-26T14:30:00.000Z] [RETRY] [x] resolved status=skipped attempts=3 duration_ms=600000`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.event)
			require.NoError(t, err)
			assert.JSONEq(t, tt.json, string(b))
			var back events.Event
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.event, back)
			assert.Equal(t, tt.text, tt.event.String())
		})
	}
}

const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"
