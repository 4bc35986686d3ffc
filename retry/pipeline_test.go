package retry_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

var updatePipelineGolden = flag.Bool("update-pipeline", false, "rewrite retry/testdata/pipeline_* golden files")

type (
	sctx   = retry.StageContext[string]
	result = retry.StageResult[string]
)

// stage makes an unnamed string stage from a function literal.
func stage(fn func(ctx context.Context, sc *sctx) (result, error)) retry.Stage[string] {
	return retry.StageFunc[string](fn)
}

// view is what one stage execution saw, recorded by recordViews.
type view struct {
	Stage     int
	Try       int
	Requester int
	Tries     []string
	Hint      any
}

// recordViews wraps s so that each execution appends what it saw to views.
func recordViews(views *[]view, s retry.Stage[string]) retry.Stage[string] {
	return retry.NewStage(s.Name(), func(ctx context.Context, sc *sctx) (result, error) {
		*views = append(*views, view{Stage: sc.Stage, Try: sc.Try, Requester: sc.Requester, Tries: sc.Tries, Hint: sc.Hint})
		return s.Run(ctx, sc)
	})
}

// alwaysRetry asks its upstream for a retry on every execution and counts
// its requests.
func alwaysRetry(requests *int) retry.Stage[string] {
	return stage(func(_ context.Context, sc *sctx) (result, error) {
		*requests++
		return sc.RetryUpstream(nil), nil
	})
}

// pass passes its input on.
var pass = stage(func(_ context.Context, sc *sctx) (result, error) {
	return retry.Output(sc.Input), nil
})

// Scenario 1: the source is a function, so stage 1 can re-invoke it.
func TestPipeline_StageRetriesSource(t *testing.T) {
	calls := 0
	src := retry.SourceFunc(func(context.Context) (string, error) {
		calls++
		return "success", nil
	})
	var tries []string
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Try < 3 {
			return sc.RetryUpstream(nil), nil
		}
		tries = sc.Tries
		return retry.Output(strconv.Itoa(sc.Try)), nil
	})

	out, err := retry.NewPipeline(src, s1).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "3", out)
	assert.Equal(t, 3, calls)
	assert.Equal(t, []string{"success", "success", "success"}, tries)
}

// Scenario 2: stage 2 retries stage 1, which re-runs on its latest input.
func TestPipeline_StageRetriesPreviousStage(t *testing.T) {
	s1Runs := 0
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		s1Runs++
		return retry.Output(fmt.Sprintf("attempt-%d: %s", sc.Try, sc.Input)), nil
	})
	var s2Tries []string
	s2 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Try < 3 {
			return sc.RetryUpstream(nil), nil
		}
		s2Tries = sc.Tries
		return retry.Output(sc.Input), nil
	})
	var s3Try int
	s3 := stage(func(_ context.Context, sc *sctx) (result, error) {
		s3Try = sc.Try
		return retry.Output(sc.Input), nil
	})

	out, err := retry.NewPipeline(retry.SourceValue("base"), s1, s2, s3).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "attempt-3: base", out)
	assert.Equal(t, 3, s1Runs)
	assert.Equal(t, []string{"attempt-1: base", "attempt-2: base", "attempt-3: base"}, s2Tries)
	assert.Equal(t, 1, s3Try, "stage 3 runs after stage 2's context closed")
}

// twoRetryingStages is scenario 3's pipeline: stage 2 retries stage 1 until
// its try 2, stage 4 retries stage 3 until its try 3. last receives stage
// 4's final view.
func twoRetryingStages(last **sctx) *retry.Pipeline[string] {
	tagTry := func(tag string) retry.Stage[string] {
		return stage(func(_ context.Context, sc *sctx) (result, error) {
			return retry.Output(fmt.Sprintf("%s-try%d(%s)", tag, sc.Try, sc.Input)), nil
		})
	}
	retryUntil := func(try int) retry.Stage[string] {
		return stage(func(_ context.Context, sc *sctx) (result, error) {
			if sc.Try < try {
				return sc.RetryUpstream(nil), nil
			}
			*last = sc
			return retry.Output(sc.Input), nil
		})
	}
	return retry.NewPipeline(retry.SourceValue("base"), tagTry("s1"), retryUntil(2), tagTry("s3"), retryUntil(3))
}

// Scenario 3.
func TestPipeline_TwoRetryingStages(t *testing.T) {
	var last *sctx
	out, err := twoRetryingStages(&last).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "s3-try3(s1-try2(base))", out)
}

// Scenario 5: AllTries has one entry per retry context, sized by its
// attempts.
func TestPipeline_AllTriesListsEveryContext(t *testing.T) {
	var last *sctx
	_, err := twoRetryingStages(&last).Run(context.Background())
	require.NoError(t, err)
	require.NotNil(t, last)

	all := last.AllTries()

	require.Len(t, all, 2)
	assert.Equal(t, retry.ContextTries[string]{
		Requester: 2, Retried: 1,
		Tries: []string{"s1-try1(base)", "s1-try2(base)"},
	}, all[0])
	assert.Equal(t, retry.ContextTries[string]{
		Requester: 4, Retried: 3,
		Tries: []string{"s3-try1(s1-try2(base))", "s3-try2(s1-try2(base))", "s3-try3(s1-try2(base))"},
	}, all[1])

	all[0].Tries[0] = "changed"
	assert.Equal(t, "s1-try1(base)", last.AllTries()[0].Tries[0], "AllTries returns copies")
}

// Scenario 4.
func TestPipeline_BestOfN(t *testing.T) {
	candidates := []string{"bb", "a", "eeeee", "dddd", "ccc"}
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		return retry.Output(candidates[sc.Try-1]), nil
	})
	var views []view
	best := recordViews(&views, retry.BestOfN(5, func(s string) float64 { return float64(len(s)) }))

	out, err := retry.NewPipeline(retry.SourceValue("topic"), s1, best).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "eeeee", out)
	require.Len(t, views, 5)
	assert.Equal(t, candidates, views[4].Tries)
	assert.Equal(t, "best of 5", best.Name())
}

func TestPipeline_BestOfNPicksEarliestAmongEqualScores(t *testing.T) {
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		return retry.Output([]string{"x", "first", "later"}[sc.Try-1]), nil
	})
	best := retry.BestOfN(3, func(s string) float64 { return float64(len(s)) })

	out, err := retry.NewPipeline(retry.SourceValue("topic"), s1, best).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "first", out)
}

// When the stage after a best-of-n asks it to retry, it collects a new round
// from its upstream, forwarding the hint.
func TestPipeline_BestOfNStartsNewRoundWhenRetried(t *testing.T) {
	n := 0
	var hints []any
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		n++
		hints = append(hints, sc.Hint)
		return retry.Output("c" + strconv.Itoa(n)), nil
	})
	score := func(s string) float64 { v, _ := strconv.Atoi(s[1:]); return float64(v) }
	rejected := false
	s3 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if !rejected {
			rejected = true
			return sc.RetryUpstream("again"), nil
		}
		return retry.Output(sc.Input), nil
	})

	out, err := retry.NewPipeline(retry.SourceValue("topic"), s1, retry.BestOfN(2, score), s3).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "c3", out)
	assert.Equal(t, []any{nil, nil, "again"}, hints)
}

func TestPipeline_BestOfNEdgeCases(t *testing.T) {
	length := func(s string) float64 { return float64(len(s)) }
	tests := []struct {
		name    string
		best    retry.Stage[string]
		want    string
		wantErr string
	}{
		{name: "one candidate passes input on", best: retry.BestOfN(1, length), want: "topic"},
		{name: "zero candidates", best: retry.BestOfN(0, length), wantErr: "stage 1 (best of 0): best of 0: need n >= 1"},
		{name: "nil score", best: retry.BestOfN[string](2, nil), wantErr: "need n >= 1 and a score function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := retry.NewPipeline(retry.SourceValue("topic"), tt.best).Run(context.Background())
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}

// Scenario 6 and the per-context limit: the request after the limit fails.
func TestPipeline_PerContextLimit(t *testing.T) {
	tests := []struct {
		name         string
		opts         []retry.PipelineOption
		source       retry.Source[string]
		retryingAt   int // stage that always asks for a retry
		wantRequests int
		wantMax      int
		wantMsg      string
	}{
		{
			name: "default limit fails at 11th request", source: retry.SourceValue("base"), retryingAt: 2,
			wantRequests: 11, wantMax: 10,
			wantMsg: "retry limit: stage 2 asked to retry stage 1 more than 10 times in one retry context (raise it with retry.WithMaxRetriesPerContext)",
		},
		{
			name: "custom limit 3 fails at 4th request", source: retry.SourceValue("base"), retryingAt: 2,
			opts: []retry.PipelineOption{retry.WithMaxRetriesPerContext(3)}, wantRequests: 4, wantMax: 3,
			wantMsg: "retry limit: stage 2 asked to retry stage 1 more than 3 times in one retry context (raise it with retry.WithMaxRetriesPerContext)",
		},
		{
			name: "retries of the source", retryingAt: 1,
			source:       retry.SourceFunc(func(context.Context) (string, error) { return "base", nil }),
			wantRequests: 11, wantMax: 10,
			wantMsg: "retry limit: stage 1 asked to retry the source more than 10 times in one retry context (raise it with retry.WithMaxRetriesPerContext)",
		},
		{
			name: "limit 0 forbids retries", source: retry.SourceValue("base"), retryingAt: 2,
			opts: []retry.PipelineOption{retry.WithMaxRetriesPerContext(0)}, wantRequests: 1, wantMax: 0,
			wantMsg: "more than 0 times in one retry context",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := 0
			stages := []retry.Stage[string]{pass}
			if tt.retryingAt == 1 {
				stages = []retry.Stage[string]{alwaysRetry(&requests)}
			} else {
				stages = append(stages, alwaysRetry(&requests))
			}

			_, err := retry.NewPipeline(tt.source, stages...).Run(context.Background(), tt.opts...)

			require.Error(t, err)
			assert.ErrorIs(t, err, retry.ErrLimitExceeded)
			var le *retry.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, retry.LimitRetriesPerContext, le.Limit)
			assert.Equal(t, tt.wantMax, le.Max)
			assert.Equal(t, tt.retryingAt, le.Stage)
			assert.Equal(t, tt.retryingAt-1, le.Retried)
			assert.Equal(t, tt.wantRequests, requests)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

// retryingThroughTwoContexts builds a pipeline in which stage 3 always asks
// stage 2 for a retry, and stage 2, when given a hint, asks stage 1: every
// request opens a new retry context, so only the per-stage limit stops it.
func retryingThroughTwoContexts(s3Requests *int) *retry.Pipeline[string] {
	s2 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Hint != nil {
			return sc.RetryUpstream("from s2"), nil
		}
		return retry.Output(sc.Input), nil
	})
	s3 := stage(func(_ context.Context, sc *sctx) (result, error) {
		*s3Requests++
		return sc.RetryUpstream("from s3"), nil
	})
	return retry.NewPipeline(retry.SourceValue("base"), pass, s2, s3)
}

func TestPipeline_PerStageLimitAcrossContexts(t *testing.T) {
	tests := []struct {
		name         string
		opts         []retry.PipelineOption
		wantMax      int
		wantRequests int
	}{
		{name: "default 20", wantMax: 20, wantRequests: 21},
		{name: "custom 2", opts: []retry.PipelineOption{retry.WithMaxRetriesPerStage(2)}, wantMax: 2, wantRequests: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := 0
			var log retry.PipelineEventLog
			opts := append([]retry.PipelineOption{retry.WithObserver(log.Observe)}, tt.opts...)

			_, err := retryingThroughTwoContexts(&requests).Run(context.Background(), opts...)

			var le *retry.LimitError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, retry.ErrLimitExceeded)
			assert.Equal(t, retry.LimitError{Limit: retry.LimitRetriesPerStage, Max: tt.wantMax, Stage: 3, Retried: 2}, *le)
			assert.Equal(t, tt.wantRequests, requests)
			assert.EqualError(t, err, fmt.Sprintf("retry limit: stage 3 asked to retry stage 2 more than %d times in this run (raise it with retry.WithMaxRetriesPerStage)", tt.wantMax))
			for _, e := range log.Events() {
				if e.Kind == retry.EventStageStart && e.Stage == 3 {
					assert.Equal(t, 1, e.Attempt, "each of stage 3's requests opens a new context")
				}
			}
		})
	}
}

func TestPipeline_MaxExecutions(t *testing.T) {
	tests := []struct {
		name      string
		opts      []retry.PipelineOption
		wantMax   int
		wantStage int
		wantCalls int // source calls
	}{
		{name: "default 100", wantMax: 100, wantStage: 0, wantCalls: 50},
		{name: "custom 5", opts: []retry.PipelineOption{retry.WithMaxExecutions(5)}, wantMax: 5, wantStage: 1, wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, requests := 0, 0
			src := retry.SourceFunc(func(context.Context) (string, error) { calls++; return "x", nil })
			opts := append([]retry.PipelineOption{retry.WithMaxRetriesPerContext(1000), retry.WithMaxRetriesPerStage(1000)}, tt.opts...)

			_, err := retry.NewPipeline(src, alwaysRetry(&requests)).Run(context.Background(), opts...)

			var le *retry.LimitError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, retry.ErrLimitExceeded)
			assert.Equal(t, retry.LimitError{Limit: retry.LimitExecutions, Max: tt.wantMax, Stage: tt.wantStage, Retried: -1}, *le)
			assert.Equal(t, tt.wantCalls, calls)
			assert.Equal(t, tt.wantMax, calls+requests, "executions")
		})
	}
}

func TestPipeline_MaxExecutionsMessage(t *testing.T) {
	_, err := retry.NewPipeline(retry.SourceValue("x"), pass, pass).Run(context.Background(), retry.WithMaxExecutions(2))

	assert.EqualError(t, err, "execution limit: 2 stage executions reached before stage 2 could run (raise it with retry.WithMaxExecutions)")
}

// Scenario 7.
func TestPipeline_LiteralSourceCannotBeRetried(t *testing.T) {
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		return sc.RetryUpstream("try again"), nil
	})

	_, err := retry.NewPipeline(retry.SourceValue("base"), s1).Run(context.Background())

	require.Error(t, err)
	assert.ErrorIs(t, err, retry.ErrSourceNotRetryable)
	var se *retry.SourceNotRetryableError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Stage)
	assert.Equal(t, "try again", se.Hint)
	assert.EqualError(t, err, "stage 1 asked to retry the source, but the source is a literal value, not a function, "+
		"and cannot be retried; build the pipeline with retry.SourceFunc to make the source retryable")
	assert.False(t, retry.SourceValue("x").Retryable())
	assert.True(t, retry.SourceFunc(func(context.Context) (string, error) { return "", nil }).Retryable())
}

// Scenario 8.
func TestPipeline_HintSeenOnlyByRetriedStage(t *testing.T) {
	var s1Hints, s2Hints []any
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		s1Hints = append(s1Hints, sc.Hint)
		return retry.Output("draft"), nil
	})
	s2 := stage(func(_ context.Context, sc *sctx) (result, error) {
		s2Hints = append(s2Hints, sc.Hint)
		if sc.Try == 1 {
			return sc.RetryUpstream("shorter"), nil
		}
		return retry.Output(sc.Input), nil
	})

	_, err := retry.NewPipeline(retry.SourceValue("base"), s1, s2).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, []any{nil, "shorter"}, s1Hints)
	assert.Equal(t, []any{nil, nil}, s2Hints)
}

// The retry context is reused for the same pair, replaced for a new pair
// and closed when its requester succeeds.
func TestPipeline_RetryContextLifecycle(t *testing.T) {
	var views []view
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		return retry.Output("a" + strconv.Itoa(sc.Try)), nil
	})
	s2 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Hint == "fix s1" {
			return sc.RetryUpstream("from s2"), nil
		}
		return retry.Output(fmt.Sprintf("b%d(%s)", sc.Try, sc.Input)), nil
	})
	s3Requests := 0
	s3 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Try >= 3 {
			return retry.Output("done:" + sc.Input), nil
		}
		s3Requests++
		if s3Requests == 1 {
			return sc.RetryUpstream("fix s1"), nil
		}
		return sc.RetryUpstream("more"), nil
	})
	var last *sctx
	s4 := stage(func(_ context.Context, sc *sctx) (result, error) {
		last = sc
		return retry.Output(sc.Input), nil
	})
	p := retry.NewPipeline(retry.SourceValue("base"),
		recordViews(&views, s1), recordViews(&views, s2), recordViews(&views, s3), s4)

	out, err := p.Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "done:b3(a2)", out)
	want := []view{
		{Stage: 1, Try: 1},
		{Stage: 2, Try: 1},
		{Stage: 3, Try: 1}, // asks s2 ("fix s1"): context A (3,2)
		{Stage: 2, Try: 2, Requester: 3, Tries: []string{"b1(a1)"}, Hint: "fix s1"}, // asks s1: context B (2,1) replaces A
		{Stage: 1, Try: 2, Requester: 2, Tries: []string{"a1"}, Hint: "from s2"},
		{Stage: 2, Try: 2, Requester: 2, Tries: []string{"a1", "a2"}}, // succeeds: B closes
		{Stage: 3, Try: 1}, // no context; asks s2 ("more"): context C (3,2)
		{Stage: 2, Try: 2, Requester: 3, Tries: []string{"b2(a2)"}, Hint: "more"},
		{Stage: 3, Try: 2, Requester: 3, Tries: []string{"b2(a2)", "b2(a2)"}}, // asks again: C reused
		{Stage: 2, Try: 3, Requester: 3, Tries: []string{"b2(a2)", "b2(a2)"}, Hint: "more"},
		{Stage: 3, Try: 3, Requester: 3, Tries: []string{"b2(a2)", "b2(a2)", "b3(a2)"}}, // succeeds: C closes
	}
	assert.Equal(t, want, views)

	require.NotNil(t, last)
	assert.Equal(t, 1, last.Try)
	assert.Nil(t, last.Tries)
	assert.Zero(t, last.Requester)
	assert.Equal(t, []retry.ContextTries[string]{
		{Requester: 3, Retried: 2, Tries: []string{"b1(a1)"}},
		{Requester: 2, Retried: 1, Tries: []string{"a1", "a2"}},
		{Requester: 3, Retried: 2, Tries: []string{"b2(a2)", "b2(a2)", "b3(a2)"}},
	}, last.AllTries())
}

func TestPipeline_StageSeesBaseAndEarlierOutputs(t *testing.T) {
	calls := 0
	src := retry.SourceFunc(func(context.Context) (string, error) {
		calls++
		return "v" + strconv.Itoa(calls), nil
	})
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		if sc.Try == 1 {
			return sc.RetryUpstream(nil), nil
		}
		return retry.Output("s1(" + sc.Input + ")"), nil
	})
	s2 := stage(func(_ context.Context, sc *sctx) (result, error) {
		return retry.Output("s2(" + sc.Input + ")"), nil
	})
	var seen *sctx
	s3 := retry.NewStage("check", func(_ context.Context, sc *sctx) (result, error) {
		seen = sc
		return retry.Output(sc.Input), nil
	})

	out, err := retry.NewPipeline(src, s1, s2, s3).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, "s2(s1(v2))", out)
	require.NotNil(t, seen)
	assert.Equal(t, "v1", seen.Base, "Base is the source's first output")
	assert.Equal(t, []string{"v2", "s1(v2)", "s2(s1(v2))"}, seen.Outputs)
	assert.Equal(t, 3, seen.Stage)
	assert.Equal(t, "check", seen.Name)
	assert.Equal(t, 1, seen.Try)
	assert.Nil(t, seen.Hint)
}

func TestPipeline_NoStagesReturnsSource(t *testing.T) {
	out, err := retry.NewPipeline(retry.SourceValue(42)).Run(context.Background())

	require.NoError(t, err)
	assert.Equal(t, 42, out)
}

func TestPipeline_StageErrorIsWrappedWithStageNumber(t *testing.T) {
	boom := errors.New("boom")
	failing := func(ctx context.Context, sc *sctx) (result, error) { return result{}, boom }
	tests := []struct {
		name      string
		source    retry.Source[string]
		stages    []retry.Stage[string]
		wantStage int
		wantName  string
		wantMsg   string
	}{
		{
			name:   "source",
			source: retry.SourceFunc(func(context.Context) (string, error) { return "", boom }),
			stages: []retry.Stage[string]{pass}, wantStage: 0, wantName: "source", wantMsg: "source: boom",
		},
		{
			name: "unnamed stage", source: retry.SourceValue("x"),
			stages: []retry.Stage[string]{pass, stage(failing)}, wantStage: 2, wantMsg: "stage 2: boom",
		},
		{
			name: "named stage", source: retry.SourceValue("x"),
			stages:    []retry.Stage[string]{pass, retry.NewStage("review", failing), pass},
			wantStage: 2, wantName: "review", wantMsg: "stage 2 (review): boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log retry.PipelineEventLog

			_, err := retry.NewPipeline(tt.source, tt.stages...).Run(context.Background(), retry.WithObserver(log.Observe))

			assert.ErrorIs(t, err, boom)
			var se *retry.StageError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.wantStage, se.Stage)
			assert.Equal(t, tt.wantName, se.Name)
			assert.EqualError(t, err, tt.wantMsg)

			events := log.Events()
			require.GreaterOrEqual(t, len(events), 2)
			failure, abort := events[len(events)-2], events[len(events)-1]
			assert.Equal(t, retry.EventStageFailure, failure.Kind)
			assert.Equal(t, tt.wantStage, failure.Stage)
			assert.Equal(t, boom, failure.Err)
			assert.Equal(t, retry.EventAbort, abort.Kind)
			assert.Equal(t, err, abort.Err)
		})
	}
}

func TestPipeline_CancelledContextRefusesToStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	src := retry.SourceFunc(func(context.Context) (string, error) { calls++; return "x", nil })
	var log retry.PipelineEventLog

	_, err := retry.NewPipeline(src, pass).Run(ctx, retry.WithObserver(log.Observe))

	assert.ErrorIs(t, err, context.Canceled)
	assert.EqualError(t, err, "pipeline stopped before the source: context canceled")
	assert.Zero(t, calls)
	kinds := []retry.PipelineEventKind{}
	for _, e := range log.Events() {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []retry.PipelineEventKind{retry.EventPipelineStart, retry.EventAbort}, kinds)
}

func TestPipeline_CancellationBetweenStages(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("user pressed stop")
	s1 := stage(func(_ context.Context, sc *sctx) (result, error) {
		cancel(stop)
		return retry.Output(sc.Input), nil
	})
	s2Ran := false
	s2 := retry.NewStage("review", func(_ context.Context, sc *sctx) (result, error) {
		s2Ran = true
		return retry.Output(sc.Input), nil
	})

	_, err := retry.NewPipeline(retry.SourceValue("x"), s1, s2).Run(ctx)

	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, stop, "the cancel cause is kept")
	assert.Contains(t, err.Error(), "pipeline stopped before stage 2 (review): context canceled")
	assert.False(t, s2Ran)
}

func TestPipeline_CancellationInsideStage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	s1 := stage(func(ctx context.Context, sc *sctx) (result, error) {
		close(started)
		<-ctx.Done()
		return result{}, ctx.Err()
	})
	go func() {
		<-started
		cancel()
	}()

	_, err := retry.NewPipeline(retry.SourceValue("x"), s1).Run(ctx)

	assert.ErrorIs(t, err, context.Canceled)
	var se *retry.StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Stage)
}

func TestPipeline_SourceSeesContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	src := retry.SourceFunc(func(ctx context.Context) (string, error) {
		return ctx.Value(key{}).(string), nil
	})
	s1 := stage(func(ctx context.Context, sc *sctx) (result, error) {
		return retry.Output(sc.Input + ctx.Value(key{}).(string)), nil
	})

	out, err := retry.NewPipeline(src, s1).Run(ctx)

	require.NoError(t, err)
	assert.Equal(t, "vv", out)
}

func TestPipeline_InvalidPipeline(t *testing.T) {
	const noSource = "invalid pipeline: no source; build one with retry.SourceFunc or retry.SourceValue"
	tests := []struct {
		name    string
		p       *retry.Pipeline[string]
		opts    []retry.PipelineOption
		wantMsg string
	}{
		{name: "zero source", p: retry.NewPipeline(retry.Source[string]{}, pass), wantMsg: noSource},
		{name: "nil source func", p: retry.NewPipeline(retry.SourceFunc[string](nil), pass), wantMsg: noSource},
		{name: "nil stage", p: retry.NewPipeline(retry.SourceValue("x"), pass, nil), wantMsg: "invalid pipeline: stage 2 is nil"},
		{name: "nil stage func", p: retry.NewPipeline(retry.SourceValue("x"), retry.StageFunc[string](nil)), wantMsg: "invalid pipeline: stage 1 is nil"},
		{name: "named nil func", p: retry.NewPipeline(retry.SourceValue("x"), retry.NewStage[string]("a", nil)), wantMsg: "invalid pipeline: stage 1 is nil"},
		{
			name: "negative limit", p: retry.NewPipeline(retry.SourceValue("x"), pass),
			opts:    []retry.PipelineOption{retry.WithMaxExecutions(-1)},
			wantMsg: "invalid pipeline: WithMaxExecutions(-1): a limit cannot be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log retry.PipelineEventLog
			opts := append([]retry.PipelineOption{retry.WithObserver(log.Observe)}, tt.opts...)

			_, err := tt.p.Run(context.Background(), opts...)

			assert.ErrorIs(t, err, retry.ErrInvalidPipeline)
			assert.EqualError(t, err, tt.wantMsg)
			assert.Empty(t, log.Events(), "nothing runs")
		})
	}
}

// oneRetryPipeline is scenario 9's run: draft, then review, which rejects
// the first draft with the hint "too long".
func oneRetryPipeline() *retry.Pipeline[string] {
	draft := retry.NewStage("draft", func(_ context.Context, sc *sctx) (result, error) {
		if sc.Hint != nil {
			return retry.Output("short"), nil
		}
		return retry.Output("a draft that is far too long"), nil
	})
	review := retry.NewStage("review", func(_ context.Context, sc *sctx) (result, error) {
		if len(sc.Input) > 10 {
			return sc.RetryUpstream("too long"), nil
		}
		return retry.Output(sc.Input), nil
	})
	return retry.NewPipeline(retry.SourceValue("topic"), draft, review)
}

// Scenario 9: the event log lists a run's events in order.
func TestPipeline_EventLogOfOneRetry(t *testing.T) {
	var log retry.PipelineEventLog

	out, err := oneRetryPipeline().Run(context.Background(), retry.WithObserver(log.Observe))

	require.NoError(t, err)
	assert.Equal(t, "short", out)
	const long = "a draft that is far too long"
	want := []retry.PipelineEvent{
		{Kind: retry.EventPipelineStart, Plan: []string{"source", "draft", "review"}},
		{Kind: retry.EventStageStart, Stage: 0, Name: "source", Attempt: 1, Mode: retry.ModeInitial},
		{Kind: retry.EventStageSuccess, Stage: 0, Name: "source", Attempt: 1, Output: "topic"},
		{Kind: retry.EventStageStart, Stage: 1, Name: "draft", Attempt: 1, Mode: retry.ModeInitial, Input: "topic"},
		{Kind: retry.EventStageSuccess, Stage: 1, Name: "draft", Attempt: 1, Output: long},
		{Kind: retry.EventStageStart, Stage: 2, Name: "review", Attempt: 1, Mode: retry.ModeInitial, Input: long},
		{Kind: retry.EventRetryRequest, Stage: 2, Name: "review", Attempt: 1, RetryStage: 1, Hint: "too long"},
		{Kind: retry.EventStageStart, Stage: 1, Name: "draft", Attempt: 2, Mode: retry.ModeFresh, Input: "topic"},
		{Kind: retry.EventStageSuccess, Stage: 1, Name: "draft", Attempt: 2, Output: "short"},
		{Kind: retry.EventStageStart, Stage: 2, Name: "review", Attempt: 2, Mode: retry.ModeFresh, Input: "short"},
		{Kind: retry.EventStageSuccess, Stage: 2, Name: "review", Attempt: 2, Output: "short"},
		{Kind: retry.EventComplete, Stage: 2, Name: "review", Output: "short"},
	}
	for i := range want {
		want[i].Seq = i + 1
	}
	assert.Equal(t, want, log.Events())
}

// Scenario 9: the trace of a two-stage run with one retry, as a golden file.
func TestPipeline_TraceGolden(t *testing.T) {
	var trace bytes.Buffer
	var log retry.PipelineEventLog

	_, err := oneRetryPipeline().Run(context.Background(), retry.WithTrace(&trace), retry.WithObserver(log.Observe))
	require.NoError(t, err)

	golden := filepath.Join("testdata", "pipeline_trace.golden")
	if *updatePipelineGolden {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, trace.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./retry/ -run TestPipeline_TraceGolden -update-pipeline to create it")
	assert.Equal(t, string(want), trace.String())

	var rendered bytes.Buffer
	require.NoError(t, retry.WritePipelineTrace(&rendered, log.Events()))
	assert.Equal(t, trace.String(), rendered.String(), "rendering a recorded log gives the live trace")
}

func TestPipeline_TraceLines(t *testing.T) {
	tests := []struct {
		name  string
		event retry.PipelineEvent
		want  string
	}{
		{name: "unnamed stages in plan", event: retry.PipelineEvent{Kind: retry.EventPipelineStart, Plan: []string{"source", "", "check"}}, want: "┌─ plan: source → s1 → check\n"},
		{name: "retry without hint", event: retry.PipelineEvent{Kind: retry.EventRetryRequest, Stage: 1, RetryStage: 0}, want: "├─ s1 retry request → retry s0\n"},
		{name: "multi-line hint", event: retry.PipelineEvent{Kind: retry.EventRetryRequest, Stage: 3, RetryStage: 2, Hint: "a\nb"}, want: "├─ s3 retry request → retry s2 (hint: \"a\\nb\")\n"},
		{name: "error hint", event: retry.PipelineEvent{Kind: retry.EventRetryRequest, Stage: 2, RetryStage: 1, Hint: errors.New("bad")}, want: "├─ s2 retry request → retry s1 (hint: \"bad\")\n"},
		{name: "struct hint", event: retry.PipelineEvent{Kind: retry.EventRetryRequest, Stage: 2, RetryStage: 1, Hint: struct{ N int }{3}}, want: "├─ s2 retry request → retry s1 (hint: {3})\n"},
		{name: "failure", event: retry.PipelineEvent{Kind: retry.EventStageFailure, Stage: 2, Err: errors.New("boom\nagain")}, want: "├─ s2 failed: boom\\nagain\n"},
		{name: "abort", event: retry.PipelineEvent{Kind: retry.EventAbort, Stage: 2, Err: errors.New("stage 2: boom")}, want: "└─ abort: stage 2: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, retry.WritePipelineTrace(&b, []retry.PipelineEvent{tt.event}))
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// captureStderr runs fn with os.Stderr redirected and returns what it wrote.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = saved }()
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	fn()
	require.NoError(t, w.Close())
	return <-done
}

// A run writes its trace where WithTrace says, the last one given, and
// nowhere else: the variable that once switched tracing on in the
// library (TRACT_PIPELINE_TRACE) is the program's to wire, and standard
// error is not written.
func TestPipeline_TraceOnlyThroughWithTrace(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "pipeline_trace.golden"))
	require.NoError(t, err)
	var first, last bytes.Buffer
	tests := []struct {
		name      string
		opts      []retry.PipelineOption
		into      *bytes.Buffer
		want      string
		untouched *bytes.Buffer
	}{
		{name: "no option", want: ""},
		{name: "WithTrace", opts: []retry.PipelineOption{retry.WithTrace(&last)}, into: &last, want: string(golden)},
		{name: "the last WithTrace wins", opts: []retry.PipelineOption{retry.WithTrace(&first), retry.WithTrace(&last)},
			into: &last, want: string(golden), untouched: &first},
		{name: "WithTrace(nil) last", opts: []retry.PipelineOption{retry.WithTrace(&first), retry.WithTrace(nil)}, want: "", untouched: &first},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first.Reset()
			last.Reset()
			t.Setenv("TRACT_PIPELINE_TRACE", "1")
			stderr := captureStderr(t, func() {
				_, err := oneRetryPipeline().Run(context.Background(), tt.opts...)
				assert.NoError(t, err)
			})
			assert.Empty(t, stderr, "the library writes nothing to standard error")
			if tt.into != nil {
				assert.Equal(t, tt.want, tt.into.String())
			}
			if tt.untouched != nil {
				assert.Empty(t, tt.untouched.String())
			}
		})
	}
}

// A validator that accepts answers of at most max bytes.
type maxLen struct{ max int }

func (v maxLen) Name() string { return fmt.Sprintf("maxlen:%d", v.max) }

func (v maxLen) Validate(_ context.Context, answer string) (bool, string, error) {
	if len(answer) > v.max {
		return false, fmt.Sprintf("%d characters, at most %d allowed", len(answer), v.max), nil
	}
	return true, "", nil
}

// A validator that always rejects without a diagnosis, or fails.
type badValidator struct{ err error }

func (v badValidator) Name() string { return "bad" }

func (v badValidator) Validate(context.Context, string) (bool, string, error) {
	return false, "", v.err
}

func TestPipeline_ValidatorStage(t *testing.T) {
	var hints []any
	draft := retry.NewStage("draft", func(_ context.Context, sc *sctx) (result, error) {
		hints = append(hints, sc.Hint)
		return retry.Output(strings.Repeat("x", 12-4*sc.Try)), nil
	})
	check := retry.ValidatorStage(maxLen{max: 4})
	var log retry.PipelineEventLog

	out, err := retry.NewPipeline(retry.SourceValue("topic"), draft, check).Run(context.Background(), retry.WithObserver(log.Observe))

	require.NoError(t, err)
	assert.Equal(t, "xxxx", out)
	assert.Equal(t, "maxlen:4", check.Name())
	assert.Equal(t, []any{nil, "8 characters, at most 4 allowed"}, hints)
	assert.Equal(t, []string{"source", "draft", "maxlen:4"}, log.Events()[0].Plan)
}

func TestPipeline_ValidatorStageFailures(t *testing.T) {
	broken := errors.New("judge unreachable")
	tests := []struct {
		name      string
		validator retry.Validator
		check     func(t *testing.T, hints []any, err error)
	}{
		{
			name: "empty diagnosis", validator: badValidator{},
			check: func(t *testing.T, hints []any, err error) {
				assert.ErrorIs(t, err, retry.ErrLimitExceeded)
				require.Len(t, hints, 2)
				assert.Equal(t, "validation failed", hints[1])
			},
		},
		{
			name: "validator cannot run", validator: badValidator{err: broken},
			check: func(t *testing.T, hints []any, err error) {
				assert.ErrorIs(t, err, broken)
				assert.EqualError(t, err, "stage 2 (bad): validator bad: judge unreachable")
				assert.Len(t, hints, 1)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hints []any
			draft := stage(func(_ context.Context, sc *sctx) (result, error) {
				hints = append(hints, sc.Hint)
				return retry.Output("answer"), nil
			})

			_, err := retry.NewPipeline(retry.SourceValue("topic"), draft, retry.ValidatorStage(tt.validator)).
				Run(context.Background(), retry.WithMaxRetriesPerContext(1))

			tt.check(t, hints, err)
		})
	}
}

func TestPipeline_StageResult(t *testing.T) {
	out := retry.Output("v")
	assert.False(t, out.IsRetry())
	assert.Equal(t, "v", out.Value())
	assert.Nil(t, out.Hint())

	req := retry.RetryUpstream[string]("h")
	assert.True(t, req.IsRetry())
	assert.Equal(t, "", req.Value())
	assert.Equal(t, "h", req.Hint())
}

// A pipeline holds no run state, so runs may share it.
func TestPipeline_ConcurrentRuns(t *testing.T) {
	p := oneRetryPipeline()
	var wg sync.WaitGroup
	results := make([]string, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Go(func() {
			results[i], errs[i] = p.Run(context.Background(), retry.WithTrace(io.Discard))
		})
	}
	wg.Wait()
	for i := range results {
		assert.NoError(t, errs[i])
		assert.Equal(t, "short", results[i])
	}
}

func TestPipeline_StringersForKindsAndLimits(t *testing.T) {
	assert.Equal(t, "retry request", retry.EventRetryRequest.String())
	assert.Equal(t, "abort", retry.EventAbort.String())
	assert.Equal(t, "PipelineEventKind(99)", retry.PipelineEventKind(99).String())
	assert.Equal(t, "retries per context", retry.LimitRetriesPerContext.String())
	assert.Equal(t, "executions per run", retry.LimitExecutions.String())
}

// A source made with SourceFuncWithHint sees what a retried stage sees:
// its try, the hint of stage 1, and its earlier outputs in the context.
func TestPipeline_SourceSeesHintAndTries(t *testing.T) {
	var seen []retry.SourceContext[string]
	src := retry.SourceFuncWithHint(func(_ context.Context, sc *retry.SourceContext[string]) (string, error) {
		seen = append(seen, *sc)
		return fmt.Sprintf("draft %d", sc.Try), nil
	})
	var downstream []bool
	review := retry.NewStage("review", func(_ context.Context, sc *retry.StageContext[string]) (retry.StageResult[string], error) {
		downstream = append(downstream, sc.RetriedByDownstream())
		if sc.Input != "draft 3" {
			return sc.RetryUpstream("again after " + sc.Input), nil
		}
		return retry.Output(sc.Input), nil
	})
	out, err := retry.NewPipeline(src, review).Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "draft 3", out)
	assert.Equal(t, []retry.SourceContext[string]{
		{Try: 1},
		{Try: 2, Hint: "again after draft 1", Tries: []string{"draft 1"}},
		{Try: 3, Hint: "again after draft 2", Tries: []string{"draft 1", "draft 2"}},
	}, seen)
	assert.Equal(t, []bool{false, false, false}, downstream, "the review asked; nobody asked it")
}

// RetriedByDownstream tells a stage that the stage after it asked for this
// run, and only then.
func TestStageContext_RetriedByDownstream(t *testing.T) {
	var first []bool
	a := retry.NewStage("a", func(_ context.Context, sc *retry.StageContext[string]) (retry.StageResult[string], error) {
		first = append(first, sc.RetriedByDownstream())
		return retry.Output(sc.Input + "!"), nil
	})
	asked := false
	b := retry.CheckStage("b", func(context.Context, string) (bool, any, error) {
		if asked {
			return true, nil, nil
		}
		asked = true
		return false, "once more", nil
	})
	_, err := retry.NewPipeline(retry.SourceValue("x"), a, b).Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true}, first)
}

// The trace cuts long inputs and outputs to 48 characters and gives their
// length, keeps them on one line, and prints other types with %v.
func TestPipeline_TraceShowsDataCut(t *testing.T) {
	long := strings.Repeat("é", 60) + "\nsecond line"
	var trace strings.Builder
	_, err := retry.NewPipeline(retry.SourceValue(long),
		retry.TransformStage("upper", func(_ context.Context, s string) (string, error) { return "short", nil }),
	).Run(context.Background(), retry.WithTrace(&trace))
	require.NoError(t, err)
	lines := strings.Split(trace.String(), "\n")
	want := strconv.Quote(strings.Repeat("é", 48)+"…") + fmt.Sprintf(" (%d bytes)", len(long))
	assert.Equal(t, `├─ s0 ok → `+want, lines[2])
	assert.Equal(t, `├─ s1 start (attempt 1) mode=initial ← `+want, lines[3])
	assert.Equal(t, `├─ s1 ok → "short"`, lines[4])

	var ints strings.Builder
	_, err = retry.NewPipeline(retry.SourceValue([]int{1, 2, 3})).Run(context.Background(), retry.WithTrace(&ints))
	require.NoError(t, err)
	assert.Contains(t, ints.String(), "├─ s0 ok → [1 2 3]\n")
}
