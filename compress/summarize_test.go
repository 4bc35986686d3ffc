package compress_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// sized returns text of exactly n runes that starts with prefix.
func sized(prefix string, n int) string {
	return prefix + strings.Repeat(".", n-len([]rune(prefix)))
}

// tokens returns a text that costs n estimated tokens as a message.
func tokens(n int) string { return sized("summary", 4*(n-compress.MessageOverhead)) }

// sourceGroup is a group of two messages of 50 estimated tokens each:
// 100 tokens before compression.
func sourceGroup() compress.Group {
	return compress.Group{Items: []compress.Item{
		user(sized("How do I reverse a list in Go?", 184)),
		asst(sized("Use slices.Reverse(s); it works in place.", 184)),
	}}
}

func maxLen50(t *testing.T) retry.Validator {
	t.Helper()
	v, err := retry.ParseSpecs([]string{"maxlen:50"})
	require.NoError(t, err)
	return v
}

type attemptReport struct {
	attempt   int
	ok        bool
	diagnosis string
}

func TestSummarize_FirstTryAccepted(t *testing.T) {
	client := llm.NewScripted(llm.Reply{
		Content: "  The user asked how to reverse a list; the assistant said slices.Reverse.\n",
		Usage:   llm.Usage{PromptTokens: 150, CompletionTokens: 20, TotalTokens: 170},
	})
	temp := 0.3
	g := sourceGroup()

	s, err := compress.Summarize(context.Background(), g, compress.Config{
		Client:       client,
		Model:        "summarizer",
		Temperature:  &temp,
		TargetTokens: 40,
		Instructions: "keep function names",
	})
	require.NoError(t, err)
	client.Verify(t)

	reqs := client.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "summarizer", reqs[0].Model)
	require.NotNil(t, reqs[0].Temperature)
	assert.Equal(t, 0.3, *reqs[0].Temperature)
	assert.Equal(t, compress.DefaultPrompt(g.Items, 40, "keep function names"), reqs[0].Messages)
	require.Len(t, reqs[0].Messages, 2)
	prompt := reqs[0].Messages[1].Content
	assert.Contains(t, prompt, compress.Transcript(g.Items))
	assert.Contains(t, prompt, "user: How do I reverse a list in Go?")
	assert.Contains(t, prompt, "Target length: at most about 40 tokens.")
	assert.Contains(t, prompt, "Additional instructions: keep function names")

	text := "The user asked how to reverse a list; the assistant said slices.Reverse."
	assert.Equal(t, &compress.Summary{
		Text:         text,
		Sources:      g.Sources(),
		TokensBefore: 100,
		TokensAfter:  compress.EstimateTokens(text) + compress.MessageOverhead,
		Attempts:     1,
		History:      []string{},
		Usage:        llm.Usage{PromptTokens: 150, CompletionTokens: 20, TotalTokens: 170},
		Model:        "summarizer",
	}, s)
}

func TestSummarize_RejectedThenAcceptedSteersInMemory(t *testing.T) {
	rejected := sized("Too long", 60)
	client := llm.NewScripted(llm.Reply{Content: rejected}, llm.Reply{Content: "Reverse with slices.Reverse."})
	var reports []attemptReport
	g := sourceGroup()

	s, err := compress.Summarize(context.Background(), g, compress.Config{
		Client:    client,
		Validator: maxLen50(t),
		OnAttempt: func(attempt int, ok bool, diagnosis string) {
			reports = append(reports, attemptReport{attempt, ok, diagnosis})
		},
	})
	require.NoError(t, err)
	client.Verify(t)

	diag := "maxlen:50: answer is 60 characters, more than the maximum of 50"
	assert.Equal(t, "Reverse with slices.Reverse.", s.Text)
	assert.Equal(t, 2, s.Attempts)
	assert.Equal(t, []string{diag}, s.History)
	assert.Equal(t, []attemptReport{{1, false, diag}, {2, true, ""}}, reports)

	reqs := client.Requests()
	require.Len(t, reqs, 2)
	first := reqs[0].Messages
	second := reqs[1].Messages
	require.Len(t, second, len(first)+2)
	assert.Equal(t, first, second[:len(first)], "the second request repeats the first")
	assert.Equal(t, llm.Message{Role: "assistant", Content: rejected}, second[len(first)])
	steer := second[len(first)+1]
	assert.Equal(t, "user", steer.Role)
	assert.True(t, strings.HasPrefix(steer.Content, "previous summary was rejected: "+diag+"\n"), steer.Content)
	assert.Contains(t, steer.Content, "Reply with the summary only.")
}

// Rejections accumulate in the request; an empty rejected summary is not
// echoed back as an assistant message.
func TestSummarize_SteeringAccumulates(t *testing.T) {
	client := llm.NewScripted(
		llm.Reply{Content: tokens(120)},
		llm.Reply{Content: " \n "},
		llm.Reply{Content: "Short."},
	)
	s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{Client: client})
	require.NoError(t, err)
	client.Verify(t)

	notShorter := "summary is 120 tokens (estimated), not shorter than its source of 100 tokens"
	assert.Equal(t, []string{notShorter, "summary is empty"}, s.History)
	assert.Equal(t, 3, s.Attempts)

	reqs := client.Requests()
	require.Len(t, reqs, 3)
	third := reqs[2].Messages
	require.Len(t, third, 5)
	assert.Equal(t, "assistant", third[2].Role)
	assert.Equal(t, tokens(120), third[2].Content)
	assert.True(t, strings.HasPrefix(third[3].Content, compress.RejectedPrefix+notShorter))
	assert.Equal(t, "user", third[4].Role)
	assert.True(t, strings.HasPrefix(third[4].Content, compress.RejectedPrefix+"summary is empty"))
}

// The built-in checks, through caller-supplied content so that the
// diagnosis is the exhausted error's.
func TestSummarize_BuiltInChecks(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		target    int
		tolerance float64
		wantDiag  string // "" when the summary passes
	}{
		{
			name:     "not shorter than its source",
			content:  tokens(120),
			wantDiag: "summary is 120 tokens (estimated), not shorter than its source of 100 tokens",
		},
		{
			name:     "as long as its source",
			content:  tokens(100),
			wantDiag: "summary is 100 tokens (estimated), not shorter than its source of 100 tokens",
		},
		{
			name:    "one token shorter than its source",
			content: tokens(99),
		},
		{
			name:     "over the target by more than the default tolerance",
			content:  tokens(61),
			target:   50,
			wantDiag: "summary is 61 tokens (estimated), over the target of 50 tokens by more than 20% (at most 60 allowed)",
		},
		{
			name:    "at the target plus the default tolerance",
			content: tokens(60),
			target:  50,
		},
		{
			name:      "over the target by more than a custom tolerance",
			content:   tokens(91),
			target:    80,
			tolerance: 0.125,
			wantDiag:  "summary is 91 tokens (estimated), over the target of 80 tokens by more than 12.5% (at most 90 allowed)",
		},
		{
			name:      "negative tolerance makes the target a maximum",
			content:   tokens(51),
			target:    50,
			tolerance: -1,
			wantDiag:  "summary is 51 tokens (estimated), over the target of 50 tokens by more than 0% (at most 50 allowed)",
		},
		{
			name:    "not shorter and over the target: both reported",
			content: tokens(120),
			target:  50,
			wantDiag: "summary is 120 tokens (estimated), not shorter than its source of 100 tokens\n" +
				"summary is 120 tokens (estimated), over the target of 50 tokens by more than 20% (at most 60 allowed)",
		},
		{
			name:     "white space only",
			content:  " \n\t ",
			wantDiag: "summary is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
				Content:      tt.content,
				TargetTokens: tt.target,
				Tolerance:    tt.tolerance,
			})
			if tt.wantDiag == "" {
				require.NoError(t, err)
				assert.Equal(t, compress.MessageTokens(nil, tt.content), s.TokensAfter)
				return
			}
			require.Error(t, err)
			assert.Nil(t, s)
			exhausted, ok := errors.AsType[*retry.ExhaustedError](err)
			require.True(t, ok, "want *retry.ExhaustedError, got %v", err)
			assert.Equal(t, tt.wantDiag, exhausted.LastDiagnosis)
			assert.Equal(t, 1, exhausted.Attempts)
		})
	}
}

// countingValidator accepts everything and counts its calls.
type countingValidator struct{ calls int }

func (v *countingValidator) Name() string { return "counting" }
func (v *countingValidator) Validate(context.Context, string) (bool, string, error) {
	v.calls++
	return true, "", nil
}

func TestSummarize_BuiltInChecksRunBeforeValidator(t *testing.T) {
	v := &countingValidator{}
	_, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{Content: tokens(120), Validator: v})
	require.Error(t, err)
	assert.Equal(t, 0, v.calls, "the validator must not run on a summary the built-in checks rejected")

	_, err = compress.Summarize(context.Background(), sourceGroup(), compress.Config{Content: "Short.", Validator: v})
	require.NoError(t, err)
	assert.Equal(t, 1, v.calls)
}

func TestSummarize_UserValidatorRejects(t *testing.T) {
	_, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
		Content:   sized("Fine size for the built-in checks", 60),
		Validator: maxLen50(t),
	})
	exhausted, ok := errors.AsType[*retry.ExhaustedError](err)
	require.True(t, ok, "want *retry.ExhaustedError, got %v", err)
	assert.Equal(t, "maxlen:50: answer is 60 characters, more than the maximum of 50", exhausted.LastDiagnosis)
}

func TestSummarize_ExhaustionReturnsExhaustedError(t *testing.T) {
	tests := []struct {
		maxAttempts  int
		wantAttempts int
	}{
		{maxAttempts: 0, wantAttempts: retry.DefaultMaxAttempts},
		{maxAttempts: 1, wantAttempts: 1},
		{maxAttempts: 4, wantAttempts: 4},
	}
	for _, tt := range tests {
		client := llm.NewScripted().Otherwise(llm.Reply{Content: tokens(150)})
		s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
			Client:      client,
			MaxAttempts: tt.maxAttempts,
		})
		require.Error(t, err)
		assert.Nil(t, s)
		exhausted, ok := errors.AsType[*retry.ExhaustedError](err)
		require.True(t, ok, "want *retry.ExhaustedError, got %v", err)
		diag := "summary is 150 tokens (estimated), not shorter than its source of 100 tokens"
		assert.Equal(t, tt.wantAttempts, exhausted.Attempts)
		assert.Len(t, exhausted.History, tt.wantAttempts)
		assert.Equal(t, diag, exhausted.LastDiagnosis)
		assert.Equal(t, tokens(150), exhausted.LastResult)
		assert.Len(t, client.Requests(), tt.wantAttempts)
		if tt.wantAttempts == 1 {
			assert.EqualError(t, err, "summarize 2 messages: 1 attempt failed; diagnosis: "+diag)
		}
	}
}

func TestSummarize_CallerContentCallsNoModel(t *testing.T) {
	client := llm.NewScripted()
	s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
		Client:    client,
		Content:   " Given summary. ",
		Validator: maxLen50(t),
	})
	require.NoError(t, err)
	assert.Empty(t, client.Requests())
	assert.Equal(t, "Given summary.", s.Text)
	assert.Equal(t, 1, s.Attempts)
	assert.Equal(t, llm.Usage{}, s.Usage)
	assert.Empty(t, s.Model)
	assert.Equal(t, 100, s.TokensBefore)

	// No client at all is fine with content.
	_, err = compress.Summarize(context.Background(), sourceGroup(), compress.Config{Content: "Given summary."})
	require.NoError(t, err)
}

func TestSummarize_RejectedCallerContentExhaustsAtOnce(t *testing.T) {
	client := llm.NewScripted()
	_, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
		Client:      client,
		Content:     sized("A given summary", 80),
		Validator:   maxLen50(t),
		MaxAttempts: 5,
	})
	exhausted, ok := errors.AsType[*retry.ExhaustedError](err)
	require.True(t, ok, "want *retry.ExhaustedError, got %v", err)
	assert.Equal(t, 1, exhausted.Attempts)
	assert.Empty(t, client.Requests())
}

func TestSummarize_ModelErrorPropagated(t *testing.T) {
	overloaded := &llm.ServerError{APIError: llm.APIError{StatusCode: 503, Message: "overloaded"}}
	tests := []struct {
		name    string
		replies []llm.Reply
		wantMsg string
	}{
		{
			name:    "on the first attempt",
			replies: []llm.Reply{{Err: overloaded}},
			wantMsg: "summarize 2 messages: attempt 1: model server error (HTTP 503): overloaded",
		},
		{
			name:    "after a rejection",
			replies: []llm.Reply{{Content: tokens(120)}, {Err: overloaded}},
			wantMsg: "summarize 2 messages: attempt 2: model server error (HTTP 503): overloaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := llm.NewScripted(tt.replies...)
			s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{Client: client})
			require.Error(t, err)
			assert.Nil(t, s)
			assert.EqualError(t, err, tt.wantMsg)
			assert.ErrorIs(t, err, overloaded)
			_, ok := errors.AsType[*llm.APIError](err)
			assert.True(t, ok, "errors.As finds the client's *llm.APIError")
			_, ok = errors.AsType[*retry.ExhaustedError](err)
			assert.False(t, ok, "a model error is not exhaustion")
			client.Verify(t)
		})
	}
}

func TestSummarize_UsageSummedOverAttempts(t *testing.T) {
	client := llm.NewScripted(
		llm.Reply{Content: tokens(120), Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}},
		llm.Reply{Content: "Short.", Usage: llm.Usage{PromptTokens: 130, CompletionTokens: 10, TotalTokens: 140}},
	)
	s, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{Client: client})
	require.NoError(t, err)
	assert.Equal(t, llm.Usage{PromptTokens: 230, CompletionTokens: 30, TotalTokens: 260}, s.Usage)
}

func TestSummarize_CancelledContext(t *testing.T) {
	t.Run("before the first attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		client := llm.NewScripted(llm.Reply{Content: "Short."})
		_, err := compress.Summarize(ctx, sourceGroup(), compress.Config{Client: client})
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, client.Requests())
	})
	t.Run("between attempts", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		client := llm.NewScripted(llm.Reply{Content: tokens(120)}, llm.Reply{Content: "Short."})
		_, err := compress.Summarize(ctx, sourceGroup(), compress.Config{
			Client:    client,
			OnAttempt: func(int, bool, string) { cancel() },
		})
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Len(t, client.Requests(), 1)
	})
}

// failingValidator cannot run.
type failingValidator struct{ err error }

func (v failingValidator) Name() string { return "failing" }
func (v failingValidator) Validate(context.Context, string) (bool, string, error) {
	return false, "", v.err
}

func TestSummarize_ValidatorErrorStops(t *testing.T) {
	errJudge := errors.New("judge unavailable")
	client := llm.NewScripted(llm.Reply{Content: "Short."})
	_, err := compress.Summarize(context.Background(), sourceGroup(), compress.Config{
		Client:    client,
		Validator: failingValidator{err: errJudge},
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, errJudge)
	assert.EqualError(t, err, "summarize 2 messages: attempt 1: validate summary: judge unavailable")
	assert.Len(t, client.Requests(), 1)
}

func TestSummarize_BadConfig(t *testing.T) {
	client := llm.NewScripted()
	tests := []struct {
		name    string
		group   compress.Group
		cfg     compress.Config
		wantIs  error
		wantMsg string
	}{
		{
			name:    "kept group",
			group:   compress.Group{Keep: true, Items: []compress.Item{sys("s1")}},
			cfg:     compress.Config{Client: client},
			wantMsg: "compress: cannot summarize a kept group",
		},
		{
			name:    "empty group",
			cfg:     compress.Config{Client: client},
			wantMsg: "compress: cannot summarize an empty group",
		},
		{
			name:    "no client and no content",
			group:   sourceGroup(),
			wantIs:  compress.ErrNoClient,
			wantMsg: "compress: no model client configured, and no summary content given",
		},
		{
			name:    "negative target",
			group:   sourceGroup(),
			cfg:     compress.Config{Client: client, TargetTokens: -1},
			wantMsg: "compress: TargetTokens is -1, must not be negative",
		},
		{
			name:    "negative attempts",
			group:   sourceGroup(),
			cfg:     compress.Config{Client: client, MaxAttempts: -2},
			wantMsg: "compress: MaxAttempts is -2, must not be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compress.Summarize(context.Background(), tt.group, tt.cfg)
			require.Error(t, err)
			assert.EqualError(t, err, tt.wantMsg)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
		})
	}
	assert.Empty(t, client.Requests())
}

func TestSummarize_CustomTokenizerAndPrompt(t *testing.T) {
	words := compress.TokenizerFunc(func(s string) int { return len(strings.Fields(s)) })
	client := llm.NewScripted(llm.Reply{Content: "one two"})
	g := compress.Group{Items: []compress.Item{user("a b c d e"), asst("f g h i j k")}}

	s, err := compress.Summarize(context.Background(), g, compress.Config{
		Client:    client,
		Tokenizer: words,
		Prompt: func(items []compress.Item, target int, instructions string) []llm.Message {
			return []llm.Message{{Role: "user", Content: "custom: " + compress.Transcript(items)}}
		},
	})
	require.NoError(t, err)
	assert.Equal(t, 5+6+2*compress.MessageOverhead, s.TokensBefore)
	assert.Equal(t, 2+compress.MessageOverhead, s.TokensAfter)
	reqs := client.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []llm.Message{{Role: "user", Content: "custom: user: a b c d e\n\nassistant: f g h i j k"}}, reqs[0].Messages)
}

// threeRuns plans a range whose three summary groups are separated by
// pinned system messages: groups 1, 3 and 5 are summarized.
func threeRuns(t *testing.T) []compress.Group {
	t.Helper()
	var items []compress.Item
	for _, n := range []string{"1", "2", "3"} {
		items = append(items, sys("system "+n),
			user(sized("question "+n, 184)), asst(sized("answer "+n, 184)))
	}
	p, err := compress.Plan(items)
	require.NoError(t, err)
	require.Len(t, p.Groups, 6)
	return p.Groups
}

func TestSummarizeAll_AlignedWithGroups(t *testing.T) {
	groups := threeRuns(t)
	client := llm.NewScripted().
		When("question 1", llm.Reply{Content: "Summary one."}).
		When("question 2", llm.Reply{Content: "Summary two."}).
		When("question 3", llm.Reply{Content: "Summary three."})
	type progress struct{ k, n int }
	var calls []progress

	sums, err := compress.SummarizeAll(context.Background(), groups, compress.Config{Client: client},
		func(k, n int, s *compress.Summary) { calls = append(calls, progress{k, n}) })
	require.NoError(t, err)
	client.Verify(t)

	require.Len(t, sums, len(groups))
	for i, g := range groups {
		if g.Keep {
			assert.Nil(t, sums[i], "group %d is kept", i)
			continue
		}
		require.NotNil(t, sums[i], "group %d", i)
		assert.Equal(t, g.Sources(), sums[i].Sources)
	}
	assert.Equal(t, "Summary one.", sums[1].Text)
	assert.Equal(t, "Summary two.", sums[3].Text)
	assert.Equal(t, "Summary three.", sums[5].Text)
	assert.Equal(t, []progress{{1, 3}, {2, 3}, {3, 3}}, calls)
}

func TestSummarizeAll_ModelFailureInTheMiddle(t *testing.T) {
	groups := threeRuns(t)
	overloaded := &llm.ServerError{APIError: llm.APIError{StatusCode: 503, Message: "overloaded"}}
	client := llm.NewScripted(llm.Reply{Content: "Summary one."}, llm.Reply{Err: overloaded})
	var done int

	sums, err := compress.SummarizeAll(context.Background(), groups, compress.Config{Client: client},
		func(int, int, *compress.Summary) { done++ })
	require.Error(t, err)
	assert.Nil(t, sums)
	assert.Equal(t, 1, done)
	assert.Len(t, client.Requests(), 2, "the third group is never asked for")

	groupErr, ok := errors.AsType[*compress.GroupError](err)
	require.True(t, ok, "want *compress.GroupError, got %v", err)
	assert.Equal(t, 3, groupErr.Index)
	assert.Equal(t, 2, groupErr.Ordinal)
	assert.Equal(t, 3, groupErr.Total)
	assert.ErrorIs(t, err, overloaded)
	assert.EqualError(t, err, "summary 2 of 3: summarize 2 messages: attempt 1: model server error (HTTP 503): overloaded")
}

func TestSummarizeAll_ExhaustionSeenThroughGroupError(t *testing.T) {
	groups := threeRuns(t)
	client := llm.NewScripted().Otherwise(llm.Reply{Content: tokens(200)})
	_, err := compress.SummarizeAll(context.Background(), groups, compress.Config{Client: client, MaxAttempts: 2}, nil)
	exhausted, ok := errors.AsType[*retry.ExhaustedError](err)
	require.True(t, ok, "want *retry.ExhaustedError, got %v", err)
	assert.Equal(t, 2, exhausted.Attempts)
	groupErr, ok := errors.AsType[*compress.GroupError](err)
	require.True(t, ok)
	assert.Equal(t, 1, groupErr.Index)
}
