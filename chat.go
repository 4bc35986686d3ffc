package tract

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// DefaultRetryPrompt is the steering text committed after a failed
// validation. {diagnosis}, {attempt} and {max_attempts} are replaced.
const DefaultRetryPrompt = "Your previous response failed validation: {diagnosis}\nPlease try again, addressing the issue above."

// ErrNoClient is returned by Chat, Generate and compression without
// summaries when no model client is configured (see WithClient and
// UseClient). It is llm.ErrNoClient.
var ErrNoClient = llm.ErrNoClient

// ChatOption configures Chat and Generate.
type ChatOption func(*chatConfig)

type chatConfig struct {
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
	// onEscalation is the OnEscalation hook.
	onEscalation EscalationFunc
	// intervention is the user's high-priority guidance for the current
	// round (a fix answer to an escalation), "" when none: the steering
	// of the round renders it first (in xml feedback, as a
	// <user_intervention> block ahead of the failures).
	intervention string
	// events is the OnEvent callback.
	events func(Event)
	// onAttemptDelta is the OnAttemptDelta callback.
	onAttemptDelta func(AttemptDelta)
	// onPending is the OnPendingTurn callback.
	onPending func(*Turn)
}

// UseClient sends this call to c instead of the client given to Open.
func UseClient(c llm.Client) ChatOption { return func(cfg *chatConfig) { cfg.client = c } }

// Validate adds validators; the answer is accepted when all pass.
func Validate(vs ...retry.Validator) ChatOption {
	return func(cfg *chatConfig) { cfg.validators = append(cfg.validators, vs...) }
}

// MaxAttempts sets the total number of attempts, the first included
// (default 3).
func MaxAttempts(n int) ChatOption { return func(cfg *chatConfig) { cfg.maxAttempts = n } }

// Purify says whether a success after retries resets the branch to the
// restore point and re-commits only the accepted answer (default true), and
// whether exhaustion returns the branch to the restore point with an error
// commit. Without it the failed attempts and steering stay on the branch.
func Purify(on bool) ChatOption { return func(cfg *chatConfig) { cfg.purify = on } }

// ProvenanceNote also commits a note such as "resolved after 2 attempts:
// invalid JSON …" after the accepted answer. The provenance itself (attempts
// and diagnoses) is always recorded in the accepted commit's metadata, for a
// first-try success too.
func ProvenanceNote() ChatOption { return func(cfg *chatConfig) { cfg.note = true } }

// RetryPrompt replaces DefaultRetryPrompt; it may use {diagnosis},
// {attempt} and {max_attempts}.
func RetryPrompt(template string) ChatOption {
	return func(cfg *chatConfig) { cfg.retryPrompt = template }
}

// Model names the model for this call (default: the client's).
func Model(name string) ChatOption { return func(cfg *chatConfig) { cfg.model = name } }

// Temperature sets the sampling temperature.
func Temperature(t float64) ChatOption { return func(cfg *chatConfig) { cfg.temperature = &t } }

// OnDelta streams each piece of every attempt's answer to fn as it arrives.
func OnDelta(fn func(delta string)) ChatOption { return func(cfg *chatConfig) { cfg.onDelta = fn } }

// OnAttempt reports each attempt after it was validated and committed.
func OnAttempt(fn func(Attempt)) ChatOption { return func(cfg *chatConfig) { cfg.onAttempt = fn } }

// OnPendingTurn has Chat call fn, before it commits the message, when the
// branch ends in an unanswered user message (see PendingTurn) that the new
// message would follow: the place to warn that the model will see two
// user messages in a row. Chat checks the branch first, so a missing
// branch or a detached HEAD is Chat's error alone, with no call.
func OnPendingTurn(fn func(*Turn)) ChatOption { return func(cfg *chatConfig) { cfg.onPending = fn } }

// SystemPrompt commits text as a system message before the user message
// unless the current context already has that exact system message.
func SystemPrompt(text string) ChatOption { return func(cfg *chatConfig) { cfg.system = text } }

// Attempt describes one model answer of a Chat or Generate call.
type Attempt struct {
	// Number is the 1-based attempt number.
	Number int `json:"number"`
	// Max is the total number of attempts allowed.
	Max int `json:"max"`
	// OK says whether every validator passed.
	OK bool `json:"ok"`
	// Text is the model's answer.
	Text string `json:"text"`
	// Diagnosis is the validators' reason for rejecting the answer.
	Diagnosis string `json:"diagnosis,omitempty"`
	// Commit is the assistant commit that recorded the answer on the
	// attempts chain. When purify re-commits an accepted answer after
	// retries, ChatResult.Commit names the clean copy on the branch.
	Commit Hash `json:"commit"`
	// Usage is this attempt's token usage.
	Usage llm.Usage `json:"usage"`
}

// ChatResult is the outcome of Chat or Generate. On failure it is returned
// along with the error, so the usage spent and the diagnoses are not lost;
// on a *ConflictError that kept the (accepted) answer off the branch, Text
// and Commit are that answer.
type ChatResult struct {
	// Text is the accepted answer ("" on failure); with tool calls, its
	// readable text (see llm.Message.Text).
	Text string `json:"answer"`
	// ToolCalls are the accepted answer's function calls, kept in its
	// commit's shape (see MetaShape); nil when it makes none.
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	// Commit is the accepted assistant commit on the branch (after purify,
	// the clean re-commit); on failure, the error commit if one was made.
	Commit Hash `json:"commit"`
	// User is the user message's commit (zero for Generate).
	User Hash `json:"user,omitzero"`
	// Attempts is the number of model answers.
	Attempts int `json:"attempts"`
	// Diagnoses are the failed attempts' diagnoses, in order.
	Diagnoses []string `json:"diagnoses"`
	// Usage is summed over every attempt.
	Usage llm.Usage `json:"usage"`
	// Model is the model that answered last.
	Model string `json:"model,omitempty"`
	// Purified is true when failed attempts were moved off the branch.
	Purified bool `json:"purified"`
	// History is every attempt, in order, with its answer, verdict, usage
	// and commit: what an inspector of the turn needs without Show. On
	// exhaustion its last entry holds the last answer.
	History []Attempt `json:"history"`
	// Steering are the steering commits the turn wrote after its failed
	// attempts, in order (empty when the first attempt passed).
	Steering []Hash `json:"steering"`
}

// Chat commits text as a user message and generates the assistant's answer
// (see Validated generation in the package documentation). With validators, each answer is committed and checked; a
// rejected answer is followed by a steering commit and another attempt; a
// success after retries is purified (see Purify). Exhaustion returns an
// error wrapping *retry.ExhaustedError whose LastResult is the last answer's
// text (retry.LastResultOf[string](err) reads it typed; the ChatResult
// returned with the error lists every attempt); a model failure after the client's
// own retries commits an error commit and returns an error wrapping the
// client's typed error (for example *llm.ServerError). An answer over the
// message size limit (see Limits) is such a failure too, wrapping a
// *TooLargeError: it is not an attempt, since it cannot be committed. A
// validator that cannot run on an answer (an llm: judge whose reply is
// no verdict, a *retry.JudgeReplyError) stops the turn with its error;
// with purify the unjudged answer leaves the branch and an error commit
// records why, as after a failed model call, so RetryLast answers the
// message again.
//
// Each failed attempt (and the error commit of a failed model call)
// records a FailureRecord. A failure that retrying cannot fix stops the
// turn at once with an *EscalationError: the server refused the key (401,
// 403), the request (400) or its length, or a validator reported the
// answer blocked (the branch then ends as after exhaustion). Task records
// a task id on every commit of the turn. OnEscalation asks a hook what to
// do when attempts run out or such a failure stops the turn: another
// round (retry, or fix with an instruction), skip or abort.
func (t *Tract) Chat(ctx context.Context, text string, opts ...ChatOption) (*ChatResult, error) {
	cfg, err := t.chatConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.onPending != nil {
		if err := t.pendingBefore(ctx, cfg.onPending); err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
	}
	var user Hash
	err = t.update(func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		parent := cur.Hash
		if cfg.system != "" {
			if parent, err = t.ensureSystem(tx, parent, cfg); err != nil {
				return err
			}
		}
		meta, err := metaConfig(record.TaskMeta(cfg.task))
		if err != nil {
			return err
		}
		user, err = t.commitWith(tx, parent, KindMessage, RoleUser, text, meta)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	res, err := t.generate(ctx, user, cfg)
	if res != nil {
		res.User = user
	}
	return res, err
}

// pendingBefore calls fn with the branch's pending turn, if it has one,
// after checking that there is a branch to commit on.
func (t *Tract) pendingBefore(ctx context.Context, fn func(*Turn)) error {
	if err := t.view(func(tx store.Tx) error { _, err := t.requireBranch(tx); return err }); err != nil {
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
	cfg, err := t.chatConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var head Hash
	err = t.update(func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		if cur.Hash.IsZero() {
			return fmt.Errorf("%w: commit a message first", ErrUnbornBranch)
		}
		head = cur.Hash
		if cfg.system != "" {
			if head, err = t.ensureSystem(tx, head, cfg); err != nil {
				return err
			}
		}
		c, err := countersOf(ctx, tx, head, false)
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
	return t.generate(ctx, head, cfg)
}

func (t *Tract) chatConfig(opts []ChatOption) (*chatConfig, error) {
	cfg := &chatConfig{client: t.client, purify: true, retryPrompt: DefaultRetryPrompt}
	for _, o := range opts {
		o(cfg)
	}
	switch {
	case t.isClosed():
		return nil, fmt.Errorf("chat: %w", ErrClosed)
	case cfg.client == nil:
		return nil, fmt.Errorf("chat: %w: pass tract.WithClient to Open or tract.UseClient to the call", ErrNoClient)
	case cfg.maxAttempts < 0:
		return nil, fmt.Errorf("chat: max attempts is %d; it must be 1 or more", cfg.maxAttempts)
	case cfg.maxAttempts == 0:
		cfg.maxAttempts = retry.DefaultMaxAttempts
	}
	if cfg.taskSet {
		if err := checkTaskID(cfg.task); err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
	}
	if err := cfg.checkFeedback(); err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return cfg, nil
}

// ensureSystem commits the system prompt of cfg on parent unless the
// compiled context already contains it.
func (t *Tract) ensureSystem(tx store.Tx, parent Hash, cfg *chatConfig) (Hash, error) {
	system := cfg.system
	if !parent.IsZero() {
		msgs, err := t.cache.compile(context.Background(), tx, parent, false)
		if err != nil {
			return Hash{}, err
		}
		for _, m := range msgs {
			if m.Role == string(RoleSystem) && m.Content == system {
				return parent, nil
			}
		}
	}
	meta, err := metaConfig(record.TaskMeta(cfg.task))
	if err != nil {
		return Hash{}, err
	}
	return t.commitWith(tx, parent, KindMessage, RoleSystem, system, meta)
}

// answer is one attempt's model output.
type answer struct {
	text       string // the readable text: the content, or with calls, llm.Message.Text
	calls      []llm.ToolCall
	shape      []byte // the commit's shape, with calls (see ImportMessage.stored)
	model      string
	usage      llm.Usage
	structured *StructuredRecord // what became of the turn's schema; nil without one
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

// rewind soft-resets the branch from tip to restore (reflog action purify,
// ORIG_HEAD at tip) and, unless then is nil, commits then on restore, in
// one transaction. When the branch no longer stands at tip it moves
// nothing: then is kept off the branch and the error is a *ConflictError.
func (t *Tract) rewind(tip, restore Hash, msg string, then *pendingCommit) (Hash, error) {
	var h Hash
	err := t.updateAdvancing(func(tx store.Tx) (*ConflictError, error) {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		var cfg *commitConfig
		if then != nil {
			if cfg, err = metaConfig(then.meta); err != nil {
				return nil, err
			}
		}
		if cur.Hash != tip {
			if then == nil {
				return &ConflictError{Ref: cur.ref(), Expected: tip, Actual: cur.Hash}, nil
			}
			if h, err = t.putCommit(tx, restore, then.kind, then.role, then.text, cfg); err != nil {
				return nil, err
			}
			conflict, err := t.strand(tx, cur, tip, h, then.what)
			return conflict, err
		}
		if err := t.move(tx, tip, restore, refs.ActionPurify, msg); err != nil {
			return nil, err
		}
		if err := setOrigHead(tx, tip); err != nil {
			return nil, err
		}
		h = restore
		if then != nil {
			h, err = t.commitWith(tx, restore, then.kind, then.role, then.text, cfg)
		}
		return nil, err
	})
	return h, err
}

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
func provenance(attempts int, restore Hash, res *ChatResult) Provenance {
	return Provenance{Attempts: attempts, Diagnoses: append([]string{}, res.Diagnoses...),
		Restore: restore, Usage: res.Usage, Model: res.Model}
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

// Judge returns a retry.JudgeFunc that asks client (with model, or the
// client's default) for the "llm:" validator's verdict.
func Judge(client llm.Client, model string) retry.JudgeFunc {
	return func(ctx context.Context, prompt string) (string, error) {
		resp, err := client.Complete(ctx, llm.Request{Model: model, Messages: []llm.Message{{Role: string(RoleUser), Content: prompt}}})
		if err != nil {
			return "", err
		}
		return resp.Content, nil
	}
}
