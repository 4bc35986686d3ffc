package tract

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
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
	// ended with an error.
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

// Event is one step of a validated turn (Chat, Generate), as OnEvent
// reports it live and Tract.Events regenerates it from the commits. Every
// field is derived from the turn's commits: Timestamp is the time of the
// commit the event stems from (the attempt, the steering message, the
// commit that ended the turn), DurationMS the attempt's duration recorded
// under MetaDuration, so the live stream and the regenerated one are
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
	Reason EscalationReason `json:"reason,omitempty"`
	// Response is the answer to the escalation: retry, skip, abort or fix
	// (EventUserResponse).
	Response string `json:"response,omitempty"`
	// Resolution says how the turn ended (EventResolved): ResolvedSuccess,
	// …
	Resolution string `json:"resolution,omitempty"`
	// TotalAttempts and TotalDurationMS are the turn's attempts and its
	// time from the start of the first attempt to the commit that ended
	// it (EventResolved).
	TotalAttempts   int   `json:"total_attempts,omitempty"`
	TotalDurationMS int64 `json:"total_duration_ms"`
	// Commit is the commit the event stems from.
	Commit Hash `json:"commit"`
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
	case EventResolved:
		fmt.Fprintf(&b, "resolved status=%s attempts=%d duration_ms=%d", e.Resolution, e.TotalAttempts, e.TotalDurationMS)
	default:
		b.WriteString(string(e.Event))
	}
	return b.String()
}

// OnEvent reports each event of the turn to fn as it happens (see Event),
// outside any transaction: fn may take its time, or read the repository.
// The events of a turn are exactly those Tract.Events regenerates from
// its commits afterwards.
func OnEvent(fn func(Event)) ChatOption { return func(cfg *chatConfig) { cfg.events = fn } }

// EventFilter selects the events Tract.Events returns.
type EventFilter struct {
	// Task keeps only the events of turns with this task id ("": all).
	Task string
	// Since keeps only the events at or after this time (zero: all).
	Since time.Time
}

// Events regenerates the events of every validated turn in the
// repository from its commits, orphans included, oldest first: the
// stream OnEvent reported live for the same turns. It reads the
// repository a page of commits per short read transaction; its memory
// grows with the number of commits of turns, not with their texts.
func (t *Tract) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	turns, err := t.turns(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	out := []Event{}
	for _, tn := range turns {
		if f.Task != "" && tn.task != f.Task {
			continue
		}
		for _, e := range tn.events {
			if f.Since.IsZero() || !e.Timestamp.Before(f.Since) {
				out = append(out, e)
			}
		}
	}
	// Turns run one after another come out in order already; turns run
	// at the same time in several processes interleave by time.
	slices.SortStableFunc(out, func(a, b Event) int { return a.Timestamp.Compare(b.Timestamp) })
	return out, nil
}

// turnCommitKind is the part a commit plays in a validated turn.
type turnCommitKind int

const (
	tcAttempt      turnCommitKind = iota + 1 // an answer, numbered from 1
	tcSteering                               // the steering after a failed attempt
	tcModelFailure                           // the error commit of a failed model call: a failed attempt too
	tcAccepted                               // the clean copy purify committed on the restore point
	tcEnd                                    // the error commit of a turn whose validation failed
	tcResponse                               // the note that records the answer to an escalation
)

// turnCommit is what the events of a turn are derived from: one commit of
// the turn, as written.
type turnCommit struct {
	hash, parent Hash
	// content is the commit without its parents: the copy of it that a
	// compress replays onto a new chain has the same.
	content turnContent
	kind    turnCommitKind
	time    time.Time
	meta    record.Meta
	lines   int // a steering message's lines
}

// turnContent is what a commit holds besides its parents (its metadata
// by hash).
type turnContent struct {
	kind       Kind
	role       Role
	blob, meta Hash
	time       int64
}

// turnCommitOf reads commit h (c) as a commit of a validated turn; ok is
// false for any other commit.
func turnCommitOf(tx store.Tx, h Hash, c *dag.Commit) (tc *turnCommit, ok bool, err error) {
	if !bytes.Contains(c.Meta, []byte(`"attempt"`)) && !bytes.Contains(c.Meta, []byte(`"provenance"`)) &&
		!bytes.Contains(c.Meta, []byte(`"failure"`)) && !bytes.Contains(c.Meta, []byte(`"escalation"`)) {
		return nil, false, nil
	}
	tc = &turnCommit{hash: h, time: c.Time}
	if json.Unmarshal(c.Meta, &tc.meta) != nil {
		return nil, false, nil
	}
	if len(c.Parents) > 0 {
		tc.parent = c.Parents[0]
	}
	m := &tc.meta
	switch {
	case c.Kind == KindMessage && c.Role == RoleAssistant && m.Attempt >= 1:
		tc.kind = tcAttempt
	case c.Kind == KindMessage && c.Role == RoleAssistant && m.Provenance != nil:
		tc.kind = tcAccepted
	case c.Kind == KindSteering && m.Attempt >= 1:
		tc.kind = tcSteering
		text, err := commitText(tx, c)
		if err != nil {
			return nil, false, fmt.Errorf("commit %s: %w", h.Short(), err)
		}
		tc.lines = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	case c.Kind == KindError && m.Failure != nil:
		tc.kind = tcModelFailure
	case c.Kind == KindError && m.Provenance != nil:
		tc.kind = tcEnd
	case c.Kind == KindNote && m.Escalation != nil:
		tc.kind = tcResponse
	default:
		return nil, false, nil // a provenance note, or someone else's metadata
	}
	tc.content = turnContent{kind: c.Kind, role: c.Role, blob: c.Blob, time: c.Time.UnixNano(), meta: dag.Sum(c.Meta)}
	return tc, true, nil
}

// firstAttempt reports a commit that starts a turn.
func (tc *turnCommit) firstAttempt() bool {
	return tc.kind == tcAttempt && tc.meta.Attempt == 1 ||
		tc.kind == tcModelFailure && tc.meta.Failure.Attempt == 1
}

// turnOutcome is how a turn ends, as far as its commits so far tell.
type turnOutcome int

const (
	outcomeNone      turnOutcome = iota
	outcomeSuccess               // an answer was accepted
	outcomeExhausted             // the last attempt failed validation, and no steering followed
	outcomeEscalated             // a failure escalated at once
	outcomeFailed                // the model call failed, or a validator could not run
	outcomeCancelled             // steering, and no answer after it
	outcomeSkipped               // the escalation was answered skip
	outcomeAborted               // … or abort
)

// turnEvents derives a turn's events from its commits, fed in the order
// they were written: the one derivation of both the live stream
// (generation.record) and the regenerated one (Tract.Events), so that the
// two cannot disagree. It also sums up the turn for Stats.
type turnEvents struct {
	emit func(Event)

	task        string
	attempts    int
	start       time.Time // the start of the first attempt
	last        time.Time // the time of the latest commit
	lastCommit  Hash
	outcome     turnOutcome
	reason      string // why it escalated
	escalations int    // escalated events emitted

	failureTypes   []retry.FailureType
	errors         []string // the failed attempts' one-line errors
	tokensFailed   int
	tokensAccepted int
}

// add derives the events of commit c of the turn.
func (b *turnEvents) add(c *turnCommit) {
	m := &c.meta
	if b.task == "" {
		b.task = m.Task
	}
	if (c.kind == tcAttempt || c.kind == tcModelFailure) && b.attempts == 0 {
		b.start = c.time.Add(-time.Duration(m.DurationMS) * time.Millisecond)
	}
	b.last, b.lastCommit = c.time, c.hash
	ev := Event{Timestamp: c.time, TaskID: b.task, Commit: c.hash}
	switch c.kind {
	case tcAttempt:
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
		case m.Failure != nil:
			ev.Status, ev.FailureType, ev.Error = StatusFailed, m.Failure.Type, m.Failure.Error
			b.failed(m.Failure)
			b.tokensFailed += tokens
		default: // a validator could not run
			ev.Status, ev.Error = StatusFailed, record.ErrorLine(m.ValidatorError)
			b.outcome = outcomeFailed
			b.tokensFailed += tokens
		}
	case tcModelFailure:
		b.attempts++
		ev.Event, ev.Attempt, ev.DurationMS, ev.Status = EventAttempt, m.Failure.Attempt, m.DurationMS, StatusFailed
		ev.FailureType, ev.Error = m.Failure.Type, m.Failure.Error
		b.failed(m.Failure)
		if m.Failure.Escalation == "" {
			b.outcome = outcomeFailed
		}
	case tcSteering:
		ev.Event, ev.Attempt, ev.FeedbackLines = EventFeedbackInjected, m.Attempt+1, c.lines
		b.outcome = outcomeCancelled
	case tcResponse:
		b.respond(c, string(m.Escalation.Resolution))
		return
	default: // tcAccepted, tcEnd: the turn's outcome is known already
		return
	}
	b.emit(ev)
}

// failed records a failed attempt's failure record.
func (b *turnEvents) failed(r *FailureRecord) {
	b.failureTypes = append(b.failureTypes, r.Type)
	b.errors = append(b.errors, r.Error)
	b.outcome, b.reason = outcomeExhausted, ""
	if r.Escalation != "" {
		b.outcome, b.reason = outcomeEscalated, string(r.Escalation)
	}
}

// respond derives the events of the answer to the turn's escalation,
// recorded in the escalation note c: the escalation itself, then the
// user_response.
func (b *turnEvents) respond(c *turnCommit, response string) {
	b.escalate()
	b.last, b.lastCommit = c.time, c.hash
	switch response {
	case "skip":
		b.outcome = outcomeSkipped
	case "abort":
		b.outcome = outcomeAborted
	default: // retry, fix: another round is under way (its attempts number on)
		b.outcome = outcomeCancelled
	}
	b.emit(Event{Timestamp: c.time, Event: EventUserResponse, TaskID: b.task, Response: response, Commit: c.hash})
}

// end derives the events that close the turn: the escalation, if any,
// and the resolution. A turn with no attempt has none.
func (b *turnEvents) end() {
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
func (b *turnEvents) escalate() {
	switch b.outcome {
	case outcomeExhausted, outcomeEscalated:
		reason := cmp.Or(EscalationReason(b.reason), EscalateMaxRetries)
		b.emit(Event{Timestamp: b.last, Event: EventEscalated, TaskID: b.task, Commit: b.lastCommit,
			Attempts: b.attempts, Reason: reason})
		b.escalations++
	}
}

// escalated reports a turn that escalated at least once (whatever the
// answer, and however it ended); it is known once end has run.
func (b *turnEvents) escalated() bool { return b.escalations > 0 }

// resolution names the turn's outcome.
func (b *turnEvents) resolution() string {
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

// turn is a validated turn regenerated from the commits.
type turn struct {
	task    string
	events  []Event
	sum     *turnEvents
	restore Hash          // its restore point
	commits []*turnCommit // its commits, in the order they were written
}

// turns regenerates every validated turn in the repository from its
// commits, ordered by the time of their first event.
func (t *Tract) turns(ctx context.Context, p *progress.Counter) ([]*turn, error) {
	tcs, err := t.turnCommits(ctx, p)
	if err != nil {
		return nil, err
	}
	tcs = dropReplayed(tcs)
	// Group the commits by the turn's restore point: an attempt's chain
	// of answers and steering goes back to it, and what ends the turn
	// names it (a provenance) or hangs off it.
	byHash := make(map[Hash]*turnCommit, len(tcs))
	for _, tc := range tcs {
		byHash[tc.hash] = tc
	}
	restore := make(map[Hash]Hash, len(tcs))
	var restoreOf func(tc *turnCommit) Hash
	restoreOf = func(tc *turnCommit) Hash {
		if r, ok := restore[tc.hash]; ok {
			return r
		}
		r := tc.parent
		switch p := byHash[tc.parent]; {
		case tc.meta.Restore != nil:
			r = *tc.meta.Restore
		case tc.kind == tcAccepted || tc.kind == tcEnd:
			if pr := tc.meta.Provenance.Restore; !pr.IsZero() {
				r = pr
			}
		case tc.firstAttempt() || p == nil:
		case tc.kind == tcModelFailure && p.kind != tcSteering:
			// Purify rewound the attempts: the error commit hangs off
			// the restore point.
		default:
			r = restoreOf(p)
		}
		restore[tc.hash] = r
		return r
	}
	groups := make(map[Hash][]*turnCommit)
	var order []Hash
	for _, tc := range tcs {
		r := restoreOf(tc)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], tc)
	}
	var out []*turn
	for _, r := range order {
		g := groups[r]
		slices.SortStableFunc(g, func(a, b *turnCommit) int {
			return cmp.Or(a.time.Compare(b.time), cmp.Compare(a.seq(), b.seq()))
		})
		var cur *turn
		for _, tc := range g {
			if cur == nil || tc.firstAttempt() && cur.sum.attempts > 0 {
				if cur != nil {
					cur.sum.end()
				}
				cur = &turn{restore: r}
				tn := cur
				tn.sum = &turnEvents{emit: func(e Event) { tn.events = append(tn.events, e) }}
				out = append(out, cur)
			}
			cur.sum.add(tc)
			cur.commits = append(cur.commits, tc)
		}
		cur.sum.end()
	}
	for _, tn := range out {
		tn.task = tn.sum.task
	}
	out = slices.DeleteFunc(out, func(tn *turn) bool { return len(tn.events) == 0 })
	slices.SortStableFunc(out, func(a, b *turn) int { return a.events[0].Timestamp.Compare(b.events[0].Timestamp) })
	return out, nil
}

// seq orders the commits of a turn written at the same instant (an
// import): the attempts and their steering in turn, then what ends it.
func (tc *turnCommit) seq() int {
	switch tc.kind {
	case tcAttempt:
		return 2 * tc.meta.Attempt
	case tcSteering:
		return 2*tc.meta.Attempt + 1
	case tcModelFailure:
		return 2 * tc.meta.Failure.Attempt
	}
	return 1 << 30
}

// turnCommits reads every commit of a validated turn in the repository,
// reachable or not: the shape of every commit in one read transaction,
// then the commits with metadata a page per transaction.
func (t *Tract) turnCommits(ctx context.Context, p *progress.Counter) ([]*turnCommit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var hs []Hash
	err := t.view(func(tx store.Tx) error {
		g, err := loadGraph(tx)
		if err != nil {
			return err
		}
		for i := range g.Len() {
			if g.HasMeta(i) {
				hs = append(hs, g.Hash(i))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.SetTotal(int64(len(hs)))
	var out []*turnCommit
	page := func(tx store.Tx) ([]*turnCommit, bool, error) {
		n := min(pageSize*4, len(hs))
		cs, err := readCommits(tx, hs[:n])
		if err != nil {
			return nil, false, err
		}
		var tcs []*turnCommit
		for i, h := range hs[:n] {
			c := cs[i]
			p.Add(1)
			if tc, ok, err := turnCommitOf(tx, h, c); err != nil {
				return nil, false, err
			} else if ok {
				tcs = append(tcs, tc)
			}
		}
		hs = hs[n:]
		return tcs, len(hs) > 0, nil
	}
	err = walkPages(ctx, t, page, func(tc *turnCommit) bool { out = append(out, tc); return true })
	return out, err
}

// dropReplayed keeps one commit of each content: a compress replays the
// commits after its range onto the new chain with the same kind, role,
// text, metadata and time, and a turn it replayed is still one turn, with
// the attempts it had. The first of the copies stays, in the order of
// tcs; a parent that is a dropped copy becomes the kept one, so a
// replayed chain of attempts and steering still hangs together. (The
// restore point a replayed commit's metadata names is the one before the
// replay, as the original's is: both group alike.)
func dropReplayed(tcs []*turnCommit) []*turnCommit {
	kept := make(map[turnContent]Hash, len(tcs)) // content → the kept commit
	same := make(map[Hash]Hash)                  // a dropped copy → the kept commit
	out := tcs[:0]
	for _, tc := range tcs {
		if k, ok := kept[tc.content]; ok {
			same[tc.hash] = k
			continue
		}
		kept[tc.content] = tc.hash
		out = append(out, tc)
	}
	for _, tc := range out {
		if k, ok := same[tc.parent]; ok {
			tc.parent = k
		}
	}
	return out
}

// liveEvents derives the events of a turn under way (see turnEvents)
// from the commits it writes; nil when no one listens.
func newLiveEvents(fn func(Event)) *turnEvents {
	if fn == nil {
		return nil
	}
	return &turnEvents{emit: fn}
}

// record derives the events of commit h, just written by the turn. It
// reads the commit back, outside the transaction that wrote it, so the
// event holds what the repository holds (the commit's time, to the
// nanosecond). A commit that cannot be read back emits nothing.
func (g *generation) record(h Hash) {
	if g.events == nil || h.IsZero() {
		return
	}
	if tc, ok := g.readTurnCommit(h); ok {
		g.events.add(tc)
	}
}

// readTurnCommit reads commit h back as a commit of the turn.
func (g *generation) readTurnCommit(h Hash) (*turnCommit, bool) {
	var tc *turnCommit
	err := g.t.view(func(tx store.Tx) error {
		c, err := tx.Commit(h)
		if err != nil {
			return err
		}
		tc, _, err = turnCommitOf(tx, h, c)
		return err
	})
	return tc, err == nil && tc != nil
}

// endEvents emits the events that close the turn.
func (g *generation) endEvents() {
	if g.events != nil {
		g.events.end()
	}
}
