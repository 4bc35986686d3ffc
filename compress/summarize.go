package compress

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// DefaultTolerance is the share by which a summary may exceed
// Config.TargetTokens when Config.Tolerance is zero: 20%.
const DefaultTolerance = 0.2

// Config says how Summarize produces and checks a summary.
type Config struct {
	// Client answers the summarization requests. It is required unless
	// Content is set.
	Client llm.Client
	// Model names the model; empty means the client's default.
	Model string
	// Temperature, when non-nil, is sent as the sampling temperature.
	Temperature *float64
	// Schema, when non-nil, is sent with every request for constrained
	// output (see llm.Schema); Validator still checks the summary.
	Schema *llm.Schema

	// TargetTokens is the size the summary should have, in tokens as
	// Tokenizer counts them; the prompt asks for it and a summary over it
	// by more than Tolerance fails. Zero means no target.
	TargetTokens int
	// Tolerance is the share by which a summary may exceed TargetTokens:
	// 0.2 allows 20% more. Zero means DefaultTolerance; a negative value
	// means none, making TargetTokens a hard maximum.
	Tolerance float64
	// Instructions are added to the prompt (for example "keep all file
	// names"). Empty means none.
	Instructions string
	// Prompt builds the request; nil means DefaultPrompt.
	Prompt PromptFunc

	// Content, when not empty, is the summary: no model is called and
	// Client may be nil, but the built-in checks and Validator still run.
	// Asking again cannot change a given text, so there is exactly one
	// attempt, whatever MaxAttempts says: a rejected Content gives a
	// *retry.ExhaustedError with Attempts 1.
	Content string

	// Validator checks each summary after the built-in checks pass (see
	// Summarize); nil means none. retry.ParseSpecs builds one from the
	// spec strings of the command line.
	Validator retry.Validator
	// MaxAttempts is the number of model calls allowed, the first
	// included; zero means retry.DefaultMaxAttempts (3).
	MaxAttempts int
	// Tokenizer counts tokens; nil means Estimator.
	Tokenizer Tokenizer

	// OnAttempt, when set, reports each attempt (from 1) once it is
	// validated; diagnosis is empty when ok is true.
	OnAttempt func(attempt int, ok bool, diagnosis string)
}

// Summary is an accepted summary of a group.
type Summary struct {
	// Text is the summary, with surrounding white space removed.
	Text string
	// Sources lists the hashes of the summarized items, in order.
	Sources []dag.Hash
	// TokensBefore and TokensAfter are the estimated context sizes of the
	// items and of the summary, each message counted with ItemsTokens and
	// MessageTokens (so Config.Tokenizer plus MessageOverhead). They are
	// estimates unless Config.Tokenizer is exact.
	TokensBefore, TokensAfter int
	// Attempts is the number of attempts made, the accepted one included.
	Attempts int
	// History holds the diagnoses of the rejected attempts, oldest first;
	// empty, not nil, after a first-try success.
	History []string
	// Usage is the model's token usage, summed over all attempts; zero
	// for caller-supplied Content.
	Usage llm.Usage
	// Model is the model that wrote the accepted summary, as the server
	// named it; empty for caller-supplied Content.
	Model string
}

// Summarize produces a summary of group with a model (or takes
// cfg.Content) and validates it, asking again with steering when it is
// rejected, through retry.WithSteering.
//
// Each summary is checked by these built-in checks first, then by
// cfg.Validator when the built-in checks pass:
//
//   - it is not empty ("summary is empty");
//   - it is shorter than its source, by MessageTokens against ItemsTokens
//     ("summary is 120 tokens (estimated), not shorter than its source of
//     100 tokens");
//   - with a target, it is at most TargetTokens*(1+Tolerance) tokens,
//     rounded down ("summary is 130 tokens (estimated), over the target of
//     100 tokens by more than 20% (at most 120 allowed)").
//
// A failed size check and a failed target check are both reported, one
// line each. When a summary is rejected, the next request repeats the
// previous one with the rejected summary appended as an assistant message
// and a user message "previous summary was rejected: {diagnosis}" asking
// for a new one; every earlier rejection stays in the request. None of this
// leaves memory: nothing is committed.
//
// The errors of a run are wrapped with the number of messages summarized
// and, where one attempt failed, its number; errors.Is and errors.As see
// through them:
// a *retry.ExhaustedError when every attempt was rejected; the model
// client's error when a call fails (it ends the run at once: the client
// retries transient failures itself); the validator's error when it cannot
// run; the context's error when ctx is done before an attempt. Before any
// run, Summarize returns ErrNoClient when neither cfg.Client nor
// cfg.Content is set, and an error for a kept or empty group and for a
// negative TargetTokens or MaxAttempts.
func Summarize(ctx context.Context, group Group, cfg Config) (*Summary, error) {
	switch {
	case group.Keep:
		return nil, errors.New("compress: cannot summarize a kept group")
	case len(group.Items) == 0:
		return nil, errors.New("compress: cannot summarize an empty group")
	case cfg.TargetTokens < 0:
		return nil, fmt.Errorf("compress: TargetTokens is %d, must not be negative", cfg.TargetTokens)
	case cfg.MaxAttempts < 0:
		return nil, fmt.Errorf("compress: MaxAttempts is %d, must not be negative", cfg.MaxAttempts)
	case cfg.Content == "" && cfg.Client == nil:
		return nil, fmt.Errorf("compress: %w, and no summary content given", ErrNoClient)
	}
	tok := cfg.Tokenizer
	if tok == nil {
		tok = Estimator{}
	}
	before := ItemsTokens(tok, group.Items)
	check := sizeCheck{before: before, target: cfg.TargetTokens, tolerance: tolerance(cfg.Tolerance)}

	var (
		msgs    []llm.Message // the request, amended by steering; nil with Content
		attempt int
		usage   llm.Usage
		model   string
		last    string // the text of the last attempt, for steering
	)
	s := retry.Steering[string, struct{}]{
		MaxAttempts: cfg.MaxAttempts,
		OnAttempt:   cfg.OnAttempt,
		Attempt: func(ctx context.Context) (string, error) {
			attempt++
			if cfg.Content != "" {
				last = strings.TrimSpace(cfg.Content)
				return last, nil
			}
			resp, err := cfg.Client.Complete(ctx, llm.Request{
				Model:       cfg.Model,
				Messages:    slices.Clone(msgs),
				Temperature: cfg.Temperature,
				Schema:      cfg.Schema,
			})
			if err != nil {
				return "", fmt.Errorf("attempt %d: %w", attempt, err)
			}
			usage = usage.Add(resp.Usage)
			model = resp.Model
			last = strings.TrimSpace(resp.Content)
			return last, nil
		},
		Validate: func(ctx context.Context, text string) (bool, string, error) {
			if diagnosis := check.diagnose(MessageTokens(tok, text), text == ""); diagnosis != "" {
				return false, diagnosis, nil
			}
			if cfg.Validator == nil {
				return true, "", nil
			}
			ok, diagnosis, err := cfg.Validator.Validate(ctx, text)
			if err != nil {
				return false, "", fmt.Errorf("attempt %d: validate summary: %w", attempt, err)
			}
			return ok, diagnosis, nil
		},
		Steer: func(ctx context.Context, diagnosis string) error {
			if last != "" {
				msgs = append(msgs, llm.Message{Role: string(dag.RoleAssistant), Content: last})
			}
			msgs = append(msgs, llm.Message{Role: string(dag.RoleUser), Content: rejectionMessage(diagnosis)})
			return nil
		},
	}
	if cfg.Content != "" {
		s.MaxAttempts = 1
	} else {
		prompt := cfg.Prompt
		if prompt == nil {
			prompt = DefaultPrompt
		}
		msgs = prompt(group.Items, cfg.TargetTokens, cfg.Instructions)
	}

	res, err := retry.WithSteering(ctx, s)
	if err != nil {
		// No "compress: " here: the caller says which summary failed
		// (SummarizeAll's GroupError, tract's CompressRange).
		return nil, fmt.Errorf("summarize %s: %w", english.Count(len(group.Items), "message", "messages"), err)
	}
	return &Summary{
		Text:         res.Value,
		Sources:      group.Sources(),
		TokensBefore: before,
		TokensAfter:  MessageTokens(tok, res.Value),
		Attempts:     res.Attempts,
		History:      res.History,
		Usage:        usage,
		Model:        model,
	}, nil
}

// tolerance returns the tolerance that Config.Tolerance t stands for.
func tolerance(t float64) float64 {
	switch {
	case t == 0:
		return DefaultTolerance
	case t < 0:
		return 0
	}
	return t
}

// sizeCheck holds the built-in checks of a summary's size.
type sizeCheck struct {
	before    int     // tokens of the source
	target    int     // target tokens; 0 for none
	tolerance float64 // share allowed over target
}

// diagnose returns why a summary of after tokens fails the built-in checks,
// one line per failed check, or "" when it passes them.
func (c sizeCheck) diagnose(after int, empty bool) string {
	if empty {
		return "summary is empty"
	}
	var failed []string
	if after >= c.before {
		failed = append(failed, fmt.Sprintf("summary is %d tokens (estimated), not shorter than its source of %d tokens", after, c.before))
	}
	if c.target > 0 {
		// The epsilon keeps 100*(1+0.2) at 120, not 119.99….
		allowed := int(math.Floor(float64(c.target)*(1+c.tolerance) + 1e-9))
		if after > allowed {
			failed = append(failed, fmt.Sprintf("summary is %d tokens (estimated), over the target of %d tokens by more than %s (at most %d allowed)",
				after, c.target, percent(c.tolerance), allowed))
		}
	}
	return strings.Join(failed, "\n")
}

// percent renders a share as a percentage: 0.2 → "20%", 0.125 → "12.5%".
func percent(share float64) string {
	return strconv.FormatFloat(math.Round(share*10000)/100, 'f', -1, 64) + "%"
}

// SummarizeAll summarizes every group of groups whose Keep is false, in
// order, with Summarize and cfg, and returns the summaries aligned with
// groups: summaries[i] is nil for a kept group. It stops at the first
// failure and returns a *GroupError naming the failed group, with no
// summaries; throwing away the work done is the caller's all-or-nothing.
//
// onGroup, when set, is called after each summary with its ordinal k among
// the summarized groups (from 1) and their number n. cfg.OnAttempt reports
// the attempts of every group; a caller that needs to tell the groups apart
// there calls Summarize itself.
func SummarizeAll(ctx context.Context, groups []Group, cfg Config, onGroup func(k, n int, s *Summary)) ([]*Summary, error) {
	n := 0
	for _, g := range groups {
		if !g.Keep {
			n++
		}
	}
	out := make([]*Summary, len(groups))
	k := 0
	for i, g := range groups {
		if g.Keep {
			continue
		}
		k++
		s, err := Summarize(ctx, g, cfg)
		if err != nil {
			return nil, &GroupError{Index: i, Ordinal: k, Total: n, Err: err}
		}
		out[i] = s
		if onGroup != nil {
			onGroup(k, n, s)
		}
	}
	return out, nil
}
