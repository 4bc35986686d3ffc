package turn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
)

// MaxRounds bounds the rounds of attempts of one validated turn, the first
// included: the escalation hook (OnEscalation) is asked at most
// MaxRounds-1 times, so a hook that always answers retry cannot loop
// forever. When the last round fails the turn ends as without a hook.
const MaxRounds = 5

// Escalation is what the escalation hook (OnEscalation) is told when a
// round of attempts ends without an accepted answer.
type Escalation struct {
	// Task is the turn's task id ("" when none was given).
	Task string
	// Reason says why: record.EscalateMaxRetries when every attempt of the round
	// failed validation, record.EscalateTransport when the model server
	// stayed unavailable through the client's retries, else the reason a
	// failure could not be retried (auth, permission, malformed_request,
	// context_length, blocked).
	Reason record.EscalationReason
	// Round is the round that ended, from 1; at most MaxRounds-1.
	Round int
	// Attempts is the number of attempts the round made (a failed model
	// call included) of MaxAttempts; TotalAttempts counts every round.
	Attempts, MaxAttempts, TotalAttempts int
	// Failures are every failure record of the turn, every round, in
	// order: attempt numbers count on across rounds.
	Failures []record.Failure
	// LastAnswer is the model's last answer ("" when it gave none).
	LastAnswer string
}

// Resolution is the escalation hook's answer.
type Resolution struct {
	Action record.ResolutionAction
	// Instruction is the guidance of a record.ResolveFix; it must be set then.
	Instruction string
	// By says who answered, when the hook knows ("" when not); the
	// escalation's record keeps it (record.Escalation.By).
	By string
	// Escalation is the id of the escalation when it waited in the
	// repository for this answer (see EscalateWait); "" otherwise.
	Escalation string
	// At is when the answer was given; zero: when the hook returned.
	At time.Time
}

// String returns the resolution as ParseResolution reads it: "retry",
// "skip", "abort" or "fix: INSTRUCTION".
func (r Resolution) String() string {
	if r.Action == record.ResolveFix {
		return "fix: " + r.Instruction
	}
	return string(r.Action)
}

// ParseResolution reads a person's answer to an escalation: "retry",
// "skip", "abort" or "fix: INSTRUCTION" (case and surrounding space do
// not matter; the instruction is kept as written).
func ParseResolution(s string) (Resolution, error) {
	s = strings.TrimSpace(s)
	word, rest, hasColon := strings.Cut(s, ":")
	action := record.ResolutionAction(strings.ToLower(strings.TrimSpace(word)))
	switch {
	case action == record.ResolveFix && hasColon:
		r := Resolution{Action: record.ResolveFix, Instruction: strings.TrimSpace(rest)}
		if err := r.check(); err != nil {
			return Resolution{}, err
		}
		return r, nil
	case hasColon:
	case action == record.ResolveRetry, action == record.ResolveSkip, action == record.ResolveAbort:
		return Resolution{Action: action}, nil
	case action == record.ResolveFix:
		return Resolution{}, errors.New(`"fix" needs an instruction: fix: INSTRUCTION`)
	}
	return Resolution{}, fmt.Errorf("%q is no answer to an escalation: give retry, skip, abort or fix: INSTRUCTION", s)
}

// ResolutionOf builds the answer to an escalation from its parts, as a
// form or a tool gives them apart: action, one of retry, skip, abort and
// fix (case and surrounding space do not matter), and instruction, which
// goes with fix and fix alone. Its error is a *ResolutionPartError.
func ResolutionOf(action, instruction string) (Resolution, error) {
	a := strings.ToLower(strings.TrimSpace(action))
	instruction = strings.TrimSpace(instruction)
	spec := a
	switch {
	case a == string(record.ResolveFix) && instruction == "":
		return Resolution{}, &ResolutionPartError{Part: "instruction", Action: action, Missing: true}
	case a == string(record.ResolveFix):
		spec = "fix: " + instruction
	case instruction != "":
		return Resolution{}, &ResolutionPartError{Part: "instruction", Action: action}
	}
	r, err := ParseResolution(spec)
	if err != nil || strings.Contains(a, ":") {
		return Resolution{}, &ResolutionPartError{Part: "action", Action: action}
	}
	return r, nil
}

// ResolutionPartError is ResolutionOf's error: which part was wrong.
type ResolutionPartError struct {
	// Part is "action" (not one of the four) or "instruction" (missing
	// with fix, or given with another action).
	Part string
	// Action is the action as given.
	Action string
	// Missing is set when fix came without an instruction.
	Missing bool
}

func (e *ResolutionPartError) Error() string {
	switch {
	case e.Part == "action":
		return fmt.Sprintf("action %q: give retry, skip, abort or fix", e.Action)
	case e.Missing:
		return "fix needs an instruction"
	}
	return fmt.Sprintf("an instruction goes with fix only, not with %q", e.Action)
}

// check refuses a resolution the turn cannot act on.
func (r Resolution) check() error {
	switch r.Action {
	case record.ResolveRetry, record.ResolveSkip, record.ResolveAbort:
		return nil
	case record.ResolveFix:
		if strings.TrimSpace(r.Instruction) == "" {
			return errors.New(`"fix" needs an instruction`)
		}
		return nil
	}
	return fmt.Errorf("unknown resolution %q: want retry, skip, abort or fix", r.Action)
}

// EscalationFunc decides what a turn does when a round of attempts fails
// (see OnEscalation).
type EscalationFunc func(ctx context.Context, e Escalation) (Resolution, error)

// Errors of a turn whose escalation hook gave the task up.
var (
	// ErrSkipped matches a *SkippedError: the hook answered skip.
	ErrSkipped = errors.New("task skipped")
	// ErrAborted matches an *AbortedError: the hook answered abort.
	ErrAborted = errors.New("task aborted")
)

// SkippedError reports a turn whose escalation hook answered skip.
// errors.Is matches it with ErrSkipped; errors.As reaches through it what
// stopped the turn (a *retry.ExhaustedError or an *EscalationError).
type SkippedError struct {
	// Task is the turn's task id; Reason why its last round ended.
	Task   string
	Reason record.EscalationReason
	// Note is the commit of the skip note.
	Note dag.Hash
	// Err is the error the turn ended with.
	Err error
}

// Error returns the SkippedError message.
func (e *SkippedError) Error() string { return "skipped " + giveUpMessage(e.Task, e.Reason, e.Err) }

// Unwrap returns the error the turn ended with.
func (e *SkippedError) Unwrap() error { return e.Err }

// Is reports target == ErrSkipped.
func (e *SkippedError) Is(target error) bool { return target == ErrSkipped }

// AbortedError reports a turn whose escalation hook answered abort.
// errors.Is matches it with ErrAborted; errors.As reaches through it what
// stopped the turn (a *retry.ExhaustedError or an *EscalationError).
type AbortedError struct {
	// Task is the turn's task id; Reason why its last round ended.
	Task   string
	Reason record.EscalationReason
	// Err is the error the turn ended with.
	Err error
}

// Error returns the AbortedError message.
func (e *AbortedError) Error() string { return "aborted " + giveUpMessage(e.Task, e.Reason, e.Err) }

// Unwrap returns the error the turn ended with.
func (e *AbortedError) Unwrap() error { return e.Err }

// Is reports target == ErrAborted.
func (e *AbortedError) Is(target error) bool { return target == ErrAborted }

func giveUpMessage(task string, reason record.EscalationReason, err error) string {
	s := ""
	if task != "" {
		s = fmt.Sprintf("task %q ", task)
	}
	s += fmt.Sprintf("(%s)", reason)
	if err != nil {
		s += ": " + err.Error()
	}
	return s
}

// escalationReason says whether the error that ended a round escalates to
// the hook, and why.
func (g *generation) escalationReason(err error) (record.EscalationReason, bool) {
	var ex *retry.ExhaustedError
	var esc *EscalationError
	var me *modelError
	var conflict *refs.ConflictError
	switch {
	case errors.As(err, &conflict):
		return "", false
	case errors.As(err, &ex):
		return record.EscalateMaxRetries, true
	case errors.As(err, &esc):
		return esc.Reason, true
	case errors.As(err, &me):
		return g.modelEscalation(me.err)
	}
	return "", false
}

// modelEscalation says whether a failed model call escalates, and why: a
// failure retrying cannot fix always does (escalationOf); a model server
// that stayed unavailable through the client's retries does
// (EscalateTransport) when the escalation hook will be asked, so that
// without a hook, or after the last round, it ends the turn as a failed
// model call.
func (g *generation) modelEscalation(err error) (record.EscalationReason, bool) {
	if reason, ok := escalationOf(err); ok {
		return reason, true
	}
	if g.cfg.hooked() && g.round < MaxRounds && unavailable(err) {
		return record.EscalateTransport, true
	}
	return "", false
}

// unavailable reports a model call that failed because the server stayed
// unavailable through the client's transport retries: a 5xx answer (but
// 501 Not Implemented, which names a server that lacks the endpoint), a
// persisting 429, or a connection that failed. A cancelled call is not.
func unavailable(err error) bool {
	var (
		server    *llm.ServerError
		rate      *llm.RateLimitError
		transport *llm.TransportError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &server):
		return server.StatusCode != http.StatusNotImplemented
	}
	return errors.As(err, &rate) || errors.As(err, &transport)
}

// escalate ends a round that failed with err: it asks the escalation hook
// when err escalates and rounds are left, and either prepares the next
// round (again is true) or ends the turn with the error to return.
func (g *generation) escalate(ctx context.Context, err error) (again bool, final error) {
	reason, escalates := g.escalationReason(err)
	if !escalates || !g.cfg.hooked() || g.round >= MaxRounds || ctx.Err() != nil {
		return false, g.fail(ctx, err)
	}
	var me *modelError
	if errors.As(err, &me) {
		g.modelFailure(me.err) // the hook sees every failure, this one too
	}
	e := Escalation{Task: g.cfg.task, Reason: reason, Round: g.round,
		Attempts: g.attempt - g.roundStart, MaxAttempts: g.cfg.maxAttempts, TotalAttempts: g.attempt,
		Failures: append([]record.Failure{}, g.failures...), LastAnswer: g.last.text}
	var res Resolution
	var herr error
	if g.cfg.wait != nil {
		res, herr = g.wait(ctx, e, err)
		if waiting := (*WaitingError)(nil); errors.As(herr, &waiting) {
			return false, herr // the turn stops where it is: Resume goes on
		}
	} else {
		res, herr = g.cfg.onEscalation(ctx, e)
	}
	return g.resolve(ctx, err, e, res, herr)
}

// resolve acts on res, the answer to the escalation e of a round that
// failed with err (herr: the hook's error), as escalate says.
func (g *generation) resolve(ctx context.Context, err error, e Escalation, res Resolution, herr error) (again bool, final error) {
	reason := e.Reason
	if herr == nil {
		herr = res.check()
	}
	if herr != nil {
		return false, errors.Join(g.fail(ctx, err), fmt.Errorf("escalation hook: %w", herr))
	}
	at := res.At
	if at.IsZero() {
		at = g.r.Now()
	}
	rec := record.Escalation{Round: g.round, Attempts: e.Attempts, Reason: reason, Resolution: res.Action,
		Instruction: res.Instruction, Timestamp: at, ID: res.Escalation, By: res.By}
	switch res.Action {
	case record.ResolveSkip:
		ferr := g.fail(ctx, err)
		note, nerr := g.escalationNote(ctx, rec, fmt.Sprintf("skipped: %s after %s", reason, english.Count(g.attempt, "attempt", "attempts")))
		if nerr != nil {
			return false, errors.Join(ferr, fmt.Errorf("record skip: %w", nerr))
		}
		return false, &SkippedError{Task: g.cfg.task, Reason: reason, Note: note, Err: ferr}
	case record.ResolveAbort:
		// The error commit that ends the turn records the answer; a note
		// does when the turn ends without one (without purify).
		g.aborting = &rec
		ferr := g.fail(ctx, err)
		if g.aborting != nil {
			g.aborting = nil
			if _, nerr := g.escalationNote(ctx, rec, fmt.Sprintf("aborted: %s after %s", reason, english.Count(g.attempt, "attempt", "attempts"))); nerr != nil {
				return false, errors.Join(ferr, fmt.Errorf("record abort: %w", nerr))
			}
		}
		return false, &AbortedError{Task: g.cfg.task, Reason: reason, Err: ferr}
	}
	if nerr := g.nextRound(ctx, err, rec); nerr != nil {
		return false, g.fail(ctx, nerr)
	}
	return true, nil
}

// nextRound records the end of a round the hook answered with retry or
// fix, and steers the model into the next round: a failed model call that
// ended the round gets its error commit on the attempts chain, then comes
// the escalation note, then a steering message with the last diagnosis
// (after a failed model call, one only when there is an intervention).
func (g *generation) nextRound(ctx context.Context, cause error, rec record.Escalation) error {
	var me *modelError
	modelFailed := errors.As(cause, &me)
	if modelFailed {
		f := g.modelFailure(me.err)
		meta := &record.Meta{Error: me.err.Error(), Attempt: g.attempt, Task: g.cfg.task, Failure: &f, Restore: g.freshRestore(),
			Model: g.askedModel(), Provider: g.provider()}
		if _, err := g.extend(ctx, Pending{dag.KindError, dag.RoleAssistant, "model call failed: " + me.err.Error(), meta, "error record"}); err != nil {
			return err
		}
	}
	text := fmt.Sprintf("escalated: %s after %s; answer: %s", rec.Reason, english.Count(rec.Attempts, "attempt", "attempts"), Resolution{Action: rec.Resolution, Instruction: rec.Instruction})
	if _, err := g.escalationNote(ctx, rec, text); err != nil {
		return err
	}
	g.intervention(rec)
	g.round, g.roundStart = g.round+1, g.attempt
	switch {
	case !modelFailed && len(g.res.Diagnoses) > 0:
		return g.steer(ctx, g.res.Diagnoses[len(g.res.Diagnoses)-1])
	case g.cfg.intervention != "":
		_, err := g.extend(ctx, Pending{dag.KindSteering, dag.RoleUser, interventionText(g.cfg.intervention),
			&record.Meta{Attempt: g.attempt, Task: g.cfg.task, Restore: g.freshRestore()}, "steering message"})
		return err
	}
	return nil
}

// intervention sets the guidance of the round rec starts: a fix's
// instruction, or none.
func (g *generation) intervention(rec record.Escalation) {
	g.cfg.intervention = ""
	if rec.Resolution == record.ResolveFix {
		g.cfg.intervention = strings.TrimSpace(rec.Instruction)
	}
}

// escalationNote commits a note recording rec, the answer to the turn's
// escalation, on the turn's tip (it is the user_response event).
func (g *generation) escalationNote(ctx context.Context, rec record.Escalation, text string) (dag.Hash, error) {
	return g.extend(ctx, Pending{dag.KindNote, dag.RoleSystem, text,
		&record.Meta{Task: g.cfg.task, Escalation: &rec}, "escalation note"})
}

// interventionHeader marks a user's fix instruction in plain steering.
const interventionHeader = "USER INTERVENTION (high priority). After automated recovery failed, the user gave this instruction; treat it as authoritative:"

// interventionText is the plain rendering of a fix instruction, which
// goes first in the steering message.
func interventionText(instruction string) string {
	return interventionHeader + "\n" + instruction
}

// accept ends a round whose answer was accepted: after an earlier round,
// purify when the round itself did not (its first attempt passed), then
// finish. An answer a validator fixed is finished as fixed.
func (g *generation) accept(ctx context.Context, a answer) error {
	if g.fixed != nil {
		// A validator fixed the answer: the fix is what was accepted, and
		// acceptFix committed it on the restore point already.
		return g.finish(ctx, *g.fixed)
	}
	if g.round > 1 && g.cfg.purify && !g.res.Purified {
		if err := g.purify(ctx, g.restore); err != nil {
			return g.fail(ctx, err)
		}
	}
	return g.finish(ctx, a)
}

// EscalationError reports a validated turn (Chat, Generate) stopped by a
// failure that retrying cannot fix: the model server refused the request
// for a reason the next request would share, or a validator reported the
// answer blocked. The failed attempt and an error commit are recorded as
// for any failed turn (see Chat). errors.As reaches the model client's
// error through it (an *llm.AuthError, …).
type EscalationError struct {
	// Reason says why the turn could not go on.
	Reason record.EscalationReason
	// Task is the turn's task id ("" when none was given).
	Task string
	// Attempts is the number of model answers the turn got.
	Attempts int
	// Failures are the turn's failure records, in order, the one that
	// escalated last.
	Failures []record.Failure
	// Err is the model client's error; nil when a validator reported the
	// answer blocked.
	Err error
}

// Error returns the EscalationError message: the model client's error, or
// what the validator reported.
func (e *EscalationError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	last := ""
	if n := len(e.Failures); n > 0 {
		last = ": " + e.Failures[n-1].Error
	}
	return fmt.Sprintf("attempt %d is blocked, which retrying cannot fix%s", e.Attempts, last)
}

// Unwrap returns the model client's error.
func (e *EscalationError) Unwrap() error { return e.Err }

// escalationOf says whether a model call's error escalates, and why.
func escalationOf(err error) (record.EscalationReason, bool) {
	var auth *llm.AuthError
	var ctxLen *llm.ContextLengthError
	var api *llm.APIError
	var recorded *recordedError
	switch {
	case errors.As(err, &auth) && auth.StatusCode == http.StatusForbidden:
		return record.EscalatePermission, true
	case errors.As(err, &auth):
		return record.EscalateAuth, true
	case errors.As(err, &ctxLen):
		return record.EscalateContextLength, true
	case errors.As(err, &recorded):
		return recorded.reason, recorded.reason != "" && recorded.reason != record.EscalateTransport
	case errors.As(err, &api) && api.StatusCode == http.StatusBadRequest && !isTyped(err),
		errors.Is(err, llm.ErrUnsupported): // a message the provider has no place for: never sent
		return record.EscalateMalformedRequest, true
	}
	return "", false
}

// isTyped reports an error of one of llm's typed kinds other than a bare
// *llm.APIError (a bad response, a transport failure, …).
func isTyped(err error) bool {
	var (
		bad       *llm.BadResponseError
		transport *llm.TransportError
		rate      *llm.RateLimitError
		server    *llm.ServerError
	)
	return errors.As(err, &bad) || errors.As(err, &transport) || errors.As(err, &rate) || errors.As(err, &server)
}

// modelFailureType classifies a failed model call: a timeout (the server's
// 408, a network timeout, a deadline that was not the caller's) or an
// execution error.
func modelFailureType(err error) retry.FailureType {
	var api *llm.APIError
	var netErr net.Error
	var timeout *llm.TimeoutError
	switch {
	case errors.As(err, &timeout), errors.As(err, &api) && api.StatusCode == http.StatusRequestTimeout,
		errors.As(err, &netErr) && netErr.Timeout(),
		errors.Is(err, context.DeadlineExceeded):
		return retry.FailureTimeout
	}
	return retry.FailureExecution
}
