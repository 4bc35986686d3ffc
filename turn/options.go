package turn

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/tool"
)

// Option configures a turn (Run), as Chat, Generate and RetryLast of
// package tract take it.
type Option func(*Config)

// Config is a turn's configuration: the options given, checked and with
// defaults filled in by NewConfig.
type Config struct {
	client      llm.Client
	validators  []retry.Validator
	maxAttempts int
	purify      bool
	note        bool
	retryPrompt string
	model       string
	temperature *float64
	schema      *llm.Schema // Structured
	onDelta     func(string)
	onAttempt   func(Attempt)
	system      string
	task        string
	taskSet     bool
	feedback    retry.FeedbackFormat
	strategy    ContextStrategy
	analyzer    Analyzer
	// onEscalation is the OnEscalation hook; wait, when set instead,
	// has the escalation wait in the repository (EscalateWait).
	onEscalation EscalationFunc
	wait         *Waiting
	// intervention is the user's high-priority guidance for the current
	// round (a fix answer to an escalation), "" when none: the steering
	// of the round renders it first (in xml feedback, as a
	// <user_intervention> block ahead of the failures).
	intervention string
	// onEvent is the OnEvent callback.
	onEvent func(events.Event)
	// onAttemptDelta is the OnAttemptDelta callback.
	onAttemptDelta func(AttemptDelta)
	// onPending is the OnPendingTurn callback.
	onPending func(*Last)
	// deferStart is DeferStart.
	deferStart bool
	// newConversation is the branch of NewConversation ("" without).
	newConversation string
	// tools are the Tools offered to the model; maxToolSteps is
	// MaxToolSteps (DefaultMaxToolSteps when not given).
	tools        []tool.Tool
	maxToolSteps int
	// toolSet is tools, checked by NewConfig; nil without tools.
	toolSet *tool.Set
}

// NewConfig applies opts over the defaults (the client given, purify on,
// DefaultRetryPrompt, DefaultMaxAttempts attempts) and checks the result:
// a missing client, a negative number of attempts or tool steps, a bad
// task id (*TaskIDError), an unknown feedback format or context
// strategy, and tools tool.NewSet refuses are errors.
func NewConfig(client llm.Client, opts ...Option) (*Config, error) {
	cfg := &Config{client: client, purify: true, retryPrompt: DefaultRetryPrompt}
	for _, o := range opts {
		o(cfg)
	}
	switch {
	case cfg.client == nil:
		return nil, fmt.Errorf("%w: pass tract.WithClient to Open or tract.UseClient to the call", llm.ErrNoClient)
	case cfg.maxAttempts < 0:
		return nil, fmt.Errorf("max attempts is %d; it must be 1 or more", cfg.maxAttempts)
	case cfg.maxAttempts == 0:
		cfg.maxAttempts = retry.DefaultMaxAttempts
	}
	switch {
	case cfg.maxToolSteps < 0:
		return nil, fmt.Errorf("max tool steps is %d; it must be 1 or more", cfg.maxToolSteps)
	case cfg.maxToolSteps == 0:
		cfg.maxToolSteps = DefaultMaxToolSteps
	}
	if len(cfg.tools) > 0 {
		set, err := tool.NewSet(cfg.tools)
		if err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		cfg.toolSet = set
	}
	if cfg.taskSet {
		if err := checkTaskID(cfg.task); err != nil {
			return nil, err
		}
	}
	if err := cfg.checkFeedback(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// System is the system prompt the caller commits before the user message
// ("" when none was given: SystemPrompt).
func (cfg *Config) System() string { return cfg.system }

// Schema is the schema the turn asks for (nil when none: Structured).
func (cfg *Config) Schema() *llm.Schema { return cfg.schema }

// Task is the turn's task id ("" when none was given: Task).
func (cfg *Config) Task() string { return cfg.task }

// OnPending is the OnPendingTurn callback (nil when none was given).
func (cfg *Config) OnPending() func(*Last) { return cfg.onPending }

// Waiting is how the turn's escalations wait in the repository (nil
// when they do not: EscalateWait).
func (cfg *Config) Waiting() *Waiting { return cfg.wait }

// hooked reports a turn whose escalations are answered: by a hook, or in
// the repository.
func (cfg *Config) hooked() bool { return cfg.onEscalation != nil || cfg.wait != nil }

// DeferStart says whether the turn's start waits for its first model call
// (see DeferStart).
func (cfg *Config) DeferStart() bool { return cfg.deferStart }

// NewConversation is the branch a chat starts a new conversation on ("":
// it continues the current one; see NewConversation).
func (cfg *Config) NewConversation() string { return cfg.newConversation }

// checkFeedback refuses an unknown feedback format or context strategy,
// and sets the defaults.
func (cfg *Config) checkFeedback() error {
	if cfg.feedback == "" {
		cfg.feedback = retry.FeedbackPlain
	}
	if cfg.strategy == "" {
		cfg.strategy = ContextConversation
	}
	if _, err := retry.ParseFeedbackFormat(string(cfg.feedback)); err != nil {
		return err
	}
	_, err := ParseContextStrategy(string(cfg.strategy))
	return err
}

// DefaultMaxToolSteps is the number of tool steps a turn's attempt runs
// at most when MaxToolSteps is not given.
const DefaultMaxToolSteps = 8

// Tools offers ts to the model: every request of the turn carries their
// definitions (llm.Request.Tools). An answer that calls tools is a tool
// step: its calls run one after another in the order the model wrote them
// (tool.Set.Call: the arguments are checked against the tool's schema
// first), with no transaction or lock held; then the call message and its
// results (role tool, with their tool_call_id) are committed in one
// transaction (Repo.CommitChain), and the model is asked again. A call
// that cannot run or whose tool fails is answered with a text saying what
// was wrong, not an error of the turn. The first answer without calls
// ends the attempt and is validated; validators read the attempt's calls
// with tool.Trace. A cancelled context stops the turn before the step
// under way is written; more than MaxToolSteps steps in one attempt end
// it with a *ToolStepsError. Purify commits the accepted attempt's tool
// steps again on the restore point, before its answer; failed attempts
// keep theirs off the branch. The tools are checked by NewConfig (names,
// duplicates, schemas: tool.NewSet).
func Tools(ts ...tool.Tool) Option {
	return func(cfg *Config) { cfg.tools = append(cfg.tools, ts...) }
}

// MaxToolSteps bounds the tool steps (model answers that call tools) of
// one attempt (default DefaultMaxToolSteps): an answer that calls tools
// after that many steps ends the turn with a *ToolStepsError, its calls
// not run (see ToolStepsError for what is committed).
func MaxToolSteps(n int) Option { return func(cfg *Config) { cfg.maxToolSteps = n } }

// UseClient sends this call to c instead of the client given to Open.
func UseClient(c llm.Client) Option { return func(cfg *Config) { cfg.client = c } }

// Validate adds validators; the answer is accepted when all pass.
func Validate(vs ...retry.Validator) Option {
	return func(cfg *Config) { cfg.validators = append(cfg.validators, vs...) }
}

// MaxAttempts sets the total number of attempts, the first included
// (default 3).
func MaxAttempts(n int) Option { return func(cfg *Config) { cfg.maxAttempts = n } }

// Purify says whether a success after retries resets the branch to the
// restore point and re-commits only the accepted answer (default true), and
// whether exhaustion returns the branch to the restore point with an error
// commit. Without it the failed attempts and steering stay on the branch.
func Purify(on bool) Option { return func(cfg *Config) { cfg.purify = on } }

// ProvenanceNote also commits a note such as "resolved after 2 attempts:
// invalid JSON …" after the accepted answer. The provenance itself (attempts
// and diagnoses) is always recorded in the accepted commit's metadata, for a
// first-try success too.
func ProvenanceNote() Option { return func(cfg *Config) { cfg.note = true } }

// RetryPrompt replaces DefaultRetryPrompt; it may use {diagnosis},
// {attempt} and {max_attempts}.
func RetryPrompt(template string) Option {
	return func(cfg *Config) { cfg.retryPrompt = template }
}

// Model names the model for this call (default: the client's).
func Model(name string) Option { return func(cfg *Config) { cfg.model = name } }

// Temperature sets the sampling temperature.
func Temperature(t float64) Option { return func(cfg *Config) { cfg.temperature = &t } }

// OnDelta streams each piece of every attempt's answer to fn as it arrives.
func OnDelta(fn func(delta string)) Option { return func(cfg *Config) { cfg.onDelta = fn } }

// OnAttempt reports each attempt after it was validated and committed.
func OnAttempt(fn func(Attempt)) Option { return func(cfg *Config) { cfg.onAttempt = fn } }

// OnPendingTurn has package tract's Chat call fn, before it commits the
// message, when the branch ends in an unanswered user message (a Last of
// state Unanswered) that the new message would follow: the place to warn that the model will see two
// user messages in a row. Chat checks the branch first, so a missing
// branch or a detached HEAD is Chat's error alone, with no call.
func OnPendingTurn(fn func(*Last)) Option { return func(cfg *Config) { cfg.onPending = fn } }

// DeferStart has Chat commit its message (and system prompt), and
// RetryLast move the branch back to the unanswered message, only once the
// turn's first model call has reached the model (see RunDeferred): a
// failure that shows the client's setup to be wrong (llm.APIError.Setup)
// then writes nothing and returns an *UnsentError, instead of leaving
// the branch ending in the message and an error commit. A caller that
// shows the turn as it happens, or that retries a failed turn from its
// message (an interactive chat's /retry), goes without it.
func DeferStart() Option { return func(cfg *Config) { cfg.deferStart = true } }

// NewConversation has Chat start a new conversation on a new branch named
// branch, with no history, and move HEAD to it in the transaction that
// commits the message (with DeferStart, once the model was reached): the
// caller's own SwitchOrphan before Chat, but a chat that writes nothing
// leaves HEAD where it was (see tract.NewConversation).
func NewConversation(branch string) Option {
	return func(cfg *Config) { cfg.newConversation = branch }
}

// SystemPrompt commits text as a system message before the user message
// unless the current context already has that exact system message.
func SystemPrompt(text string) Option { return func(cfg *Config) { cfg.system = text } }

// Feedback sets how a retry is told what went wrong (default
// retry.FeedbackPlain: RetryPrompt, quoting the last diagnosis).
// retry.FeedbackXML sends a <retry_context> block (retry.RetryContext.XML)
// that lists every earlier failure of the turn with its failure record,
// the analyzer's root-cause guesses (see Analyze) and an instruction that
// invites the model to declare the task blocked: from then on, an answer
// whose first line starts with retry.BlockedMarker ("BLOCKED: reason")
// ends the turn at once with an *EscalationError of reason
// record.EscalateBlocked, without spending the attempts left. An unknown format
// fails the call before anything is written.
func Feedback(f retry.FeedbackFormat) Option { return func(cfg *Config) { cfg.feedback = f } }

// RetryContextStrategy sets what a retry sees of the failed attempts
// (default ContextConversation).
//
// With ContextFresh, the feedback of retry N is a steering commit on the
// parent of the task message, followed by a copy of the task message (the
// restore point: Chat's user message, or Generate's tip when that is a
// user message; otherwise the feedback is committed on the restore point),
// and the branch moves to that copy (reflog action "retry"), where the
// model answers. Compile sends steering commits, so the feedback reaches
// attempt N, and only it: attempt N+1 starts from the restore point
// again, and the chains of earlier attempts are off the branch (tract
// log --all shows them). Purify works as with ContextConversation: after
// a success the branch returns to the restore point and the accepted
// answer is committed on it, so both strategies end in the same shape.
// Without purify, the branch keeps the last attempt's chain.
func RetryContextStrategy(s ContextStrategy) Option {
	return func(cfg *Config) { cfg.strategy = s }
}

// Analyze runs a after each rejected answer (a blocked one aside), before
// the attempt is committed: its guess is recorded in the failure record as
// RootCauseGuess, and its fix as SuggestedFix unless a validator gave one.
// An analyzer that fails does not stop the turn: its error is recorded as
// AnalysisError. With retry.FeedbackXML the guesses of earlier attempts are
// sent as <accumulated_learnings>. ModelAnalyzer asks a model.
func Analyze(a Analyzer) Option { return func(cfg *Config) { cfg.analyzer = a } }

// OnEvent reports each event of the turn to fn as it happens (see
// events.Event), outside any transaction: fn may take its time, or read
// the repository. The events of a turn are exactly those events.Replay
// regenerates from its commits afterwards (package tract's Events).
func OnEvent(fn func(events.Event)) Option { return func(cfg *Config) { cfg.onEvent = fn } }

// OnAttemptDelta streams every attempt's answer to fn as it arrives, each
// piece with the number of its attempt, so that a caller can show the
// attempts of a validated turn apart: a new Attempt number starts a new
// answer, and the OnAttempt report of that number says whether it was
// accepted. A model call that fails after some pieces arrived is not an
// attempt (no OnAttempt report follows); the turn then ends with its
// error. It may be given with OnDelta; both receive every piece.
func OnAttemptDelta(fn func(AttemptDelta)) Option {
	return func(cfg *Config) { cfg.onAttemptDelta = fn }
}

// Structured asks the model for answers constrained to schema where its
// provider supports it (see llm.Schema): every attempt of the turn sends
// it, the validators still check each answer, and each answer records
// what became of the schema under MetaStructured. A nil schema asks for
// nothing.
func Structured(schema *llm.Schema) Option {
	return func(cfg *Config) { cfg.schema = schema }
}

// Task records id, the task the turn works on (free text such as
// "03-01:task-3"), under MetaTask on every commit the turn writes: the
// user message (and a system prompt it adds), each attempt, each steering
// message, the accepted answer, a provenance note and an error commit. The
// id must be non-empty, valid UTF-8, one line without control characters,
// and at most MaxTaskIDLen bytes; else the call fails with a *TaskIDError
// before it writes anything.
func Task(id string) Option { return func(cfg *Config) { cfg.task, cfg.taskSet = id, true } }

// OnEscalation calls fn when a round of attempts ends without an accepted
// answer: every attempt failed validation (record.EscalateMaxRetries), a
// failure retrying cannot fix stopped it (an *EscalationError's reason),
// or the model server stayed unavailable through the client's transport
// retries (record.EscalateTransport: a 5xx answer, a persisting 429, a
// failed connection; the failed call's error commit then records the
// reason in its failure record). No transaction or lock is held while fn
// runs. Its answer:
//
//   - retry: a fresh round of MaxAttempts attempts follows, steered with
//     the last diagnosis. Earlier attempts stay as commits; attempt numbers
//     (of failure records, of Attempt) count on across rounds, and a
//     failure record of round 2 or later records its round.
//   - fix: as retry, and the instruction goes first in every steering
//     message of the new round, marked as the user's high-priority
//     intervention.
//   - skip: the turn ends as without a hook, then a note recording the
//     skip (an record.Escalation) is committed on the branch and the call
//     returns a *SkippedError.
//   - abort: the turn ends as without a hook (partial state, the attempts
//     and the error commit, stays), the error commit that ends it records
//     the answer (an record.Escalation; without purify, which writes no
//     error commit, a note does) and the call returns an *AbortedError.
//
// Before each new round a note holding an record.Escalation (reason,
// answer, time) is committed on the attempts chain. An error from fn, or
// an answer that is none of these, ends the turn as abort would, with
// that error joined to the turn's. The hook is asked at most MaxRounds-1
// times; other failures (a cancelled context, a conflict, a validator
// that could not run) end the turn without asking it.
//
// Without OnEscalation no one is asked: the turn ends at its first
// escalation, as the hook's abort would but with no note, returning the
// *retry.ExhaustedError (or *EscalationError, or the model client's
// error) itself; its events resolve as "escalated" (left to a person;
// see events.ResolvedEscalated), or "failed" for a server that stayed
// unavailable. A caller that wants abort recorded as an answer passes a
// hook that answers abort.
func OnEscalation(fn EscalationFunc) Option {
	return func(cfg *Config) { cfg.onEscalation, cfg.wait = fn, nil }
}

// ModelAnalyzer returns an Analyzer that asks client (with model, or the
// client's default) in one call per failure, with retry.AnalysisPrompt,
// and reads its reply with retry.ParseAnalysis. The call's token usage is
// not counted in the turn's.
func ModelAnalyzer(client llm.Client, model string) Analyzer {
	return func(ctx context.Context, answer string, f record.Failure) (retry.Analysis, error) {
		prompt := retry.AnalysisPrompt(retryFailure(f), answer)
		resp, err := client.Complete(ctx, llm.Request{Model: model, Messages: []llm.Message{{Role: string(dag.RoleUser), Content: prompt}}})
		if err != nil {
			return retry.Analysis{}, fmt.Errorf("analyse attempt %d: %w", f.Attempt, err)
		}
		a, err := retry.ParseAnalysis(resp.Content)
		if err != nil {
			return retry.Analysis{}, fmt.Errorf("analyse attempt %d: %w", f.Attempt, err)
		}
		return a, nil
	}
}

// Judge returns a retry.JudgeFunc that asks client (with model, or the
// client's default) for the "llm:" validator's verdict.
func Judge(client llm.Client, model string) retry.JudgeFunc {
	return func(ctx context.Context, prompt string) (string, error) {
		resp, err := client.Complete(ctx, llm.Request{Model: model, Messages: []llm.Message{{Role: string(dag.RoleUser), Content: prompt}}})
		if err != nil {
			return "", err
		}
		return resp.Content, nil
	}
}
