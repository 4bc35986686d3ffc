package events

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

// EventType names what an Event reports.
type EventType string

// The events of a validated turn, in the order a turn emits them.
const (
	// EventAttempt: the model answered (or its call failed) and the answer
	// was judged: one per attempt.
	EventAttempt EventType = "attempt"
	// EventFeedbackInjected: a steering message telling the model what
	// was wrong was committed before the next attempt.
	EventFeedbackInjected EventType = "feedback_injected"
	// EventEscalated: the turn stopped without an accepted answer because
	// its attempts ran out or a failure that retrying cannot fix occurred.
	EventEscalated EventType = "escalated"
	// EventUserResponse: the escalation was answered (retry, skip, abort,
	// fix).
	EventUserResponse EventType = "user_response"
	// EventResolved: the turn ended; the last event of every turn.
	EventResolved EventType = "resolved"
)

// The statuses of an EventAttempt.
const (
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// The resolutions of an EventResolved.
const (
	// ResolvedSuccess: an answer was accepted.
	ResolvedSuccess = "success"
	// ResolvedEscalated: the turn escalated (see EventEscalated) and
	// ended with an error, with no one asked: a Go caller gave no
	// escalation hook, or the rounds ran out. (A hook's answer resolves
	// it as ResolvedSkipped or ResolvedAborted.)
	ResolvedEscalated = "escalated"
	// ResolvedFailed: the model call failed in a way retrying may fix (a
	// server error after the client's own retries), or a validator could
	// not run.
	ResolvedFailed = "failed"
	// ResolvedCancelled: the turn was interrupted after a steering
	// message, before the next answer was committed. A turn still under
	// way in another process reads the same.
	ResolvedCancelled = "cancelled"
	// ResolvedSkipped and ResolvedAborted: the escalation was answered
	// skip or abort.
	ResolvedSkipped = "skipped"
	ResolvedAborted = "aborted"
)

// Event is one step of a validated turn, as the turn reports it live (Live)
// and Replay regenerates it from the commits. Every
// field is derived from the turn's commits: Timestamp is the time of the
// commit the event stems from (the attempt, the steering message, the
// commit that ended the turn), DurationMS the attempt's duration recorded
// under record.KeyDuration, so the live stream and the regenerated one are
// equal. Fields that do not apply to the event's type are zero and left
// out of its JSON.
type Event struct {
	// Timestamp is the time of Commit.
	Timestamp time.Time `json:"timestamp"`
	// Event says what happened.
	Event EventType `json:"event"`
	// TaskID is the turn's task id ("" when it has none).
	TaskID string `json:"task_id,omitempty"`
	// Attempt is the attempt's number (EventAttempt), or the number of
	// the attempt the feedback is for (EventFeedbackInjected).
	Attempt int `json:"attempt,omitempty"`
	// Status is StatusSuccess or StatusFailed (EventAttempt).
	Status string `json:"status,omitempty"`
	// FailureType and Error are those of a failed attempt's failure
	// record; Error is a validator's error when it could not run.
	FailureType retry.FailureType `json:"failure_type,omitempty"`
	Error       string            `json:"error,omitempty"`
	// FixedBy names the validator that fixed the attempt's answer, which
	// was accepted as fixed with no other model call (EventAttempt with
	// StatusSuccess); "" when none did.
	FixedBy string `json:"fixed_by,omitempty"`
	// DurationMS is how long the attempt took, model call and validation,
	// in milliseconds (EventAttempt).
	DurationMS int64 `json:"duration_ms"`
	// FeedbackLines is the number of lines of the steering message
	// (EventFeedbackInjected).
	FeedbackLines int `json:"feedback_lines,omitempty"`
	// Attempts is the number of attempts made when the turn escalated
	// (EventEscalated).
	Attempts int `json:"attempts,omitempty"`
	// Reason is why it escalated (EventEscalated).
	Reason record.EscalationReason `json:"reason,omitempty"`
	// Response is the answer to the escalation: retry, skip, abort or fix
	// (EventUserResponse).
	Response string `json:"response,omitempty"`
	// EscalationID, AnsweredBy and AnsweredAt are, for an escalation that
	// waited in the repository for its answer (EventUserResponse), its
	// id, who answered ("" when no one said) and when; the event's own
	// Timestamp is when the turn took the answer up.
	EscalationID string     `json:"escalation_id,omitempty"`
	AnsweredBy   string     `json:"answered_by,omitempty"`
	AnsweredAt   *time.Time `json:"answered_at,omitempty"`
	// Resolution says how the turn ended (EventResolved): ResolvedSuccess,
	// …
	Resolution string `json:"resolution,omitempty"`
	// TotalAttempts and TotalDurationMS are the turn's attempts and its
	// time from the start of the first attempt to the commit that ended
	// it (EventResolved).
	TotalAttempts   int   `json:"total_attempts,omitempty"`
	TotalDurationMS int64 `json:"total_duration_ms"`
	// Commit is the commit the event stems from.
	Commit dag.Hash `json:"commit"`
}

// MarshalJSON writes the event with the fields of its type: duration_ms
// only on an attempt and total_duration_ms only on a resolution, even
// when 0.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	var v struct {
		plain
		DurationMS      *int64 `json:"duration_ms,omitempty"`
		TotalDurationMS *int64 `json:"total_duration_ms,omitempty"`
	}
	v.plain = plain(e)
	switch e.Event {
	case EventAttempt:
		v.DurationMS = &e.DurationMS
	case EventResolved:
		v.TotalDurationMS = &e.TotalDurationMS
	}
	return json.Marshal(v)
}

// String returns the event as a line of the retry log:
//
//	[2026-01-26T14:30:00.000Z] [RETRY] [03-01:task-3] attempt=1 status=failed type=verification_failed duration_ms=45000 error="2 tests failed"
func (e Event) String() string {
	var b strings.Builder
	task := e.TaskID
	if task == "" {
		task = "-"
	}
	fmt.Fprintf(&b, "[%s] [RETRY] [%s] ", e.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00"), task)
	switch e.Event {
	case EventAttempt:
		fmt.Fprintf(&b, "attempt=%d status=%s", e.Attempt, e.Status)
		if e.FailureType != "" {
			fmt.Fprintf(&b, " type=%s", e.FailureType)
		}
		if e.FixedBy != "" {
			fmt.Fprintf(&b, " fixed_by=%s", strconv.Quote(e.FixedBy))
		}
		fmt.Fprintf(&b, " duration_ms=%d", e.DurationMS)
		if e.Error != "" {
			fmt.Fprintf(&b, " error=%s", strconv.Quote(e.Error))
		}
	case EventFeedbackInjected:
		fmt.Fprintf(&b, "injecting_feedback attempt=%d lines=%d", e.Attempt, e.FeedbackLines)
	case EventEscalated:
		fmt.Fprintf(&b, "escalating reason=%s attempts=%d", strconv.Quote(string(e.Reason)), e.Attempts)
	case EventUserResponse:
		fmt.Fprintf(&b, "user_response=%s", strconv.Quote(e.Response))
		if e.EscalationID != "" {
			fmt.Fprintf(&b, " escalation=%s answered_by=%s", e.EscalationID, strconv.Quote(e.AnsweredBy))
		}
	case EventResolved:
		fmt.Fprintf(&b, "resolved status=%s attempts=%d duration_ms=%d", e.Resolution, e.TotalAttempts, e.TotalDurationMS)
	default:
		b.WriteString(string(e.Event))
	}
	return b.String()
}
