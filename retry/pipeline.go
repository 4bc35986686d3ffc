package retry

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// Default limits of one pipeline run. Each can be changed per run with
// WithMaxRetriesPerContext, WithMaxRetriesPerStage and WithMaxExecutions.
const (
	// DefaultMaxRetriesPerContext is how many retry requests one retry
	// context may hold; the next request fails the run.
	DefaultMaxRetriesPerContext = 10
	// DefaultMaxRetriesPerStage is how many retry requests one stage may
	// make in a run, summed over all its retry contexts.
	DefaultMaxRetriesPerStage = 20
	// DefaultMaxExecutions is how many stage executions (the source's
	// included) one run may make.
	DefaultMaxExecutions = 100
)

// Source is a pipeline's input, which the pipeline runs as its stage 0.
// Build one with SourceFunc (retryable) or SourceValue (a literal, not
// retryable); the zero Source is invalid and makes Run fail.
type Source[T any] struct {
	fn      func(context.Context, *SourceContext[T]) (T, error)
	value   T
	literal bool
}

// SourceContext is what a retryable source made with SourceFuncWithHint
// sees when it runs, as a stage sees its StageContext.
type SourceContext[T any] struct {
	// Try is 1 on the first run, and 1 + the retry requests so far when
	// stage 1 asked for this run.
	Try int
	// Hint is the hint stage 1 gave when it asked for this run; nil on the
	// first run.
	Hint any
	// Tries lists the source's earlier outputs in the retry context stage
	// 1 opened, oldest first (len(Tries) == Try-1); nil on the first run.
	Tries []T
}

// SourceFunc returns a retryable source: Run calls fn once at the start and
// again each time stage 1 asks to retry its upstream. fn does not see the
// hint stage 1 gives (the hint is still recorded in the event log); use
// SourceFuncWithHint when it should.
func SourceFunc[T any](fn func(ctx context.Context) (T, error)) Source[T] {
	if fn == nil {
		return Source[T]{} // invalid: Run says so
	}
	return Source[T]{fn: func(ctx context.Context, _ *SourceContext[T]) (T, error) { return fn(ctx) }}
}

// SourceFuncWithHint returns a retryable source whose function sees, like
// a stage, which try this is and the hint stage 1 gave when it asked for a
// re-run: the draft step of a draft → review pipeline gets the reviewer's
// critique.
func SourceFuncWithHint[T any](fn func(ctx context.Context, sc *SourceContext[T]) (T, error)) Source[T] {
	return Source[T]{fn: fn}
}

// SourceValue returns a literal source. It is not a function, so a retry
// request from stage 1 makes the run fail with a *SourceNotRetryableError.
func SourceValue[T any](v T) Source[T] {
	return Source[T]{value: v, literal: true}
}

// Retryable reports whether the source is a function that can be invoked
// again when stage 1 asks for a retry.
func (s Source[T]) Retryable() bool { return s.fn != nil }

func (s Source[T]) valid() bool { return s.literal || s.fn != nil }

// Stage is one step of a pipeline. Run receives the stage's view of the run
// and returns either an output (Output) or a request to retry the stage
// before it (RetryUpstream); a non-nil error stops the pipeline. Name labels
// the stage in the trace, events and errors; it may be empty.
//
// A stage never retries itself: asking for a retry re-runs its upstream
// (stage k-1, or the source for stage 1) on that stage's latest input, then
// runs this stage again on the new output.
type Stage[T any] interface {
	Name() string
	Run(ctx context.Context, sc *StageContext[T]) (StageResult[T], error)
}

// StageFunc adapts a function to an unnamed Stage. Use NewStage to give it a
// name.
type StageFunc[T any] func(ctx context.Context, sc *StageContext[T]) (StageResult[T], error)

// Name returns "": a StageFunc is unnamed and shown by its number ("s2").
func (f StageFunc[T]) Name() string { return "" }

// Run calls f.
func (f StageFunc[T]) Run(ctx context.Context, sc *StageContext[T]) (StageResult[T], error) {
	return f(ctx, sc)
}

// NewStage returns a stage called name that runs fn.
func NewStage[T any](name string, fn StageFunc[T]) Stage[T] {
	return namedStage[T]{name: name, fn: fn}
}

type namedStage[T any] struct {
	name string
	fn   StageFunc[T]
}

func (s namedStage[T]) Name() string { return s.name }

func (s namedStage[T]) Run(ctx context.Context, sc *StageContext[T]) (StageResult[T], error) {
	return s.fn(ctx, sc)
}

// TransformStage returns a stage called name that passes on what fn makes
// of its input: the common stage, in one line. It never asks for a retry.
func TransformStage[T any](name string, fn func(ctx context.Context, input T) (T, error)) Stage[T] {
	return NewStage(name, func(ctx context.Context, sc *StageContext[T]) (StageResult[T], error) {
		out, err := fn(ctx, sc.Input)
		return Output(out), err
	})
}

// CheckStage returns a stage called name that passes its input on
// unchanged when fn accepts it, and otherwise asks its upstream to retry
// with fn's hint (as ValidatorStage does for a Validator).
func CheckStage[T any](name string, fn func(ctx context.Context, input T) (ok bool, hint any, err error)) Stage[T] {
	return NewStage(name, func(ctx context.Context, sc *StageContext[T]) (StageResult[T], error) {
		ok, hint, err := fn(ctx, sc.Input)
		switch {
		case err != nil:
			return StageResult[T]{}, err
		case ok:
			return Output(sc.Input), nil
		}
		return sc.RetryUpstream(hint), nil
	})
}

// StageResult is what a stage returns: an output or a retry request. Build
// it with Output or RetryUpstream (or StageContext.RetryUpstream); the zero
// StageResult is the output of T's zero value.
type StageResult[T any] struct {
	value T
	retry bool
	hint  any
}

// Output returns a result that passes v on to the next stage (or, from the
// last stage, out of Run).
func Output[T any](v T) StageResult[T] {
	return StageResult[T]{value: v}
}

// RetryUpstream returns a result that asks to re-run the stage before this
// one, which will see hint in StageContext.Hint; hint may be nil. Inside a
// stage, sc.RetryUpstream(hint) says the same without naming T.
func RetryUpstream[T any](hint any) StageResult[T] {
	return StageResult[T]{retry: true, hint: hint}
}

// IsRetry reports whether r asks for its upstream to be retried.
func (r StageResult[T]) IsRetry() bool { return r.retry }

// Value returns the output; it is T's zero value for a retry request.
func (r StageResult[T]) Value() T { return r.value }

// Hint returns the hint of a retry request, nil for an output.
func (r StageResult[T]) Hint() any { return r.hint }

// Pipeline is a source followed by stages 1..n, where each stage may send
// work back to the stage before it. A Pipeline holds no run state: it can be
// run many times, concurrently too, each Run with its own options.
//
// The run model: the source is stage 0 and every retry is "re-run the stage
// before me". At most one retry context is active at a time, keyed by the
// (requesting, retried) pair of stages: a further request from the same
// stage reuses it and its counter grows, a request from another stage
// replaces it with a new one, and it closes when the requesting stage
// returns an output. Within the context both stages see Try (the attempt
// number, 1 + the requests so far) and Tries (the retried stage's outputs).
type Pipeline[T any] struct {
	source Source[T]
	stages []Stage[T]
}

// NewPipeline returns a pipeline that feeds source into stages, in order.
// Users see the stages numbered from 1; the source is "source" (s0 in a
// trace). With no stages, Run returns the source's value.
func NewPipeline[T any](source Source[T], stages ...Stage[T]) *Pipeline[T] {
	return &Pipeline[T]{source: source, stages: slices.Clone(stages)}
}

// PipelineOption changes one Run of a pipeline.
type PipelineOption func(*pipelineConfig)

type pipelineConfig struct {
	maxPerContext int
	maxPerStage   int
	maxExecutions int
	observers     []func(PipelineEvent)
	trace         io.Writer
}

// WithMaxRetriesPerContext sets how many retry requests one retry context
// may hold (default DefaultMaxRetriesPerContext); the request after the
// last allowed one fails the run with a *LimitError. 0 forbids retries.
func WithMaxRetriesPerContext(n int) PipelineOption {
	return func(c *pipelineConfig) { c.maxPerContext = n }
}

// WithMaxRetriesPerStage sets how many retry requests one stage may make in
// a run, over all its retry contexts (default DefaultMaxRetriesPerStage);
// the request after the last allowed one fails the run with a *LimitError.
func WithMaxRetriesPerStage(n int) PipelineOption {
	return func(c *pipelineConfig) { c.maxPerStage = n }
}

// WithMaxExecutions sets how many stage executions, the source's included,
// a run may make (default DefaultMaxExecutions); the run fails with a
// *LimitError instead of starting one more.
func WithMaxExecutions(n int) PipelineOption {
	return func(c *pipelineConfig) { c.maxExecutions = n }
}

// WithObserver adds fn to the functions that receive every event of the
// run, in order, synchronously on the goroutine that called Run. The option
// may be given more than once; observers are called in the order given.
func WithObserver(fn func(PipelineEvent)) PipelineOption {
	return func(c *pipelineConfig) {
		if fn != nil {
			c.observers = append(c.observers, fn)
		}
	}
}

// WithTrace writes the run's trace (see NewPipelineTracer) to w; the last
// WithTrace given wins, and WithTrace(nil) writes none. Without it a run
// writes no trace: the package reads no environment variable and writes
// to no stream of its own. Write errors are ignored: tracing never fails
// a run.
func WithTrace(w io.Writer) PipelineOption {
	return func(c *pipelineConfig) { c.trace = w }
}

// Run runs the pipeline and returns the last stage's output. It fails with
// an error wrapping ErrInvalidPipeline before running anything when the
// source or a stage is missing or a limit is negative; with a *StageError
// when the source or a stage returns an error; with a *LimitError or a
// *SourceNotRetryableError when a retry request cannot be honoured; and
// with ctx's error when ctx is done before a stage starts (a stage should
// itself return when ctx is done while it runs).
func (p *Pipeline[T]) Run(ctx context.Context, opts ...PipelineOption) (T, error) {
	cfg := pipelineConfig{
		maxPerContext: DefaultMaxRetriesPerContext,
		maxPerStage:   DefaultMaxRetriesPerStage,
		maxExecutions: DefaultMaxExecutions,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	var zero T
	if err := p.check(cfg); err != nil {
		return zero, err
	}
	r := &pipelineRun[T]{
		p:        p,
		cfg:      cfg,
		outputs:  make([]T, len(p.stages)+1),
		ran:      make([]bool, len(p.stages)+1),
		requests: make([]int, len(p.stages)+1),
		names:    make([]string, len(p.stages)+1),
	}
	r.names[0] = "source"
	for i, s := range p.stages {
		r.names[i+1] = s.Name()
	}
	if cfg.trace != nil {
		r.observers = append(r.observers, NewPipelineTracer(cfg.trace))
	}
	r.observers = append(r.observers, cfg.observers...)
	return r.run(ctx)
}

// check reports a pipeline or configuration that cannot run.
func (p *Pipeline[T]) check(cfg pipelineConfig) error {
	if !p.source.valid() {
		return fmt.Errorf("%w: no source; build one with retry.SourceFunc or retry.SourceValue", ErrInvalidPipeline)
	}
	for i, s := range p.stages {
		if isNilStage(s) {
			return fmt.Errorf("%w: stage %d is nil", ErrInvalidPipeline, i+1)
		}
	}
	for _, l := range []struct {
		name string
		n    int
	}{
		{"WithMaxRetriesPerContext", cfg.maxPerContext},
		{"WithMaxRetriesPerStage", cfg.maxPerStage},
		{"WithMaxExecutions", cfg.maxExecutions},
	} {
		if l.n < 0 {
			return fmt.Errorf("%w: %s(%d): a limit cannot be negative", ErrInvalidPipeline, l.name, l.n)
		}
	}
	return nil
}

func isNilStage[T any](s Stage[T]) bool {
	switch s := s.(type) {
	case nil:
		return true
	case StageFunc[T]:
		return s == nil
	case namedStage[T]:
		return s.fn == nil
	}
	return false
}

// pipelineRun is the state of one Run; it is used by one goroutine only.
type pipelineRun[T any] struct {
	p         *Pipeline[T]
	cfg       pipelineConfig
	observers []func(PipelineEvent)
	seq       int // events emitted so far

	outputs    []T    // latest output of each stage, 0 being the source
	ran        []bool // whether each stage has executed in this run
	base       T      // the source's first output
	requests   []int  // retry requests made by each stage in this run
	executions int    // stage executions so far, the source's included

	active   *retryContext[T]   // the open retry context, nil when none
	contexts []*retryContext[T] // every context of the run, oldest first
	names    []string           // stage names, "source" first
}

// retryContext is one retry context: requester asked retried (its upstream)
// for a new output requests times.
type retryContext[T any] struct {
	requester int
	retried   int
	requests  int
	tries     []T // retried's outputs: the rejected one, then one per re-run
}

func (r *pipelineRun[T]) emit(e PipelineEvent) {
	r.seq++
	e.Seq = r.seq
	if e.Name == "" && e.Kind != EventPipelineStart {
		e.Name = r.names[e.Stage]
	}
	for _, o := range r.observers {
		o(e)
	}
}

// abort emits the abort event for err at stage and returns err.
func (r *pipelineRun[T]) abort(stage int, err error) (T, error) {
	r.emit(PipelineEvent{Kind: EventAbort, Stage: stage, Err: err})
	var zero T
	return zero, err
}

func (r *pipelineRun[T]) run(ctx context.Context) (T, error) {
	n := len(r.p.stages)
	r.emit(PipelineEvent{Kind: EventPipelineStart, Plan: slices.Clone(r.names)})

	var hint any // the hint for the stage about to run, from its downstream
	for i := 0; i <= n; {
		if err := ctx.Err(); err != nil {
			if cause := context.Cause(ctx); cause != err {
				err = fmt.Errorf("%w (%w)", err, cause)
			}
			return r.abort(i, fmt.Errorf("pipeline stopped before %s: %w", stageLabel(i, r.names[i]), err))
		}
		if r.executions >= r.cfg.maxExecutions {
			return r.abort(i, &LimitError{Limit: LimitExecutions, Max: r.cfg.maxExecutions, Stage: i, Retried: -1})
		}
		r.executions++

		try, tries, requester := r.view(i)
		mode := ModeInitial
		if r.ran[i] {
			mode = ModeFresh
		}
		r.ran[i] = true
		var input any
		if i > 0 {
			input = r.outputs[i-1]
		}
		r.emit(PipelineEvent{Kind: EventStageStart, Stage: i, Attempt: try, Mode: mode, Input: input})

		var res StageResult[T]
		var err error
		if i == 0 {
			res, err = r.runSource(ctx, &SourceContext[T]{Try: try, Hint: hint, Tries: tries})
		} else {
			sc := &StageContext[T]{
				Input:     r.outputs[i-1],
				Base:      r.base,
				Stage:     i,
				Name:      r.names[i],
				Try:       try,
				Tries:     tries,
				Requester: requester,
				Hint:      hint,
				Outputs:   slices.Clone(r.outputs[:i]),
				contexts:  r.snapshotContexts(),
			}
			res, err = r.p.stages[i-1].Run(ctx, sc)
		}
		hint = nil
		if err != nil {
			r.emit(PipelineEvent{Kind: EventStageFailure, Stage: i, Attempt: try, Err: err})
			return r.abort(i, &StageError{Stage: i, Name: r.names[i], Err: err})
		}

		if !res.retry {
			r.outputs[i] = res.value
			if i == 0 && r.executions == 1 {
				r.base = res.value
			}
			r.emit(PipelineEvent{Kind: EventStageSuccess, Stage: i, Attempt: try, Output: res.value})
			if a := r.active; a != nil {
				if a.retried == i {
					a.tries = append(a.tries, res.value)
				}
				if a.requester == i {
					r.active = nil
				}
			}
			i++
			continue
		}

		r.emit(PipelineEvent{Kind: EventRetryRequest, Stage: i, Attempt: try, RetryStage: i - 1, Hint: res.hint})
		if err := r.request(i, res.hint); err != nil {
			return r.abort(i, err)
		}
		hint = res.hint
		i--
	}

	out := r.outputs[n]
	r.emit(PipelineEvent{Kind: EventComplete, Stage: n, Output: out})
	return out, nil
}

// runSource executes stage 0.
func (r *pipelineRun[T]) runSource(ctx context.Context, sc *SourceContext[T]) (StageResult[T], error) {
	if r.p.source.literal {
		return Output(r.p.source.value), nil
	}
	v, err := r.p.source.fn(ctx, sc)
	return Output(v), err
}

// request records a retry request by stage i for stage i-1: it opens,
// reuses or replaces the retry context and checks the limits.
func (r *pipelineRun[T]) request(i int, hint any) error {
	if i == 1 && !r.p.source.Retryable() {
		return &SourceNotRetryableError{Stage: 1, Hint: hint}
	}
	if a := r.active; a != nil && a.requester == i {
		a.requests++
	} else {
		a = &retryContext[T]{requester: i, retried: i - 1, requests: 1, tries: []T{r.outputs[i-1]}}
		r.contexts = append(r.contexts, a)
		r.active = a
	}
	r.requests[i]++
	if r.active.requests > r.cfg.maxPerContext {
		return &LimitError{Limit: LimitRetriesPerContext, Max: r.cfg.maxPerContext, Stage: i, Retried: i - 1}
	}
	if r.requests[i] > r.cfg.maxPerStage {
		return &LimitError{Limit: LimitRetriesPerStage, Max: r.cfg.maxPerStage, Stage: i, Retried: i - 1}
	}
	return nil
}

// view returns what stage i sees of the active retry context: Try, a copy
// of Tries and the requesting stage (0 when i is not part of the context).
func (r *pipelineRun[T]) view(i int) (try int, tries []T, requester int) {
	a := r.active
	if a == nil || (a.requester != i && a.retried != i) {
		return 1, nil, 0
	}
	return a.requests + 1, slices.Clone(a.tries), a.requester
}

// snapshotContexts returns the run's retry contexts as they are now. Only
// slice headers are copied: tries slices are append-only, so the elements
// they cover never change, and StageContext.AllTries copies them on demand.
func (r *pipelineRun[T]) snapshotContexts() []ContextTries[T] {
	if len(r.contexts) == 0 {
		return nil
	}
	s := make([]ContextTries[T], len(r.contexts))
	for k, c := range r.contexts {
		s[k] = ContextTries[T]{Requester: c.requester, Retried: c.retried, Tries: slices.Clip(c.tries)}
	}
	return s
}
