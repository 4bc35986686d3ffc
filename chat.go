package tract

import (
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/tool"
	"github.com/tractdag/tract/turn"
	"github.com/tractdag/tract/typed"
)

// A validated turn (Chat, Generate, RetryLast) is run by package turn;
// these are its names as package tract users know them.
type (
	// ChatOption configures Chat, Generate and RetryLast.
	ChatOption = turn.Option
	// ChatResult is the outcome of Chat or Generate. On failure it is
	// returned along with the error, so the usage spent and the diagnoses
	// are not lost.
	ChatResult = turn.Result
	// Attempt describes one model answer of a Chat or Generate call.
	Attempt = turn.Attempt
	// AttemptDelta is one piece of an attempt's answer as the model
	// streams it (see OnAttemptDelta).
	AttemptDelta = turn.AttemptDelta
	// ContextStrategy is what the model sees of a turn's failed attempts
	// when it retries.
	ContextStrategy = turn.ContextStrategy
	// Analyzer analyses a failed attempt (see Analyze).
	Analyzer = turn.Analyzer
	// Escalation is what the escalation hook (OnEscalation) is told when
	// a round of attempts ends without an accepted answer.
	Escalation = turn.Escalation
	// Resolution is the escalation hook's answer.
	Resolution = turn.Resolution
	// EscalationFunc decides what a turn does when a round of attempts
	// fails (see OnEscalation).
	EscalationFunc = turn.EscalationFunc
	// EscalationError reports a turn stopped by a failure that retrying
	// cannot fix.
	EscalationError = turn.EscalationError
	// SkippedError reports a turn whose escalation hook answered skip.
	SkippedError = turn.SkippedError
	// AbortedError reports a turn whose escalation hook answered abort.
	AbortedError = turn.AbortedError
	// TaskIDError reports a task id that Task refuses.
	TaskIDError = turn.TaskIDError
	// UnsentError reports a turn with DeferStart that wrote nothing: its
	// first model call showed the client's setup to be wrong.
	UnsentError = turn.UnsentError
	// ToolStepsError ends a turn whose model kept calling tools past
	// MaxToolSteps (see turn.ToolStepsError).
	ToolStepsError = turn.ToolStepsError
	// ResolutionAction is what the escalation hook decides.
	ResolutionAction = record.ResolutionAction
	// EscalationReason says why a round of attempts ended, or why a turn
	// stopped at once instead of spending its remaining attempts.
	EscalationReason = record.EscalationReason
)

// Constants of a validated turn (see package turn and package record).
const (
	// DefaultRetryPrompt is the steering text committed after a failed
	// validation. {diagnosis}, {attempt} and {max_attempts} are replaced.
	DefaultRetryPrompt = turn.DefaultRetryPrompt
	// MaxRounds bounds the rounds of attempts of one validated turn.
	MaxRounds = turn.MaxRounds
	// MaxTaskIDLen is the most bytes a task id may hold.
	MaxTaskIDLen = turn.MaxTaskIDLen
	// DefaultMaxToolSteps bounds the tool steps of an attempt when
	// MaxToolSteps is not given.
	DefaultMaxToolSteps = turn.DefaultMaxToolSteps

	ContextConversation = turn.ContextConversation
	ContextFresh        = turn.ContextFresh

	ResolveRetry = record.ResolveRetry
	ResolveSkip  = record.ResolveSkip
	ResolveAbort = record.ResolveAbort
	ResolveFix   = record.ResolveFix

	EscalateMaxRetries       = record.EscalateMaxRetries
	EscalateAuth             = record.EscalateAuth
	EscalatePermission       = record.EscalatePermission
	EscalateMalformedRequest = record.EscalateMalformedRequest
	EscalateContextLength    = record.EscalateContextLength
	EscalateBlocked          = record.EscalateBlocked
	EscalateTransport        = record.EscalateTransport
)

// Errors of a validated turn.
var (
	// ErrNoClient is returned by Chat, Generate and compression without
	// summaries when no model client is configured (see WithClient and
	// UseClient). It is llm.ErrNoClient.
	ErrNoClient = llm.ErrNoClient
	// ErrSkipped matches a *SkippedError: the hook answered skip.
	ErrSkipped = turn.ErrSkipped
	// ErrAborted matches an *AbortedError: the hook answered abort.
	ErrAborted = turn.ErrAborted
)

// UseClient sends this call to c instead of the client given to Open.
func UseClient(c llm.Client) ChatOption { return turn.UseClient(c) }

// Validate adds validators; the answer is accepted when all pass.
func Validate(vs ...retry.Validator) ChatOption { return turn.Validate(vs...) }

// Tools offers tools to the model (see turn.Tools).
func Tools(ts ...tool.Tool) ChatOption { return turn.Tools(ts...) }

// Tool makes a tool of fn for Tools, its arguments' JSON Schema inferred
// from In and its Out sent to the model as JSON (see tool.New).
func Tool[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...tool.Option) tool.Tool {
	return tool.New(name, description, fn, opts...)
}

// MaxToolSteps bounds the tool steps of one attempt (default 8).
func MaxToolSteps(n int) ChatOption { return turn.MaxToolSteps(n) }

// MaxAttempts sets the total number of attempts, the first included
// (default 3).
func MaxAttempts(n int) ChatOption { return turn.MaxAttempts(n) }

// Purify says whether a success after retries resets the branch to the
// restore point and re-commits only the accepted answer (default true);
// see turn.Purify.
func Purify(on bool) ChatOption { return turn.Purify(on) }

// ProvenanceNote also commits a note such as "resolved after 2 attempts:
// invalid JSON …" after the accepted answer (see turn.ProvenanceNote).
func ProvenanceNote() ChatOption { return turn.ProvenanceNote() }

// RetryPrompt replaces DefaultRetryPrompt; it may use {diagnosis},
// {attempt} and {max_attempts}.
func RetryPrompt(template string) ChatOption { return turn.RetryPrompt(template) }

// Model names the model for this call (default: the client's).
func Model(name string) ChatOption { return turn.Model(name) }

// Temperature sets the sampling temperature.
func Temperature(t float64) ChatOption { return turn.Temperature(t) }

// OnDelta streams each piece of every attempt's answer to fn as it arrives.
func OnDelta(fn func(delta string)) ChatOption { return turn.OnDelta(fn) }

// OnAttemptDelta streams every attempt's answer to fn as it arrives, each
// piece with the number of its attempt (see turn.OnAttemptDelta).
func OnAttemptDelta(fn func(AttemptDelta)) ChatOption { return turn.OnAttemptDelta(fn) }

// OnAttempt reports each attempt after it was validated and committed.
func OnAttempt(fn func(Attempt)) ChatOption { return turn.OnAttempt(fn) }

// OnEvent reports each event of the turn to fn as it happens, outside any
// transaction; they are exactly those Tract.Events regenerates from its
// commits afterwards (see turn.OnEvent).
func OnEvent(fn func(Event)) ChatOption { return turn.OnEvent(fn) }

// OnPendingTurn has Chat call fn, before it commits the message, when the
// branch ends in an unanswered user message (see PendingTurn) that the new
// message would follow: the place to warn that the model will see two
// user messages in a row. Chat checks the branch first, so a missing
// branch or a detached HEAD is Chat's error alone, with no call.
func OnPendingTurn(fn func(*Turn)) ChatOption { return turn.OnPendingTurn(fn) }

// DeferStart has Chat commit its message (and system prompt), and
// RetryLast move the branch back to the unanswered message, only once the
// first model call has reached the model: a failure that shows the
// client's setup to be wrong (llm.APIError.Setup: no server at the base
// URL, the key refused, no endpoint, an HTML page, an unknown model)
// writes nothing and returns an *UnsentError, so a wrong setup leaves no
// message and error commit behind (see turn.DeferStart). Another writer
// that moves the branch while the model answers gets the message kept
// off the branch with the answer, a *ConflictError, as for the answer
// alone without it.
func DeferStart() ChatOption { return turn.DeferStart() }

// NewConversation has Chat start a new conversation on a new branch named
// branch, with no history, moving HEAD to it in the transaction that
// commits the message: as SwitchOrphan before Chat, but with DeferStart a
// chat that writes nothing leaves HEAD where it was. A branch of that
// name that exists when Chat starts is an error wrapping ErrBranchExists,
// before the model is called; one made while the model answers is a
// conflict (the message and answer are kept off it). It cannot be given
// to a view made by OnBranch.
func NewConversation(branch string) ChatOption { return turn.NewConversation(branch) }

// SystemPrompt commits text as a system message before the user message
// unless the current context already has that exact system message.
func SystemPrompt(text string) ChatOption { return turn.SystemPrompt(text) }

// Structured asks the model for answers constrained to schema where its
// provider supports it (see turn.Structured).
func Structured(schema *llm.Schema) ChatOption { return turn.Structured(schema) }

// Task records id, the task the turn works on, on every commit the turn
// writes (see turn.Task).
func Task(id string) ChatOption { return turn.Task(id) }

// Feedback sets how a retry is told what went wrong (default
// retry.FeedbackPlain; see turn.Feedback).
func Feedback(f retry.FeedbackFormat) ChatOption { return turn.Feedback(f) }

// RetryContextStrategy sets what a retry sees of the failed attempts
// (default ContextConversation; see turn.RetryContextStrategy).
func RetryContextStrategy(s ContextStrategy) ChatOption { return turn.RetryContextStrategy(s) }

// ParseContextStrategy returns the ContextStrategy named s
// ("conversation" or "fresh"); any other name is an error.
func ParseContextStrategy(s string) (ContextStrategy, error) { return turn.ParseContextStrategy(s) }

// Analyze runs a after each rejected answer (see turn.Analyze).
func Analyze(a Analyzer) ChatOption { return turn.Analyze(a) }

// ModelAnalyzer returns an Analyzer that asks client (with model, or the
// client's default) in one call per failure (see turn.ModelAnalyzer).
func ModelAnalyzer(client llm.Client, model string) Analyzer {
	return turn.ModelAnalyzer(client, model)
}

// OnEscalation calls fn when a round of attempts ends without an accepted
// answer (see turn.OnEscalation).
func OnEscalation(fn EscalationFunc) ChatOption { return turn.OnEscalation(fn) }

// ParseResolution reads a person's answer to an escalation: "retry",
// "skip", "abort" or "fix: INSTRUCTION".
func ParseResolution(s string) (Resolution, error) { return turn.ParseResolution(s) }

// ResolutionOf builds an answer to an escalation from an action and,
// for fix, its instruction, given apart (turn.ResolutionOf).
func ResolutionOf(action, instruction string) (Resolution, error) {
	return turn.ResolutionOf(action, instruction)
}

// ResolutionPartError is ResolutionOf's error.
type ResolutionPartError = turn.ResolutionPartError

// Judge returns a retry.JudgeFunc that asks client (with model, or the
// client's default) for the "llm:" validator's verdict.
func Judge(client llm.Client, model string) retry.JudgeFunc { return turn.Judge(client, model) }

// Chat commits text as a user message and generates the assistant's answer
// (see "Validated generation" in docs/tract.md). With validators, each
// answer is committed and checked; a rejected answer is followed by a
// steering commit and another attempt; a success after retries is purified
// (see Purify). Exhaustion returns an error wrapping *retry.ExhaustedError
// whose LastResult is the last answer's text
// (retry.LastResultOf[string](err) reads it typed; the ChatResult returned
// with the error lists every attempt); a model failure after the client's
// own retries commits an error commit and returns an error wrapping the
// client's typed error (for example *llm.ServerError). An answer over the
// message size limit (see Limits) is such a failure too, wrapping a
// *TooLargeError: it is not an attempt, since it cannot be committed. A
// validator that cannot run on an answer (an llm: judge whose reply is no
// verdict, a *retry.JudgeReplyError) stops the turn with its error; with
// purify the unjudged answer leaves the branch and an error commit records
// why, as after a failed model call, so RetryLast answers the message
// again.
//
// Each failed attempt (and the error commit of a failed model call)
// records a FailureRecord. A failure that retrying cannot fix stops the
// turn at once with an *EscalationError: the server refused the key (401,
// 403), the request (400) or its length, or a validator reported the
// answer blocked (the branch then ends as after exhaustion). Task records
// a task id on every commit of the turn. OnEscalation asks a hook what to
// do when attempts run out, such a failure stops the turn or the model
// server stays unavailable: another round (retry, or fix with an
// instruction), skip or abort; without a hook the turn ends there.
func (t *Tract) Chat(ctx context.Context, text string, opts ...ChatOption) (*ChatResult, error) {
	cfg, err := t.turnConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := cfg.NewConversation()
	if name != "" && t.branch != "" {
		return nil, fmt.Errorf("chat: a new conversation moves HEAD, which a view of branch %s does not", t.Branch())
	}
	if fn := cfg.OnPending(); fn != nil && name == "" {
		if err := t.pendingBefore(ctx, fn); err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
	}
	if cfg.DeferStart() {
		return t.chatDeferred(ctx, text, cfg)
	}
	var user Hash
	err = t.update(ctx, func(tx store.Tx) error {
		var cur head
		var err error
		if name != "" {
			if err := checkConversation(tx, name); err != nil {
				return err
			}
			cur, err = openConversation(tx, name)
		} else {
			cur, err = t.requireBranch(tx)
		}
		if err != nil {
			return err
		}
		parent := cur.Hash
		if cfg.System() != "" {
			if parent, err = t.ensureSystem(tx, parent, cfg); err != nil {
				return err
			}
		}
		meta, err := metaConfig(record.TaskMeta(cfg.Task()))
		if err != nil {
			return err
		}
		user, err = t.commitWith(tx, parent, KindMessage, RoleUser, text, meta)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	res, err := t.runTurn(ctx, user, cfg)
	if res != nil {
		res.User = user
	}
	return res, err
}

// ChatAs is Chat for an answer of type T (see package typed): the JSON
// Schema inferred from T, or the one given with Structured, is sent as
// structured output, and an answer is accepted once it satisfies the
// schema, decodes into T and passes T's Validate() error method if T (or
// *T) has one; a rejected answer's steering names the path and what was
// expected. It returns the accepted value; the branch keeps the model's
// JSON as it wrote it. When the turn fails, it returns the zero T with
// Chat's result and error.
func ChatAs[T any](ctx context.Context, t *Tract, msg string, opts ...ChatOption) (T, *ChatResult, error) {
	return typed.Chat[T](ctx, t.Chat, msg, opts...)
}

// chatDeferred is Chat with DeferStart: the message (and the system
// prompt) is sent with the first model call and committed once the call
// has reached the model, in one transaction that moves the branch from
// the tip the context was compiled at; when another writer moved it
// meanwhile, the message is kept off the branch (see turn.Start). The
// text is checked before the call, so that a message the repository
// would refuse is never sent.
func (t *Tract) chatDeferred(ctx context.Context, text string, cfg *turn.Config) (*ChatResult, error) {
	meta, err := metaConfig(record.TaskMeta(cfg.Task()))
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	system := cfg.System()
	name := cfg.NewConversation()
	var base Hash
	var msgs []Message
	err = t.view(ctx, func(tx store.Tx) error {
		if name != "" {
			return checkConversation(tx, name) // no history: base and msgs stay empty
		}
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		base = cur.Hash
		if !base.IsZero() {
			if msgs, err = t.cache.Compile(ctx, tx, base, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	if system != "" && slices.ContainsFunc(msgs, func(m Message) bool { return m.Role == string(RoleSystem) && m.Content == system }) {
		system = "" // the context has it
	}
	if system != "" {
		if err := t.validateCommit(KindMessage, RoleSystem, system); err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
		msgs = append(msgs, Message{Role: string(RoleSystem), Content: system})
	}
	if err := t.validateCommit(KindMessage, RoleUser, text); err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	msgs = append(msgs, Message{Role: string(RoleUser), Content: text})
	write := func(ctx context.Context) (Hash, error) {
		var user Hash
		err := t.updateAdvancing(ctx, func(tx store.Tx) (*ConflictError, error) {
			var cur head
			var err error
			if name != "" {
				cur, err = openConversation(tx, name)
			} else {
				cur, err = t.requireBranch(tx)
			}
			if err != nil {
				return nil, err
			}
			moved := cur.Hash != base
			commit := t.commitWith
			if moved {
				commit = t.putCommit // kept off the branch: stranded below
			}
			parent := base
			if system != "" {
				if parent, err = commit(tx, parent, KindMessage, RoleSystem, system, meta); err != nil {
					return nil, err
				}
			}
			if user, err = commit(tx, parent, KindMessage, RoleUser, text, meta); err != nil || !moved {
				return nil, err
			}
			return t.strand(tx, cur, base, user, "message")
		})
		return user, err
	}
	res, err := turn.RunDeferred(ctx, turnRepo{t}, turn.Start{Messages: msgs, Write: write}, cfg)
	if err != nil {
		err = fmt.Errorf("chat: %w", err)
	}
	return res, err
}

// checkConversation refuses name for a new conversation (NewConversation):
// a branch name that is not valid, or a branch that exists.
func checkConversation(tx store.Tx, name string) error {
	if err := refs.ValidateBranchName(name); err != nil {
		return err
	}
	switch _, err := tx.Ref(refs.BranchRef(name)); {
	case err == nil:
		return fmt.Errorf("%w: %s", ErrBranchExists, name)
	case !isNotFound(err):
		return err
	}
	return nil
}

// openConversation moves HEAD to the new, unborn branch name and returns
// its position; when a branch of that name exists (made since
// checkConversation), it moves nothing and returns that branch's
// position, on which the caller keeps its commits off the branch.
func openConversation(tx store.Tx, name string) (head, error) {
	full := refs.BranchRef(name)
	r, err := tx.Ref(full)
	switch {
	case err == nil:
		return head{Branch: full, Hash: r.Hash}, nil
	case !isNotFound(err):
		return head{}, err
	}
	return head{Branch: full}, tx.SetRef(refs.Ref{Name: refs.HEAD, Target: full})
}

// pendingBefore calls fn with the branch's pending turn, if it has one,
// after checking that there is a branch to commit on.
func (t *Tract) pendingBefore(ctx context.Context, fn func(*Turn)) error {
	if err := t.view(ctx, func(tx store.Tx) error { _, err := t.requireBranch(tx); return err }); err != nil {
		return err
	}
	turn, err := t.PendingTurn(ctx)
	if err != nil {
		return err
	}
	if turn != nil {
		fn(turn)
	}
	return nil
}

// Generate answers the current context without a new user message, with the
// same validation, retries and purify as Chat.
func (t *Tract) Generate(ctx context.Context, opts ...ChatOption) (*ChatResult, error) {
	cfg, err := t.turnConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var head Hash
	err = t.update(ctx, func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		if cur.Hash.IsZero() {
			return fmt.Errorf("%w: commit a message first", ErrUnbornBranch)
		}
		head = cur.Hash
		if cfg.System() != "" {
			if head, err = t.ensureSystem(tx, head, cfg); err != nil {
				return err
			}
		}
		c, err := store.CountersOf(ctx, tx, head, false)
		if err != nil {
			return err
		}
		if c.Messages == 0 {
			return fmt.Errorf("%w: the branch holds only notes, errors or steering, which are never sent", ErrEmptyContext)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	return t.runTurn(ctx, head, cfg)
}

// turnConfig is the configuration of a turn on t with opts.
func (t *Tract) turnConfig(opts []ChatOption) (*turn.Config, error) {
	if t.isClosed() {
		return nil, fmt.Errorf("chat: %w", ErrClosed)
	}
	cfg, err := turn.NewConfig(t.client, opts...)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return cfg, nil
}

// runTurn runs a validated turn on t from restore (see turn.Run).
func (t *Tract) runTurn(ctx context.Context, restore Hash, cfg *turn.Config) (*ChatResult, error) {
	res, err := turn.Run(ctx, turnRepo{t}, restore, cfg)
	if err != nil {
		err = fmt.Errorf("chat: %w", err)
	}
	return res, err
}

// ensureSystem commits the system prompt of cfg on parent unless the
// compiled context already contains it.
func (t *Tract) ensureSystem(tx store.Tx, parent Hash, cfg *turn.Config) (Hash, error) {
	system := cfg.System()
	if !parent.IsZero() {
		msgs, err := t.cache.Compile(context.Background(), tx, parent, false)
		if err != nil {
			return Hash{}, err
		}
		for _, m := range msgs {
			if m.Role == string(RoleSystem) && m.Content == system {
				return parent, nil
			}
		}
	}
	meta, err := metaConfig(record.TaskMeta(cfg.Task()))
	if err != nil {
		return Hash{}, err
	}
	return t.commitWith(tx, parent, KindMessage, RoleSystem, system, meta)
}
