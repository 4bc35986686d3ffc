package tract

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tractdag/tract/escalation"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/turn"
)

// Escalations that wait in the repository (see package escalation):
// their names as package tract users know them.
type (
	// PendingEscalation is an escalation that waits in the repository,
	// pending or answered, as Escalations lists it.
	PendingEscalation = escalation.Escalation
	// EscalationAnswer is the answer to a PendingEscalation.
	EscalationAnswer = escalation.Answer
	// WaitingError reports a turn that stopped while its escalation
	// waits in the repository (see EscalateWait).
	WaitingError = turn.WaitingError
	// AnsweredError refuses an answer to an escalation answered already,
	// naming the answer that won.
	AnsweredError = escalation.AnsweredError
	// EscalationTakenUpError refuses to resume a turn that went on with
	// its escalation's answer already.
	EscalationTakenUpError = escalation.TakenUpError
	// EscalationNotFoundError reports an id that names no escalation.
	EscalationNotFoundError = escalation.NotFoundError
	// WaitingEscalation is what a turn records of an escalation that
	// waits in the repository.
	WaitingEscalation = record.WaitingEscalation
)

// Errors of escalations that wait in the repository.
var (
	// ErrWaiting matches a *WaitingError.
	ErrWaiting = turn.ErrWaiting
	// ErrAnswered matches an *AnsweredError.
	ErrAnswered = escalation.ErrAnswered
	// ErrEscalationNotFound matches an *EscalationNotFoundError.
	ErrEscalationNotFound = escalation.ErrNotFound
	// ErrBadEscalationID is returned for an id that cannot name an
	// escalation.
	ErrBadEscalationID = escalation.ErrBadID
)

// WaitOption configures EscalateWait.
type WaitOption func(*turn.Waiting)

// PollInterval sets how long a waiting turn waits before it first looks
// whether its escalation was answered (default 500 ms), and the longest
// interval the wait doubles to between two looks (default 10 s). Each
// look is one short read transaction.
func PollInterval(first, most time.Duration) WaitOption {
	return func(w *turn.Waiting) { w.Poll, w.MaxPoll = first, most }
}

// ExitWhenEscalated has the turn record its escalation and return at
// once, with a *WaitingError, instead of waiting for the answer:
// ResumeEscalation goes on once it is answered.
func ExitWhenEscalated() WaitOption { return func(w *turn.Waiting) { w.Exit = true } }

// OnWaiting has fn called with each escalation the turn records, before
// it waits (or returns, with ExitWhenEscalated): the place to say how to
// answer it. No transaction or lock is held while fn runs.
func OnWaiting(fn func(WaitingEscalation)) WaitOption {
	return func(w *turn.Waiting) { w.Recorded = fn }
}

// EscalateWait has the turn's escalations wait in the repository for an
// answer given from anywhere, instead of asking a hook (it replaces
// OnEscalation, and OnEscalation replaces it). When a round of attempts
// ends without an accepted answer, the turn commits a note holding the
// escalation (a record.WaitingEscalation: the task, the attempts, the
// failure records, the question) on its last attempt, off the branch,
// and the ref refs/escalations/ID naming it, in one transaction; then it
// waits, holding no transaction or lock, until AnswerEscalation (in this
// process or any other) answers it, and goes on exactly as after a hook's
// answer: the escalation note on the branch records the answer, who gave
// it and when, and the same transaction deletes the ref. The branch stays
// at the turn's last attempt while it waits.
//
// A cancelled context ends the wait, and ExitWhenEscalated ends the turn
// at once: the turn then returns a *WaitingError (errors.Is(err,
// ErrWaiting)), writes nothing more, and the escalation stays in the
// repository; ResumeEscalation finishes the turn later. A process that
// ends while it waits leaves the same. See docs/tasks.md ("Escalations
// answered later").
func EscalateWait(opts ...WaitOption) ChatOption {
	var w turn.Waiting
	for _, o := range opts {
		o(&w)
	}
	return turn.EscalateWait(w)
}

// Escalations lists the escalations that wait in the repository: pending,
// or answered and not yet taken up by their turn; oldest first.
func (t *Tract) Escalations(ctx context.Context) ([]PendingEscalation, error) {
	var out []PendingEscalation
	err := t.view(ctx, func(tx store.Tx) (err error) {
		out, err = escalation.List(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("escalations: %w", err)
	}
	return out, nil
}

// EscalationByID returns the escalation id, pending or answered; an id
// that names none is an *EscalationNotFoundError, and one whose turn took
// its answer up an *EscalationTakenUpError.
func (t *Tract) EscalationByID(ctx context.Context, id string) (*PendingEscalation, error) {
	var e *PendingEscalation
	err := t.view(ctx, func(tx store.Tx) (err error) {
		e, err = escalation.LookUp(tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("escalation: %w", err)
	}
	return e, nil
}

// AnswerEscalation answers the escalation id with res (its Action and
// Instruction; By says who answers: "" records the user and host of this
// process). The answer is a note on the escalation's note, and the
// escalation's ref moves to it only if it still names the note, in one
// transaction: of two answers one wins, and the other gets an
// *AnsweredError naming the first (also once the turn has gone on). The
// turn that waits picks the answer up at its next look; a turn whose
// process ended is finished by ResumeEscalation. It returns the
// escalation, answered.
func (t *Tract) AnswerEscalation(ctx context.Context, id string, res Resolution) (*PendingEscalation, error) {
	if err := escalation.CheckID(id); err != nil {
		return nil, fmt.Errorf("answer escalation: %w", err)
	}
	id = escalation.NormalID(id)
	if _, err := turn.ParseResolution(res.String()); err != nil {
		return nil, fmt.Errorf("answer escalation %s: %w", id, err)
	}
	by := res.By
	if strings.TrimSpace(by) == "" {
		by = escalation.WhoAmI()
	}
	a := record.EscalationAnswer{ID: id, Resolution: res.Action, Instruction: strings.TrimSpace(res.Instruction), By: by}
	var out *PendingEscalation
	err := t.update(ctx, func(tx store.Tx) (err error) {
		out, err = escalation.Give(tx, a, t.now(), t.escalationNote)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("answer escalation: %w", err)
	}
	return out, nil
}

// ResumeEscalation finishes the turn of escalation id, which stopped
// while the escalation waited (its process ended, or ExitWhenEscalated):
// it waits for the answer if there is none yet (as EscalateWait says,
// when opts give it; with ExitWhenEscalated it returns a *WaitingError
// at once), then runs the turn on from there on its branch, exactly as
// the process that waited would have (see turn.Resume). opts should be
// the turn's own: its validators above all (the escalation records their
// specs: PendingEscalation.Waiting.Validators); the task id and the
// attempts so far come from the escalation. The branch must still stand
// at the turn's last attempt; a branch that moved is a *ConflictError,
// before any model call. OnEvent receives the turn's events from the
// answer on (Events reads the whole turn from its commits).
func (t *Tract) ResumeEscalation(ctx context.Context, id string, opts ...ChatOption) (*ChatResult, error) {
	cfg, err := t.turnConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := escalation.CheckID(id); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	e, err := t.EscalationByID(ctx, escalation.NormalID(id))
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	on := t
	if b, ok := refs.BranchName(e.Waiting.Branch); ok && t.branch != e.Waiting.Branch {
		on = t.OnBranch(b)
	} else if !ok {
		return nil, fmt.Errorf("resume: escalation %s's turn ran on %s, not a branch", e.ID, e.Waiting.Branch)
	}
	how := cfg.Waiting()
	if how == nil {
		how = &turn.Waiting{Poll: turn.DefaultPoll, MaxPoll: turn.DefaultMaxPoll}
	}
	if e.Answer == nil {
		if e, err = on.waitForAnswer(ctx, e, *how); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	res, err := turn.Resume(ctx, turnRepo{on}, e.Tip, e.Waiting, resolutionOf(e), cfg)
	if res != nil {
		res.User = e.Waiting.Restore
	}
	if err != nil {
		err = fmt.Errorf("resume: %w", err)
	}
	return res, err
}

// WaitForAnswer waits until escalation id is answered, reading it as
// opts say (PollInterval), and returns it answered; at once when it is.
// A cancelled context, or ExitWhenEscalated while it is pending, returns
// a *WaitingError. No transaction or lock is held between two reads.
func (t *Tract) WaitForAnswer(ctx context.Context, id string, opts ...WaitOption) (*PendingEscalation, error) {
	e, err := t.EscalationByID(ctx, id)
	if err != nil || e.Answer != nil {
		return e, err
	}
	how := turn.Waiting{Poll: turn.DefaultPoll, MaxPoll: turn.DefaultMaxPoll}
	for _, o := range opts {
		o(&how)
	}
	if how.Poll <= 0 {
		how.Poll = turn.DefaultPoll
	}
	how.MaxPoll = max(how.MaxPoll, how.Poll)
	return t.waitForAnswer(ctx, e, how)
}

// WaitEscalation records the escalation w of a turn whose tip is tip and
// waits for its answer (see turn.Waiter and EscalateWait).
func (r turnRepo) WaitEscalation(ctx context.Context, tip Hash, w record.WaitingEscalation, how turn.Waiting) (turn.Resolution, error) {
	t := r.t
	var e *PendingEscalation
	err := t.update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		w.Branch = cur.ref()
		e, err = escalation.Record(tx, tip, w, t.now(), t.escalationNote)
		return err
	})
	if err != nil {
		return turn.Resolution{}, fmt.Errorf("record escalation: %w", err)
	}
	if how.Recorded != nil {
		how.Recorded(e.Waiting)
	}
	if e, err = t.waitForAnswer(ctx, e, how); err != nil {
		return turn.Resolution{}, err
	}
	return resolutionOf(e), nil
}

// waitForAnswer waits as how says for the pending escalation e to be
// answered (escalation.Await), and returns it answered. A wait that
// stops without an answer is a *WaitingError (how.Exit at once).
func (t *Tract) waitForAnswer(ctx context.Context, e *PendingEscalation, how turn.Waiting) (*PendingEscalation, error) {
	stopped := &WaitingError{ID: e.ID, Task: e.Task, Reason: e.Reason}
	if how.Exit {
		return nil, stopped
	}
	e, err := escalation.Await(ctx, e, how.Poll, how.MaxPoll, t.view)
	if ctx.Err() != nil {
		stopped.Err = ctx.Err()
		return nil, stopped
	}
	if err != nil {
		return nil, fmt.Errorf("escalation: %w", err)
	}
	return e, nil
}

// escalationNote writes an escalation's note or its answer (see
// escalation.NoteFunc).
func (t *Tract) escalationNote(tx store.Tx, parent Hash, role Role, text string, meta []byte) (Hash, error) {
	return t.putCommit(tx, parent, KindNote, role, text, &commitConfig{rawMeta: meta, own: true})
}

// resolutionOf is the answer of the answered escalation e as a turn takes
// it.
func resolutionOf(e *PendingEscalation) turn.Resolution {
	return turn.Resolution{Action: e.Answer.Resolution, Instruction: e.Answer.Instruction, By: e.Answer.By,
		Escalation: e.ID, At: e.Answer.At}
}

// takeUpEscalations deletes, in tx, the ref of each escalation whose
// answer one of chain records (see escalation.TakeUp).
func (t *Tract) takeUpEscalations(tx store.Tx, chain []turn.Pending) error {
	for _, p := range chain {
		if p.Meta != nil && p.Meta.Escalation != nil && p.Meta.Escalation.ID != "" {
			if err := escalation.TakeUp(tx, p.Meta.Escalation.ID, t.now()); err != nil {
				return err
			}
		}
	}
	return nil
}
