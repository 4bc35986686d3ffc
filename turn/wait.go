package turn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

// Waiting says how a turn's escalation waits in the repository for its
// answer (EscalateWait).
type Waiting struct {
	// Poll is how long the turn waits before it first reads whether the
	// escalation was answered; each read that finds none doubles it, up
	// to MaxPoll. Zero: DefaultPoll and DefaultMaxPoll.
	Poll, MaxPoll time.Duration
	// Exit ends the turn once the escalation is recorded, with a
	// *WaitingError, instead of waiting for the answer: Resume goes on
	// later.
	Exit bool
	// Recorded, when set, is called with the escalation once it is
	// recorded, before the wait (the place to say how to answer it).
	Recorded func(record.WaitingEscalation)
}

// The default intervals between two reads of a waiting escalation.
const (
	DefaultPoll    = 500 * time.Millisecond
	DefaultMaxPoll = 10 * time.Second
)

// EscalateWait has the turn's escalations wait in the repository instead
// of asking a hook (it replaces OnEscalation, and OnEscalation replaces
// it): when a round ends without an accepted answer, the turn's Repo
// records the escalation (Waiter.WaitEscalation: a note holding a
// record.WaitingEscalation, and a ref naming it), and the turn waits,
// with no transaction or lock held, until someone answers it, from any
// process; then it goes on exactly as after a hook's answer, the
// escalation note recording who answered and when. A cancelled context
// ends the wait, and w.Exit ends the turn at once: the turn then returns
// a *WaitingError and writes nothing more, so the branch stays at the
// turn's last attempt and Resume takes the turn up again. The turn's Repo
// must implement Waiter (package tract's does); without it the turn
// fails at its first escalation, as abort would.
func EscalateWait(w Waiting) Option {
	return func(cfg *Config) {
		if w.Poll <= 0 {
			w.Poll = DefaultPoll
		}
		if w.MaxPoll < w.Poll {
			w.MaxPoll = max(DefaultMaxPoll, w.Poll)
		}
		cfg.wait, cfg.onEscalation = &w, nil
	}
}

// Waiter is the part of a Repo that records an escalation in the
// repository and waits for its answer (see EscalateWait).
type Waiter interface {
	// WaitEscalation records w as a note on tip (the turn's tip) and a
	// ref naming it, in one transaction, then waits as how says for the
	// answer, which it returns (with its id, who answered and when). It
	// returns a *WaitingError when it stops waiting without an answer
	// (how.Exit, or ctx cancelled): the escalation stays recorded.
	WaitEscalation(ctx context.Context, tip dag.Hash, w record.WaitingEscalation, how Waiting) (Resolution, error)
}

// ErrWaiting matches a *WaitingError.
var ErrWaiting = errors.New("escalation waits for an answer")

// WaitingError reports a turn that stopped while its escalation waits in
// the repository for an answer (see EscalateWait): the branch stays at
// the turn's last attempt, and Resume (package tract's
// ResumeEscalation) takes the turn up once the escalation is answered.
// errors.Is matches it with ErrWaiting, and with Err's sentinels.
type WaitingError struct {
	// ID is the escalation's id; Task and Reason those of the turn and
	// of its escalation.
	ID     string
	Task   string
	Reason record.EscalationReason
	// Err is why the wait stopped: the context's error, or nil when the
	// turn was told not to wait (Waiting.Exit).
	Err error
}

// Error returns the WaitingError message.
func (e *WaitingError) Error() string {
	msg := fmt.Sprintf("escalation %s (%s) waits for an answer", e.ID, e.Reason)
	if e.Task != "" {
		msg = fmt.Sprintf("escalation %s of task %q (%s) waits for an answer", e.ID, e.Task, e.Reason)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns why the wait stopped.
func (e *WaitingError) Unwrap() error { return e.Err }

// Is reports target == ErrWaiting.
func (e *WaitingError) Is(target error) bool { return target == ErrWaiting }

// wait records the escalation e of a round that failed with cause, and
// waits for its answer (see EscalateWait).
func (g *generation) wait(ctx context.Context, e Escalation, cause error) (Resolution, error) {
	w, ok := g.r.(Waiter)
	if !ok {
		return Resolution{}, errors.New("this repository cannot hold an escalation that waits (its Repo is no turn.Waiter)")
	}
	var me *modelError
	p := record.WaitingEscalation{Task: g.cfg.task, Reason: e.Reason, Round: e.Round, Attempts: e.Attempts,
		MaxAttempts: e.MaxAttempts, TotalAttempts: e.TotalAttempts, Answers: g.res.Attempts, Failures: e.Failures,
		Diagnoses: append([]string{}, g.res.Diagnoses...), LastAnswer: e.LastAnswer, ModelFailed: errors.As(cause, &me),
		Restore: g.restore, Usage: g.res.Usage, Model: g.res.Model, Validators: g.specs()}
	return w.WaitEscalation(ctx, g.tip, p, *g.cfg.wait)
}

// Resume takes up a turn that stopped while its escalation waited in the
// repository (see EscalateWait), now that it is answered: w is what the
// turn recorded, tip its tip then (the parent of the escalation's note)
// and res the answer. The turn goes on exactly as it would have gone on
// in the process that waited: the escalation note recording res, then a
// new round (retry, fix), or the end of the turn (skip, abort). cfg
// should be the turn's own (its validators, feedback, context strategy):
// the new round's attempts number on from w's. The branch must still
// stand at tip: each write moves it by compare-and-swap, and a branch
// that moved ends the turn with a *refs.ConflictError.
func Resume(ctx context.Context, r Repo, tip dag.Hash, w record.WaitingEscalation, res Resolution, cfg *Config) (*Result, error) {
	g := newGeneration(r, w.Restore, cfg)
	g.cfg.task = w.Task
	g.tip, g.attempt, g.round, g.roundStart = tip, w.TotalAttempts, w.Round, w.TotalAttempts-w.Attempts
	g.failures = append([]record.Failure{}, w.Failures...)
	g.last = answer{text: w.LastAnswer}
	g.res.Diagnoses = append(g.res.Diagnoses, w.Diagnoses...)
	g.res.Attempts, g.res.Usage, g.res.Model = w.Answers, w.Usage, w.Model
	g.started = time.Now()
	e := Escalation{Task: w.Task, Reason: w.Reason, Round: w.Round, Attempts: w.Attempts, MaxAttempts: w.MaxAttempts,
		TotalAttempts: w.TotalAttempts, Failures: g.failures, LastAnswer: w.LastAnswer}
	again, err := g.resolve(ctx, g.cause(w), e, res, nil)
	if !again {
		g.events.End()
		return g.res, err
	}
	return g.run(ctx)
}

// cause is the error the round recorded in w ended with, as the turn
// that waited had it: what ends the turn after a skip or an abort.
func (g *generation) cause(w record.WaitingEscalation) error {
	var last record.Failure
	if n := len(w.Failures); n > 0 {
		last = w.Failures[n-1]
	}
	switch {
	case w.ModelFailed:
		return &modelError{err: &recordedError{reason: w.Reason, text: last.Details}}
	case w.Reason == record.EscalateMaxRetries:
		var diag string
		if n := len(w.Diagnoses); n > 0 {
			diag = w.Diagnoses[n-1]
		}
		history := w.Diagnoses[max(0, len(w.Diagnoses)-w.Attempts):]
		return &retry.ExhaustedError{Attempts: w.Attempts, LastDiagnosis: diag, LastResult: g.last, History: append([]string{}, history...)}
	}
	return g.escalation(w.Reason, nil)
}

// recordedError is a failed model call as a waiting escalation recorded
// it: its message, and why it escalated.
type recordedError struct {
	reason record.EscalationReason
	text   string
}

func (e *recordedError) Error() string { return e.text }
