package turn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/tool"
)

// DefaultRetryPrompt is the steering text committed after a failed
// validation. {diagnosis}, {attempt} and {max_attempts} are replaced.
const DefaultRetryPrompt = "Your previous response failed validation: {diagnosis}\nPlease try again, addressing the issue above."

// Repo is what a turn needs of the repository it runs on, the branch it
// commits to included. Each method that writes is one short transaction
// that moves the branch only if it still stands where the turn expects
// it; otherwise what it wrote is kept off the branch and the error is a
// *refs.ConflictError naming it. No method is called with a transaction
// held: the turn calls the model, the validators and the caller's
// callbacks between them. Package tract adapts a Tract (or a view of one
// branch) to it.
type Repo interface {
	// Compile returns the messages the model is sent for the chain that
	// ends at tip, in a slice of the caller's (the turn appends its tool
	// steps to it).
	Compile(ctx context.Context, tip dag.Hash) ([]llm.Message, error)
	// CommitOn writes p on parent and moves the branch from parent to it.
	CommitOn(ctx context.Context, parent dag.Hash, p Pending) (dag.Hash, error)
	// CommitChain writes chain on parent, each commit on the one before
	// it, and moves the branch from parent to the last, in one
	// transaction; it returns the commits, in order. A conflict keeps the
	// whole chain off the branch and names its last commit.
	CommitChain(ctx context.Context, parent dag.Hash, chain []Pending) ([]dag.Hash, error)
	// Rewind moves the branch from tip back to restore (reflog action
	// purify, message msg; ORIG_HEAD at tip) and commits then on restore,
	// each commit on the one before it, in the same transaction; it
	// returns then's commits, in order (none when then is empty: the
	// branch's new tip is restore). A conflict keeps then off the branch
	// and names its last commit.
	Rewind(ctx context.Context, tip, restore dag.Hash, msg string, then []Pending) ([]dag.Hash, error)
	// Restart begins the next attempt of a turn with the fresh retry
	// context (ContextFresh) from the restore point: it writes the
	// feedback on the parent of the task message (the restore point, when
	// it is a user message) and a copy of the task message on it (or,
	// when the restore point is no user message, the feedback on the
	// restore point), and moves the branch there from tip (reflog action
	// retry, message msg). It returns the feedback's commit and the new
	// tip.
	Restart(ctx context.Context, tip, restore dag.Hash, feedback Pending, msg string) (fb, newTip dag.Hash, err error)
	// Step reads commit h, just written, back as a step of the turn
	// (nil when it is none), for the turn's live events.
	Step(ctx context.Context, h dag.Hash) (*events.Step, error)
	// Now is the repository's clock.
	Now() time.Time
	// Limits are the repository's size limits.
	Limits() ingest.Limits
}

// Pending is a commit a step of a turn writes on a parent read in an
// earlier transaction.
type Pending struct {
	Kind dag.Kind
	Role dag.Role
	Text string
	// Meta is the commit's metadata, tract's own.
	Meta *record.Meta
	// What names the commit in a conflict ("accepted answer", …).
	What string
}

// Run runs one validated turn on r from restore, the commit the turn
// builds on (its user message, or the tip it answers): attempts, each
// committed with its verdict; steering after a rejected answer; purify
// after a success that took retries; escalation when a round ends without
// an accepted answer. It returns the turn's result, also with an error, so
// that the usage spent and the diagnoses are not lost.
func Run(ctx context.Context, r Repo, restore dag.Hash, cfg *Config) (*Result, error) {
	return newGeneration(r, restore, cfg).run(ctx)
}

// Start is the start of a turn that is not written yet (see RunDeferred):
// a chat's user message (and system prompt), or the move back to the
// message a failed turn left unanswered.
type Start struct {
	// Messages are what the turn's first model call sends: the context
	// the turn builds on, with the start's own messages after it; the
	// turn's own (it appends its tool steps to them).
	Messages []llm.Message
	// Write writes the start and returns the turn's restore point. When
	// the branch moved since Messages were read, Write writes the start
	// off the branch, as a Repo does, and returns its restore point with
	// a *refs.ConflictError: the turn then goes on from there, and its
	// next commit, kept off the branch too, ends it with the conflict.
	Write func(ctx context.Context) (dag.Hash, error)
}

// RunDeferred is Run for a turn whose start is not written yet: the
// first model call sends start.Messages, and start.Write writes the start
// once that call has reached the model: when the server starts answering
// (llm.Request.OnReached), else when the call ends with an answer or a
// failure a turn records (interrupted included). When the call fails in a way
// that shows the client's setup to be wrong (llm.APIError.Setup: no
// server at the base URL, the key refused, no endpoint, an HTML page, an
// unknown model), nothing is written, no escalation is asked, and the
// error is an *UnsentError.
func RunDeferred(ctx context.Context, r Repo, start Start, cfg *Config) (*Result, error) {
	g := newGeneration(r, dag.Hash{}, cfg)
	g.start = &start
	return g.run(ctx)
}

// run runs the turn (see Run).
func (g *generation) run(ctx context.Context) (*Result, error) {
	defer g.events.End()
	for {
		out, err := retry.WithSteering(ctx, g.steering())
		if err == nil {
			return g.res, g.accept(ctx, out.Value)
		}
		g.res.ToolSteps = g.kept
		if unsent := (*UnsentError)(nil); errors.As(err, &unsent) {
			return g.res, unsent
		}
		if again, err := g.escalate(ctx, err); !again { // see escalation.go
			return g.res, err
		}
	}
}

// UnsentError reports a turn run by RunDeferred that wrote nothing: its
// first model call failed in a way that shows the client's setup to be
// wrong (llm.APIError.Setup says how). Err is the failure, inside an
// *EscalationError when retrying cannot fix it (a refused key, a refused
// request), as the same failure of any turn is.
type UnsentError struct {
	Err error
}

// Error returns the failure's message.
func (e *UnsentError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *UnsentError) Unwrap() error { return e.Err }

// begin writes the turn's start after its first model call reached the
// model, and moves the turn's restore point and tip to it. A conflict
// leaves the turn going on off the branch (see Start.Write).
func (g *generation) begin(ctx context.Context) error {
	start := g.start
	g.start = nil
	h, err := start.Write(context.WithoutCancel(ctx))
	if conflict := (*refs.ConflictError)(nil); err != nil && !errors.As(err, &conflict) {
		return err
	}
	g.restore, g.tip, g.res.User = h, h, h
	return nil
}

// setupProblem reports a model failure that shows the client's setup to
// be wrong.
func setupProblem(err error) bool {
	var api *llm.APIError
	return errors.As(err, &api) && api.Setup != ""
}

// generation is one validated turn in the making. Its methods are the
// steps retry.WithSteering runs (ask, validate, steer, purify) and what
// comes after (finish, fail); its fields are what the steps share. Each
// step that writes is one transaction, and moves the branch only if it
// still stands where the turn left it (see Repo).
type generation struct {
	r         Repo
	cfg       *Config
	validator retry.Validator

	restore    dag.Hash // the turn's restore point: its user message (or the tip Generate started on)
	start      *Start   // the turn's start while it is not written (RunDeferred); nil once it is
	tip        dag.Hash // the branch tip the turn expects; moves as it commits
	attempt    int      // the attempt under way, from 1, counting on across rounds
	round      int      // the round of attempts under way, from 1 (see OnEscalation)
	roundStart int      // the attempts made before this round
	last       answer
	lastCommit dag.Hash // the commit of the answer the turn ends with
	res        *Result
	failures   []record.Failure // the turn's failure records, in order
	started    time.Time        // when the attempt under way started (monotonic)
	events     *events.Live     // derives the turn's events from its commits; nil without OnEvent
	// aborting is the escalation hook's abort while the turn ends: the
	// error commit that ends it records it (and sets aborting to nil).
	aborting *record.Escalation
	// fixed is the accepted answer as a validator fixed it, once
	// committed (see acceptFix); nil when no validator fixed it.
	fixed *answer
	// steps are the tool steps of the attempt under way (see toolStep);
	// kept are those of the last attempt that made any, for the Result
	// of a failed turn.
	steps, kept []ToolStep
}

func newGeneration(r Repo, restore dag.Hash, cfg *Config) *generation {
	v := retry.All(cfg.validators...)
	if len(cfg.validators) == 1 {
		v = cfg.validators[0] // no "name: " prefix on a lone validator's diagnosis
	}
	return &generation{r: r, cfg: cfg, validator: v, restore: restore, tip: restore, round: 1,
		res: &Result{Diagnoses: []string{}, History: []Attempt{}, Steering: []dag.Hash{}}, events: events.NewLive(cfg.onEvent)}
}

func (g *generation) steering() retry.Steering[answer, dag.Hash] {
	return retry.Steering[answer, dag.Hash]{
		MaxAttempts: g.cfg.maxAttempts,
		Purify:      g.cfg.purify,
		Head:        func(context.Context) (dag.Hash, error) { return g.restore, nil },
		Attempt:     g.ask,
		Validate:    g.validate,
		Steer:       g.steer,
		Reset:       g.reset, // purify, unless a fix did (see fix.go)
	}
}

// ask sends the context compiled at the turn's tip to the model. With
// tools, an answer that calls them is a tool step (see toolStep): the
// calls are run and committed with their results, and the model is asked
// again, until it answers without calls.
func (g *generation) ask(ctx context.Context) (answer, error) {
	g.attempt++
	g.started = time.Now() // not the repository's clock, which tests fix: a duration is measured
	g.steps = nil
	var msgs []llm.Message
	var err error
	if g.start != nil {
		msgs = g.start.Messages
	} else if msgs, err = g.r.Compile(ctx, g.tip); err != nil {
		return answer{}, err
	}
	for {
		a, resp, err := g.complete(ctx, msgs)
		if err != nil {
			return answer{}, err
		}
		if g.cfg.toolSet == nil || len(a.calls) == 0 {
			a.structured = structuredRecord(g.cfg.schema, resp)
			g.last = a
			g.res.Attempts = g.attempt
			return g.last, nil
		}
		if len(g.steps) == g.cfg.maxToolSteps {
			return answer{}, &modelError{err: g.toolStepsError(a)}
		}
		if msgs, err = g.toolStep(ctx, msgs, a); err != nil {
			return answer{}, err
		}
	}
}

// complete makes one model call of the attempt under way, with msgs, and
// reads its answer (see ask). With RunDeferred, the first call writes the
// turn's start.
func (g *generation) complete(ctx context.Context, msgs []llm.Message) (answer, *llm.Response, error) {
	called := time.Now()
	req := llm.Request{
		Model: g.cfg.model, Messages: msgs, Temperature: g.cfg.temperature, OnDelta: g.deltaFunc(), Schema: g.cfg.schema,
	}
	if g.cfg.toolSet != nil {
		req.Tools = g.cfg.toolSet.Defs()
	}
	var werr error // the start's write, when it failed
	if g.start != nil {
		// The start is written as soon as the server answers, so that
		// the turn shows while the answer streams.
		req.OnReached = func() { werr = g.begin(ctx) }
	}
	resp, err := g.cfg.client.Complete(ctx, req)
	if g.start != nil { // the call never reached the model, or the client does not say
		if err != nil && setupProblem(err) && ctx.Err() == nil {
			return answer{}, nil, &UnsentError{Err: g.reported(err)}
		}
		werr = g.begin(ctx)
	}
	if werr != nil {
		return answer{}, nil, errors.Join(werr, err)
	}
	if err != nil {
		return answer{}, nil, &modelError{err: err}
	}
	g.res.Usage = g.res.Usage.Add(resp.Usage)
	g.res.Model = resp.Model
	a, err := answerOf(resp)
	if err != nil {
		return answer{}, nil, &modelError{err: err}
	}
	if n, limit := int64(max(len(a.text), len(a.shape))), g.r.Limits().MessageSize; n > limit {
		// An answer the repository cannot hold cannot be an attempt (it
		// could be neither committed nor inspected): it fails the model
		// call, and the turn ends as after any model failure.
		return answer{}, nil, &modelError{err: &ingest.TooLargeError{What: fmt.Sprintf("the model's answer (attempt %d)", g.attempt),
			Size: n, Limit: limit, Which: ingest.LimitMessageSize}}
	}
	a.took = time.Since(called)
	return a, resp, nil
}

// check runs the validators on an answer (an empty answer always fails,
// as an execution error: there is nothing to validate).
func (g *generation) check(ctx context.Context, a answer) (retry.Verdict, error) {
	if vd, ok := g.declaredBlocked(a); ok {
		return vd, nil
	}
	switch {
	case strings.TrimSpace(a.text) == "":
		return retry.Verdict{Diagnosis: "the answer is empty", Type: retry.FailureExecution}, nil
	case len(g.cfg.validators) > 0:
		if g.cfg.toolSet != nil {
			ctx = tool.WithTrace(ctx, traceOf(g.steps))
		}
		return retry.Check(ctx, g.validator, a.text)
	}
	return retry.Verdict{OK: true}, nil
}

// validate checks an answer and commits it with its verdict, and its
// failure record when it failed. A blocked verdict stops the turn with an
// *EscalationError.
func (g *generation) validate(ctx context.Context, a answer) (bool, string, error) {
	vd, verr := g.check(ctx, a)
	if verr == nil {
		var fix bool
		if vd, fix, verr = g.fixable(a, vd); fix {
			return g.acceptFix(ctx, a, vd) // see fix.go
		}
	}
	ok, diagnosis := vd.OK, vd.Diagnosis
	validated := len(g.cfg.validators) > 0
	meta := attemptMeta(g.attempt, a, validated, ok, diagnosis, verr)
	meta.Task, meta.DurationMS, meta.Restore, meta.Validators = g.cfg.task, g.elapsed(), g.freshRestore(), g.specs()
	if ok {
		// Every accepted answer says how it was reached, on the first try
		// too (attempts 1, no diagnoses).
		p := provenance(g.attempt, g.restore, g.res)
		meta.Provenance = &p
	} else if verr == nil {
		meta.Failure = g.analyse(ctx, a, g.failure(vd))
	}
	what := fmt.Sprintf("rejected answer of attempt %d", g.attempt)
	switch {
	case ok && verr == nil && !validated:
		what = keptAnswer
	case ok && verr == nil:
		what = keptAcceptedAnswer
	}
	h, err := g.extend(ctx, Pending{dag.KindMessage, dag.RoleAssistant, nonEmpty(a.text, "(empty answer)"), meta, what})
	if err != nil {
		if ok && verr == nil && errors.Is(err, refs.ErrReferenceChanged) {
			g.res.Text = a.text // kept off the branch: see fail
		}
		return false, "", err
	}
	g.lastCommit = h
	if verr != nil {
		return false, "", &unjudgedError{err: verr}
	}
	if !ok {
		g.res.Diagnoses = append(g.res.Diagnoses, diagnosis)
		g.failures = append(g.failures, *meta.Failure)
	}
	at := Attempt{Number: g.attempt, Max: g.maxAttempt(), OK: ok, Text: a.text, Diagnosis: diagnosis, Commit: h, Usage: a.usage, ToolSteps: len(g.steps)}
	g.res.History = append(g.res.History, at)
	if g.cfg.onAttempt != nil {
		g.cfg.onAttempt(at)
	}
	if vd.Blocked != "" {
		return false, "", g.escalation(record.EscalateBlocked, nil)
	}
	return ok, diagnosis, nil
}

// unjudgedError stops a turn whose validator could not run on an answer
// (an llm: judge whose reply is not its verdict, a judge's server down):
// the answer was not judged, so it is neither accepted nor rejected, and
// no other attempt follows.
type unjudgedError struct{ err error }

func (e *unjudgedError) Error() string { return "validator could not run: " + e.err.Error() }
func (e *unjudgedError) Unwrap() error { return e.err }

// failure is the failure record of the current attempt's rejection.
func (g *generation) failure(vd retry.Verdict) *record.Failure {
	summary := nonEmpty(vd.Summary, vd.Diagnosis)
	if vd.Blocked != "" {
		summary = "blocked: " + strings.TrimSpace(vd.Blocked)
	}
	r := &record.Failure{Attempt: g.attempt, Round: g.laterRound(), Timestamp: g.r.Now(), Type: vd.Type,
		Error: record.ErrorLine(summary), Details: vd.Diagnosis, SuggestedFix: vd.SuggestedFix}
	if vd.Command != "" {
		r.Command, r.OutputSummary = vd.Command, vd.Output
		if vd.ExitCode >= 0 {
			code := vd.ExitCode
			r.ExitCode = &code
		}
	}
	if vd.Blocked != "" {
		r.Escalation = record.EscalateBlocked
	}
	return r
}

// specs are the specs of the turn's validators, as recorded under
// MetaValidators (nil without validators).
func (g *generation) specs() []string {
	var out []string
	for _, v := range g.cfg.validators {
		if name := v.Name(); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// maxAttempt is the number of the last attempt the round may make.
func (g *generation) maxAttempt() int { return g.roundStart + g.cfg.maxAttempts }

// laterRound is the round under way from the second on, 0 in the first
// (a failure record of the first round does not record its round).
func (g *generation) laterRound() int {
	if g.round > 1 {
		return g.round
	}
	return 0
}

// modelFailure is the failure record of the current attempt's failed
// model call, added to the turn's records the first time it is asked for.
func (g *generation) modelFailure(err error) record.Failure {
	if n := len(g.failures); n > 0 && g.failures[n-1].Attempt == g.attempt {
		return g.failures[n-1]
	}
	f := record.Failure{Attempt: g.attempt, Round: g.laterRound(), Timestamp: g.r.Now(), Type: modelFailureType(err),
		Error: record.ErrorLine(err.Error()), Details: err.Error()}
	if reason, escalates := g.modelEscalation(err); escalates {
		f.Escalation = reason
	}
	g.failures = append(g.failures, f)
	return f
}

// reported is the error a turn ends with after its model call failed
// with err: an *EscalationError when retrying cannot fix err, else err.
func (g *generation) reported(err error) error {
	if reason, escalates := escalationOf(err); escalates {
		return g.escalation(reason, err)
	}
	return err
}

// escalation is the *EscalationError that stops the turn for reason.
func (g *generation) escalation(reason record.EscalationReason, err error) *EscalationError {
	return &EscalationError{Reason: reason, Task: g.cfg.task, Attempts: g.res.Attempts,
		Failures: append([]record.Failure{}, g.failures...), Err: err}
}

// askedModel is the model the turn asks: the Model option, else the
// client's default when it says (llm.Describer).
func (g *generation) askedModel() string {
	if g.cfg.model != "" {
		return g.cfg.model
	}
	if d, ok := g.cfg.client.(llm.Describer); ok {
		return d.DefaultModel()
	}
	return ""
}

// provider is the kind of server the turn asks, when the client says.
func (g *generation) provider() string {
	if d, ok := g.cfg.client.(llm.Describer); ok {
		return d.Provider()
	}
	return ""
}

// elapsed is the time the attempt under way has taken, in milliseconds.
func (g *generation) elapsed() int64 { return time.Since(g.started).Milliseconds() }

// steer commits the message that tells the model what was wrong: after
// the failed answer, or with ContextFresh before a copy of the task
// message (see restartFresh).
func (g *generation) steer(ctx context.Context, diagnosis string) error {
	p := Pending{dag.KindSteering, dag.RoleUser, g.feedback(diagnosis),
		&record.Meta{Attempt: g.attempt, Diagnosis: diagnosis, Task: g.cfg.task, Restore: g.freshRestore()}, "steering message"}
	var h dag.Hash
	var err error
	if g.cfg.strategy == ContextFresh {
		h, err = g.restartFresh(ctx, p)
	} else {
		h, err = g.extend(ctx, p)
	}
	if err == nil {
		g.res.Steering = append(g.res.Steering, h)
	}
	return err
}

// extend commits p on the turn's tip, moves the tip to it and derives its
// events: every commit a turn adds to its chain goes through here.
func (g *generation) extend(ctx context.Context, p Pending) (dag.Hash, error) {
	h, err := g.r.CommitOn(ctx, g.tip, p)
	if err == nil {
		g.tip = h
		g.record(ctx, h)
	}
	return h, err
}

// purify resets the branch to the restore point and re-commits the
// accepted answer, with its provenance, in one transaction.
func (g *generation) purify(ctx context.Context, _ dag.Hash) error {
	restore := g.restore // written after retry.WithSteering read it, with RunDeferred
	meta := attemptMeta(g.attempt, g.last, true, true, "", nil)
	p := provenance(g.attempt, restore, g.res)
	meta.Attempt, meta.Provenance, meta.Task, meta.Validators = 0, &p, g.cfg.task, g.specs() // the clean copy is no attempt
	// The accepted answer's tool steps go first: the answer rests on them.
	chain := append(pendingOf(g.steps), Pending{dag.KindMessage, dag.RoleAssistant, g.last.text, meta, keptAcceptedAnswer})
	hs, err := g.r.Rewind(ctx, g.tip, restore, purifyMessage(g.attempt-1), chain)
	switch {
	case err == nil:
		h := hs[len(hs)-1]
		g.tip, g.lastCommit, g.res.Purified = h, h, true
		g.steps = recommitted(g.steps, hs)
		g.record(ctx, h)
	case errors.Is(err, refs.ErrReferenceChanged):
		g.res.Text = g.last.text // kept off the branch: see fail
	}
	return err
}

// finish records the accepted answer in the result and, when asked, the
// provenance note after it.
func (g *generation) finish(ctx context.Context, a answer) error {
	g.res.Text, g.res.ToolCalls, g.res.Commit, g.res.ToolSteps = a.text, a.calls, g.lastCommit, g.steps
	if !g.cfg.note {
		return nil
	}
	note := "accepted on the first attempt"
	if name := g.validator.Name(); name != "" {
		note = fmt.Sprintf("passed validation on the first attempt (%s)", name)
	}
	if g.res.Attempts > 1 {
		note = fmt.Sprintf("resolved after %d attempts: %s", g.res.Attempts, strings.Join(g.res.Diagnoses, "; "))
	}
	if g.res.FixedBy != "" {
		note = fmt.Sprintf("fixed by %s on the first attempt", g.res.FixedBy)
		if g.res.Attempts > 1 {
			note = fmt.Sprintf("resolved after %d attempts, the last fixed by %s: %s", g.res.Attempts, g.res.FixedBy, strings.Join(g.res.Diagnoses, "; "))
		}
	}
	p := provenance(g.res.Attempts, g.restore, g.res)
	meta := &record.Meta{Provenance: &p, Task: g.cfg.task}
	if _, err := g.r.CommitOn(ctx, g.tip, Pending{dag.KindNote, dag.RoleSystem, note, meta, "provenance note"}); err != nil {
		return fmt.Errorf("record provenance note: %w", err)
	}
	return nil
}

// fail ends a turn that failed with err, and returns the error to report.
// Exhaustion or a blocked answer with purify, and model failures, leave the
// branch in the shape restore point + error commit. What ends the turn is
// written also when ctx was cancelled: an interrupted turn leaves no
// steering message for the next one to answer.
func (g *generation) fail(ctx context.Context, err error) error {
	var ex *retry.ExhaustedError
	var esc *EscalationError
	var me *modelError
	var conflict *refs.ConflictError
	var unjudged *unjudgedError
	interrupted := ctx.Err()
	ctx = context.WithoutCancel(ctx)
	switch {
	case errors.As(err, &conflict):
		// The branch moved: write nothing more on it. What was kept off it
		// is in the error (and res, when it is the answer).
		if conflict.What == keptAnswer || conflict.What == keptAcceptedAnswer {
			g.res.Commit = conflict.Kept
		}
		g.record(ctx, conflict.Kept)
		return err
	case interrupted != nil:
		return g.failInterrupted(ctx, interrupted)
	case errors.As(err, &ex):
		ex.LastResult = ex.LastResult.(answer).text // the last answer, not this package's private type
		if g.round > 1 {
			// The error counts the last round's attempts: say the turn's.
			ex.Attempts, ex.Rounds, ex.History = g.attempt, g.round, append([]string{}, g.res.Diagnoses...)
		}
		text := fmt.Sprintf("validation failed after %s; last diagnosis: %s", english.Count(g.res.Attempts, "attempt", "attempts"), ex.LastDiagnosis)
		return g.failValidation(ctx, err, g.res.Attempts, text)
	case errors.As(err, &unjudged):
		return g.failUnjudged(ctx, err, unjudged)
	case errors.As(err, &esc) && esc.Reason == record.EscalateBlocked:
		text := fmt.Sprintf("validation stopped after %s: %s", english.Count(esc.Attempts, "attempt", "attempts"), esc.Failures[len(esc.Failures)-1].Error)
		return g.failValidation(ctx, err, esc.Attempts, text)
	case errors.As(err, &me):
		return g.failModel(ctx, me.err)
	}
	return err
}

// failInterrupted ends a turn whose context was cancelled: with purify,
// the attempts made so far leave the branch, so that the next turn does
// not answer a steering message.
func (g *generation) failInterrupted(ctx context.Context, cause error) error {
	if g.cfg.purify && g.tip != g.restore {
		if _, err := g.r.Rewind(ctx, g.tip, g.restore, purifyMessage(g.hidden())+" (interrupted)", nil); err != nil {
			return errors.Join(cause, err)
		}
		g.tip, g.res.Purified = g.restore, true
	}
	return cause
}

// failModel ends a turn whose model call failed (after the client's own
// retries) with err: an error commit records the failure, on the restore
// point with purify (the attempts so far leave the branch), else on the
// attempts chain. A failure retrying cannot fix is reported as an
// *EscalationError.
func (g *generation) failModel(ctx context.Context, err error) error {
	text := "model call failed: " + err.Error()
	if tooLarge := (*ingest.TooLargeError)(nil); errors.As(err, &tooLarge) {
		text = "model answer refused: " + err.Error()
	}
	if steps := (*ToolStepsError)(nil); errors.As(err, &steps) {
		text = "tool steps exhausted: " + err.Error()
	}
	failure := g.modelFailure(err)
	meta := &record.Meta{Error: err.Error(), Attempt: g.attempt, Usage: &g.res.Usage, Task: g.cfg.task, Failure: &failure, Restore: g.freshRestore(),
		Model: g.askedModel(), Provider: g.provider(),
		DurationMS: g.elapsed(), Escalation: g.aborting}
	p := Pending{dag.KindError, dag.RoleAssistant, text, meta, "error record"}
	var h dag.Hash
	var werr error
	rewound := g.cfg.purify && g.tip != g.restore
	if rewound {
		var hs []dag.Hash
		if hs, werr = g.r.Rewind(ctx, g.tip, g.restore, purifyMessage(g.hidden()), []Pending{p}); werr == nil {
			h = hs[0]
		}
	} else {
		h, werr = g.r.CommitOn(ctx, g.tip, p)
	}
	reported := g.reported(err)
	if werr != nil {
		if conflict := (*refs.ConflictError)(nil); errors.As(werr, &conflict) {
			g.record(ctx, conflict.Kept)
		}
		return errors.Join(reported, werr)
	}
	g.tip, g.res.Commit, g.res.Purified, g.aborting = h, h, rewound, nil
	g.record(ctx, h)
	return reported
}

// failUnjudged ends a turn whose validator could not run on its last
// answer. With purify the branch returns to the restore point and an
// error commit records why, as after a failed model call: an answer no
// one judged is not left in the context of the next turn, and the branch
// ends in the unanswered message that a retry of the last turn answers
// again. The answer stays in the repository, off the branch, with its
// validator error. Without purify the attempts, the unjudged answer last,
// stay on the branch.
func (g *generation) failUnjudged(ctx context.Context, err error, unjudged *unjudgedError) error {
	text := fmt.Sprintf("answer of attempt %d not judged: %s", g.attempt, unjudged.err.Error())
	msg := fmt.Sprintf("purify: hid %s, the last not judged", english.Count(g.res.Attempts, "attempt", "attempts"))
	return g.failPurified(ctx, err, g.res.Attempts, text, msg)
}

// failValidation ends a turn whose answers failed validation (every
// attempt, or one reported blocked): with purify, the branch returns to the
// restore point and an error commit saying text records the turn; without,
// the attempts stay on the branch.
func (g *generation) failValidation(ctx context.Context, err error, attempts int, text string) error {
	return g.failPurified(ctx, err, attempts, text, purifyMessage(attempts))
}

// failPurified ends a turn of attempts that gave no accepted answer: with
// purify, the branch returns to the restore point (reflog message msg)
// and an error commit saying text records the turn; without, the attempts
// stay on the branch.
func (g *generation) failPurified(ctx context.Context, err error, attempts int, text, msg string) error {
	if !g.cfg.purify {
		return err
	}
	p := provenance(attempts, g.restore, g.res)
	meta := &record.Meta{Provenance: &p, Usage: &g.res.Usage, Task: g.cfg.task, Validators: g.specs(), Escalation: g.aborting}
	hs, rerr := g.r.Rewind(ctx, g.tip, g.restore, msg, []Pending{{dag.KindError, dag.RoleAssistant, text, meta, "error record"}})
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	h := hs[0]
	g.tip, g.res.Commit, g.res.Purified, g.aborting = h, h, true, nil
	g.record(ctx, h)
	return err
}

// answerOf is a model's answer as a turn keeps it: its text, and with tool
// calls, its readable text and the shape that keeps the calls.
func answerOf(resp *llm.Response) (answer, error) {
	a := answer{text: resp.Content, content: resp.Content, model: resp.Model, usage: resp.Usage}
	if len(resp.ToolCalls) == 0 {
		return a, nil
	}
	m := ingest.Message{Role: dag.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
	// A server that sends a call without an id or name is refused here,
	// as a failed model call, not when the answer is committed.
	text, shape, err := m.Stored()
	if err != nil {
		return answer{}, fmt.Errorf("the answer's tool calls cannot be kept: %w", err)
	}
	a.text, a.calls, a.shape = text, resp.ToolCalls, shape
	return a, nil
}

// record derives the events of commit h, just written by the turn. It
// reads the commit back, outside the transaction that wrote it, so the
// event holds what the repository holds (the commit's time, to the
// nanosecond). A commit that cannot be read back emits nothing.
func (g *generation) record(ctx context.Context, h dag.Hash) {
	if g.events == nil || h.IsZero() {
		return
	}
	if s, err := g.r.Step(ctx, h); err == nil && s != nil {
		g.events.Add(s)
	}
}

// answer is one attempt's model output.
type answer struct {
	text       string // the readable text: the content, or with calls, llm.Message.Text
	content    string // the model's content, beside its calls
	calls      []llm.ToolCall
	shape      []byte // the commit's shape, with calls (see ingest.Message.Stored)
	model      string
	usage      llm.Usage
	structured *record.Structured // what became of the turn's schema; nil without one
	took       time.Duration      // how long the model call took
}

// What a ConflictError of a turn kept off the branch, when it is the answer.
const (
	keptAnswer         = "answer"
	keptAcceptedAnswer = "accepted answer"
)

// modelError marks an error as coming from the model client, not the store.
type modelError struct{ err error }

func (e *modelError) Error() string { return e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

func attemptMeta(attempt int, a answer, validated, ok bool, diagnosis string, verr error) *record.Meta {
	usage := a.usage
	m := &record.Meta{Attempt: attempt, Usage: &usage, Model: a.model, Diagnosis: diagnosis, Structured: a.structured, Shape: a.shape}
	if validated {
		valid := ok && verr == nil
		m.Valid = &valid
	}
	if verr != nil {
		m.ValidatorError = verr.Error()
	}
	return m
}

// provenance is the Provenance of a turn of attempts answers so far, built
// on restore.
func provenance(attempts int, restore dag.Hash, res *Result) record.Provenance {
	return record.Provenance{Attempts: attempts, Diagnoses: append([]string{}, res.Diagnoses...),
		Restore: restore, Usage: res.Usage, Model: res.Model}
}

// hidden is the number of attempts whose commits a rewind of a turn that
// ends without an answer takes off the branch: the answered ones, and the
// one under way when it committed tool steps.
func (g *generation) hidden() int {
	if len(g.steps) > 0 && g.res.Attempts < g.attempt {
		return g.attempt
	}
	return g.res.Attempts
}

func purifyMessage(failed int) string {
	return "purify: hid " + english.Count(failed, "failed attempt", "failed attempts")
}

func expandRetryPrompt(tmpl, diagnosis string, attempt, max int) string {
	return strings.NewReplacer("{diagnosis}", diagnosis, "{attempt}", strconv.Itoa(attempt),
		"{max_attempts}", strconv.Itoa(max)).Replace(tmpl)
}

func nonEmpty(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}
