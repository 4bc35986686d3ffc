package events

import (
	"cmp"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

// outcome is how a turn ends, as far as its steps so far tell.
type outcome int

const (
	outcomeNone      outcome = iota
	outcomeSuccess           // an answer was accepted
	outcomeExhausted         // the last attempt failed validation, and no steering followed
	outcomeEscalated         // a failure escalated at once
	outcomeFailed            // the model call failed, or a validator could not run
	outcomeCancelled         // steering, and no answer after it
	outcomeSkipped           // the escalation was answered skip
	outcomeAborted           // … or abort
)

// deriver derives a turn's events from its steps, fed in the order they
// were written: the one derivation of both the live stream (Live) and the
// regenerated one (Replay), so that the two cannot disagree. It also sums
// up the turn for Summarize.
type deriver struct {
	emit func(Event)

	task        string
	attempts    int
	start       time.Time // the start of the first attempt
	last        time.Time // the time of the latest commit
	lastCommit  dag.Hash
	outcome     outcome
	reason      string // why it escalated
	escalations int    // escalated events emitted
	// answeredBy are who answered the turn's escalations that waited in
	// the repository ("" when no one said), in order.
	answeredBy []string

	failureTypes   []retry.FailureType
	errors         []string // the failed attempts' one-line errors
	tokensFailed   int
	tokensAccepted int
	fixedBy        string // the validator that fixed the accepted answer ("" when none did)
}

// add derives the events of step s of the turn.
func (b *deriver) add(s *Step) {
	m := &s.Meta
	if b.task == "" {
		b.task = m.Task
	}
	if (s.Kind == StepAttempt || s.Kind == StepModelFailure) && b.attempts == 0 {
		b.start = s.Time.Add(-time.Duration(m.DurationMS) * time.Millisecond)
	}
	b.last, b.lastCommit = s.Time, s.Hash
	ev := Event{Timestamp: s.Time, TaskID: b.task, Commit: s.Hash}
	switch s.Kind {
	case StepAttempt:
		b.attempts++
		ev.Event, ev.Attempt, ev.DurationMS, ev.Status = EventAttempt, m.Attempt, m.DurationMS, StatusSuccess
		tokens := 0
		if m.Usage != nil {
			tokens = m.Usage.TotalTokens
		}
		switch {
		case m.Valid == nil || *m.Valid:
			b.outcome = outcomeSuccess
			b.tokensAccepted += tokens
		case m.Fix != nil: // not valid as given, accepted as a validator fixed it
			ev.FixedBy = m.Fix.By
			b.outcome, b.fixedBy = outcomeSuccess, m.Fix.By
			b.tokensAccepted += tokens
		case m.Failure != nil:
			ev.Status, ev.FailureType, ev.Error = StatusFailed, m.Failure.Type, m.Failure.Error
			b.failed(m.Failure)
			b.tokensFailed += tokens
		default: // a validator could not run
			ev.Status, ev.Error = StatusFailed, record.ErrorLine(m.ValidatorError)
			b.outcome = outcomeFailed
			b.tokensFailed += tokens
		}
	case StepModelFailure:
		b.attempts++
		ev.Event, ev.Attempt, ev.DurationMS, ev.Status = EventAttempt, m.Failure.Attempt, m.DurationMS, StatusFailed
		ev.FailureType, ev.Error = m.Failure.Type, m.Failure.Error
		b.failed(m.Failure)
		if m.Failure.Escalation == "" {
			b.outcome = outcomeFailed
		}
		if m.Escalation != nil { // the escalation was answered abort: see StepEnd
			b.emit(ev)
			b.respond(s, m.Escalation)
			return
		}
	case StepSteering:
		ev.Event, ev.Attempt, ev.FeedbackLines = EventFeedbackInjected, m.Attempt+1, s.Lines
		b.outcome = outcomeCancelled
	case StepResponse:
		b.respond(s, m.Escalation)
		return
	case StepEnd:
		// The error commit that ends a turn whose escalation was answered
		// abort records the answer.
		if m.Escalation != nil {
			b.respond(s, m.Escalation)
		}
		return
	default: // StepAccepted: the turn's outcome is known already
		return
	}
	b.emit(ev)
}

// failed records a failed attempt's failure record.
func (b *deriver) failed(r *record.Failure) {
	b.failureTypes = append(b.failureTypes, r.Type)
	b.errors = append(b.errors, r.Error)
	b.outcome, b.reason = outcomeExhausted, ""
	if r.Escalation != "" {
		b.outcome, b.reason = outcomeEscalated, string(r.Escalation)
	}
}

// respond derives the events of the answer to the turn's escalation,
// recorded in the escalation note s: the escalation itself, then the
// user_response.
func (b *deriver) respond(s *Step, rec *record.Escalation) {
	b.escalate()
	b.last, b.lastCommit = s.Time, s.Hash
	response := string(rec.Resolution)
	if rec.ID != "" {
		b.answeredBy = append(b.answeredBy, rec.By)
	}
	switch rec.Resolution {
	case record.ResolveSkip:
		b.outcome = outcomeSkipped
	case record.ResolveAbort:
		b.outcome = outcomeAborted
	default: // retry, fix: another round is under way (its attempts number on)
		b.outcome = outcomeCancelled
	}
	ev := Event{Timestamp: s.Time, Event: EventUserResponse, TaskID: b.task, Response: response, Commit: s.Hash,
		EscalationID: rec.ID, AnsweredBy: rec.By}
	if rec.ID != "" {
		at := rec.Timestamp
		ev.AnsweredAt = &at
	}
	b.emit(ev)
}

// end derives the events that close the turn: the escalation, if any,
// and the resolution. A turn with no attempt has none.
func (b *deriver) end() {
	if b.attempts == 0 {
		return
	}
	b.escalate()
	ev := Event{Timestamp: b.last, TaskID: b.task, Commit: b.lastCommit}
	ev.Event, ev.Resolution = EventResolved, b.resolution()
	ev.TotalAttempts, ev.TotalDurationMS = b.attempts, b.last.Sub(b.start).Milliseconds()
	b.emit(ev)
}

// escalate emits the escalated event of a round that ended without an
// accepted answer (none when it did not), at the time of its last commit.
func (b *deriver) escalate() {
	switch b.outcome {
	case outcomeExhausted, outcomeEscalated:
		reason := cmp.Or(record.EscalationReason(b.reason), record.EscalateMaxRetries)
		b.emit(Event{Timestamp: b.last, Event: EventEscalated, TaskID: b.task, Commit: b.lastCommit,
			Attempts: b.attempts, Reason: reason})
		b.escalations++
	}
}

// escalated reports a turn that escalated at least once (whatever the
// answer, and however it ended); it is known once end has run.
func (b *deriver) escalated() bool { return b.escalations > 0 }

// resolution names the turn's outcome.
func (b *deriver) resolution() string {
	switch b.outcome {
	case outcomeSuccess:
		return ResolvedSuccess
	case outcomeExhausted, outcomeEscalated:
		return ResolvedEscalated
	case outcomeCancelled:
		return ResolvedCancelled
	case outcomeSkipped:
		return ResolvedSkipped
	case outcomeAborted:
		return ResolvedAborted
	}
	return ResolvedFailed
}

// Live derives the events of a turn under way from the steps it writes,
// as they are written; its events are exactly those Replay regenerates
// from the same commits afterwards.
type Live struct {
	d deriver
}

// NewLive returns a Live that reports each event to emit; nil when emit
// is nil (no one listens: a nil *Live does nothing).
func NewLive(emit func(Event)) *Live {
	if emit == nil {
		return nil
	}
	return &Live{d: deriver{emit: emit}}
}

// Add derives the events of step s, the turn's latest commit.
func (l *Live) Add(s *Step) {
	if l != nil {
		l.d.add(s)
	}
}

// End derives the events that close the turn.
func (l *Live) End() {
	if l != nil {
		l.d.end()
	}
}
