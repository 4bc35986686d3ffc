package turn

import (
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

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

// Analyzer analyses a failed attempt: given its answer and failure record,
// it guesses the failure's root cause and suggests a fix. See Analyze.
type Analyzer func(ctx context.Context, answer string, failure record.Failure) (retry.Analysis, error)

// retryFailure is the part of r a retry context shows.
func retryFailure(r record.Failure) retry.Failure {
	return retry.Failure{Attempt: r.Attempt, Timestamp: r.Timestamp, Type: r.Type,
		Summary: r.Error, Details: r.Details, SuggestedFix: r.SuggestedFix}
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
func (g *generation) analyse(ctx context.Context, a answer, r *record.Failure) *record.Failure {
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
// restore point (see Repo.Restart) and returns the feedback's commit.
func (g *generation) restartFresh(ctx context.Context, p Pending) (dag.Hash, error) {
	msg := fmt.Sprintf("retry: attempt %d from the restore point %s", g.attempt+1, g.restore.Short())
	feedback, tip, err := g.r.Restart(ctx, g.tip, g.restore, p, msg)
	if err == nil {
		g.tip = tip
		g.record(ctx, feedback)
	}
	return feedback, err
}

// freshRestore is the restore point that the commits of a turn with the
// fresh retry context record (MetaRestore), nil with the conversation
// one: a fresh retry's chain no longer leads back to it. A turn with
// tools records it too: its chains lead back to it through tool steps,
// which are no steps of its events (see events.Replay).
func (g *generation) freshRestore() *dag.Hash {
	if g.cfg.strategy != ContextFresh && g.cfg.toolSet == nil {
		return nil
	}
	r := g.restore
	return &r
}
