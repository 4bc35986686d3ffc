package tract

import (
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// Feedback sets how a retry is told what went wrong (default
// retry.FeedbackPlain: RetryPrompt, quoting the last diagnosis).
// retry.FeedbackXML sends a <retry_context> block (retry.RetryContext.XML)
// that lists every earlier failure of the turn with its failure record,
// the analyzer's root-cause guesses (see Analyze) and an instruction that
// invites the model to declare the task blocked: from then on, an answer
// whose first line starts with retry.BlockedMarker ("BLOCKED: reason")
// ends the turn at once with an *EscalationError of reason
// EscalateBlocked, without spending the attempts left. An unknown format
// fails the call before anything is written.
func Feedback(f retry.FeedbackFormat) ChatOption { return func(cfg *chatConfig) { cfg.feedback = f } }

// ContextStrategy is what the model sees of a turn's failed attempts when
// it retries.
type ContextStrategy string

// The context strategies.
const (
	// ContextConversation (the default): each failed answer and the
	// feedback after it stay in the context of the next attempt, as a
	// conversation.
	ContextConversation ContextStrategy = "conversation"
	// ContextFresh: each retry starts again from the restore point, with
	// one feedback commit (kind steering, role user) placed before the
	// task message, so the model sees the failures summarised instead of
	// its own bad answers.
	ContextFresh ContextStrategy = "fresh"
)

// ParseContextStrategy returns the ContextStrategy named s
// ("conversation" or "fresh"); any other name is an error.
func ParseContextStrategy(s string) (ContextStrategy, error) {
	switch c := ContextStrategy(s); c {
	case ContextConversation, ContextFresh:
		return c, nil
	}
	return "", fmt.Errorf("unknown retry context strategy %q: use conversation or fresh", s)
}

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
func RetryContextStrategy(s ContextStrategy) ChatOption {
	return func(cfg *chatConfig) { cfg.strategy = s }
}

// Analyzer analyses a failed attempt: given its answer and failure record,
// it guesses the failure's root cause and suggests a fix. See Analyze.
type Analyzer func(ctx context.Context, answer string, failure FailureRecord) (retry.Analysis, error)

// Analyze runs a after each rejected answer (a blocked one aside), before
// the attempt is committed: its guess is recorded in the failure record as
// RootCauseGuess, and its fix as SuggestedFix unless a validator gave one.
// An analyzer that fails does not stop the turn: its error is recorded as
// AnalysisError. With retry.FeedbackXML the guesses of earlier attempts are
// sent as <accumulated_learnings>. ModelAnalyzer asks a model.
func Analyze(a Analyzer) ChatOption { return func(cfg *chatConfig) { cfg.analyzer = a } }

// ModelAnalyzer returns an Analyzer that asks client (with model, or the
// client's default) in one call per failure, with retry.AnalysisPrompt,
// and reads its reply with retry.ParseAnalysis. The call's token usage is
// not counted in the turn's.
func ModelAnalyzer(client llm.Client, model string) Analyzer {
	return func(ctx context.Context, answer string, f FailureRecord) (retry.Analysis, error) {
		prompt := retry.AnalysisPrompt(retryFailure(f), answer)
		resp, err := client.Complete(ctx, llm.Request{Model: model, Messages: []llm.Message{{Role: string(RoleUser), Content: prompt}}})
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

// retryFailure is the part of r a retry context shows.
func retryFailure(r FailureRecord) retry.Failure {
	return retry.Failure{Attempt: r.Attempt, Timestamp: r.Timestamp, Type: r.Type,
		Summary: r.Error, Details: r.Details, SuggestedFix: r.SuggestedFix}
}

// checkFeedback refuses an unknown feedback format or context strategy,
// and sets the defaults.
func (cfg *chatConfig) checkFeedback() error {
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

// feedback is the text that tells the next attempt what went wrong with
// the last, whose diagnosis is given.
func (g *generation) feedback(diagnosis string) string {
	if g.cfg.feedback == retry.FeedbackXML {
		return g.retryContext().XML()
	}
	text := expandRetryPrompt(g.cfg.retryPrompt, diagnosis, g.attempt, g.maxAttempt())
	if g.cfg.intervention != "" {
		text = interventionText(g.cfg.intervention) + "\n\n" + text
	}
	return text
}

// retryContext is the retry context of the next attempt: every failure
// so far and the distinct root-cause guesses among them.
func (g *generation) retryContext() retry.RetryContext {
	rc := retry.RetryContext{Attempt: g.attempt + 1, MaxAttempts: g.maxAttempt(), Intervention: g.cfg.intervention}
	for _, f := range g.failures {
		rc.Failures = append(rc.Failures, retryFailure(f))
		if f.RootCauseGuess != "" && !slices.Contains(rc.Learnings, f.RootCauseGuess) {
			rc.Learnings = append(rc.Learnings, f.RootCauseGuess)
		}
	}
	return rc
}

// declaredBlocked is the verdict on an answer that declares the task
// blocked, when the turn has invited that (xml feedback, from the first
// retry on); ok is false otherwise.
func (g *generation) declaredBlocked(a answer) (vd retry.Verdict, ok bool) {
	if g.cfg.feedback != retry.FeedbackXML || g.attempt < 2 {
		return retry.Verdict{}, false
	}
	reason, ok := retry.DeclaredBlocked(a.text)
	if !ok {
		return retry.Verdict{}, false
	}
	return retry.Verdict{Blocked: reason, Type: retry.FailureExecution,
		Diagnosis: "the model declared the task blocked: " + reason}, true
}

// analyse runs the analyzer, if any, on a rejected answer and records what
// it found in r.
func (g *generation) analyse(ctx context.Context, a answer, r *FailureRecord) *FailureRecord {
	if g.cfg.analyzer == nil || r.Escalation != "" {
		return r
	}
	an, err := g.cfg.analyzer(ctx, a.text, *r)
	if err != nil {
		r.AnalysisError = err.Error()
		return r
	}
	r.RootCauseGuess = an.RootCauseGuess
	if r.SuggestedFix == "" {
		r.SuggestedFix = an.SuggestedFix
	}
	return r
}

// restartFresh begins the next attempt of a ContextFresh turn from the
// restore point: it commits the feedback p on the task message's parent
// and a copy of the task message on it (or, when the restore point is no
// user message, p on the restore point), and moves the branch there from
// the turn's tip, in one transaction. When the branch no longer stands at
// the tip, the new chain is kept off it and the error is a
// *ConflictError. It returns the feedback's commit.
func (g *generation) restartFresh(p pendingCommit) (Hash, error) {
	cfg, err := metaConfig(p.meta)
	if err != nil {
		return Hash{}, err
	}
	var h, feedback Hash
	err = g.t.updateAdvancing(func(tx store.Tx) (*ConflictError, error) {
		cur, err := g.t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		task, err := tx.Commit(g.restore)
		if err != nil {
			return nil, fmt.Errorf("read restore point %s: %w", g.restore.Short(), err)
		}
		isTask := task.Kind == KindMessage && task.Role == RoleUser
		base := g.restore
		if isTask {
			base = Hash{}
			if len(task.Parents) > 0 {
				base = task.Parents[0]
			}
		}
		if h, err = g.t.putCommit(tx, base, p.kind, p.role, p.text, cfg); err != nil {
			return nil, err
		}
		feedback = h
		if isTask {
			c := *task
			c.Parents, c.Time = []Hash{h}, g.t.now()
			if h, err = tx.PutCommit(&c); err != nil {
				return nil, err
			}
		}
		msg := fmt.Sprintf("retry: attempt %d from the restore point %s", g.attempt+1, g.restore.Short())
		return g.t.land(tx, cur, g.tip, h, refs.ActionRetry, msg, p.what)
	})
	if err == nil {
		g.tip = h
		g.record(feedback)
	}
	return feedback, err
}

// freshRestore is the restore point that the commits of a turn with the
// fresh retry context record (MetaRestore), nil with the conversation
// one: a fresh retry's chain no longer leads back to it.
func (g *generation) freshRestore() *Hash {
	if g.cfg.strategy != ContextFresh {
		return nil
	}
	r := g.restore
	return &r
}
