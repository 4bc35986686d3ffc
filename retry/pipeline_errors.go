package retry

import (
	"errors"
	"fmt"
)

// Errors of pipeline runs. Run returns them wrapped or as the typed errors
// below, so test them with errors.Is.
var (
	// ErrInvalidPipeline is wrapped by the error Run returns, before
	// running anything, for a pipeline without a source, with a nil stage
	// or with a negative limit.
	ErrInvalidPipeline = errors.New("invalid pipeline")

	// ErrLimitExceeded is matched by every *LimitError.
	ErrLimitExceeded = errors.New("pipeline limit exceeded")

	// ErrSourceNotRetryable is matched by *SourceNotRetryableError.
	ErrSourceNotRetryable = errors.New("pipeline source is not a function and cannot be retried")
)

// StageError is the error of a stage (or the source) that stopped a run.
// It unwraps to the stage's own error, so errors.Is and errors.As still find
// it.
type StageError struct {
	Stage int    // 1-based stage number; 0 for the source
	Name  string // the stage's name, "" when unnamed
	Err   error  // what the stage returned
}

// Error returns the StageError message.
func (e *StageError) Error() string {
	if e.Stage == 0 {
		return fmt.Sprintf("source: %v", e.Err)
	}
	return fmt.Sprintf("%s: %v", stageLabel(e.Stage, e.Name), e.Err)
}

// Unwrap returns the error the StageError wraps.
func (e *StageError) Unwrap() error { return e.Err }

// PipelineLimit names one of a pipeline run's limits.
type PipelineLimit int

// The limits of a run.
const (
	// LimitRetriesPerContext bounds the retry requests of one retry
	// context (WithMaxRetriesPerContext).
	LimitRetriesPerContext PipelineLimit = iota + 1
	// LimitRetriesPerStage bounds the retry requests one stage makes in a
	// run, over all its retry contexts (WithMaxRetriesPerStage).
	LimitRetriesPerStage
	// LimitExecutions bounds the stage executions of a run
	// (WithMaxExecutions).
	LimitExecutions
)

// String returns the PipelineLimit as users see it.
func (l PipelineLimit) String() string {
	switch l {
	case LimitRetriesPerContext:
		return "retries per context"
	case LimitRetriesPerStage:
		return "retries per stage"
	case LimitExecutions:
		return "executions per run"
	}
	return fmt.Sprintf("PipelineLimit(%d)", int(l))
}

// option is the PipelineOption that changes the limit.
func (l PipelineLimit) option() string {
	switch l {
	case LimitRetriesPerContext:
		return "retry.WithMaxRetriesPerContext"
	case LimitRetriesPerStage:
		return "retry.WithMaxRetriesPerStage"
	}
	return "retry.WithMaxExecutions"
}

// LimitError reports a run stopped by one of its limits. It matches
// ErrLimitExceeded.
type LimitError struct {
	Limit PipelineLimit // which limit was reached
	Max   int           // its value in this run

	// Stage is the stage that asked for one retry too many or, for
	// LimitExecutions, the stage that could not start; 1-based, 0 for the
	// source.
	Stage int

	// Retried is the stage Stage asked to retry (0 for the source); -1
	// for LimitExecutions.
	Retried int
}

// Error returns the LimitError message.
func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitRetriesPerContext:
		return fmt.Sprintf("retry limit: %s asked to retry %s more than %d times in one retry context (raise it with %s)",
			stageLabel(e.Stage, ""), stageLabel(e.Retried, ""), e.Max, e.Limit.option())
	case LimitRetriesPerStage:
		return fmt.Sprintf("retry limit: %s asked to retry %s more than %d times in this run (raise it with %s)",
			stageLabel(e.Stage, ""), stageLabel(e.Retried, ""), e.Max, e.Limit.option())
	}
	return fmt.Sprintf("execution limit: %d stage executions reached before %s could run (raise it with %s)",
		e.Max, stageLabel(e.Stage, ""), e.Limit.option())
}

// Is makes errors.Is(err, ErrLimitExceeded) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimitExceeded }

// SourceNotRetryableError reports a retry request for a literal source
// (SourceValue), which is a value, not a function, and so cannot be run
// again. Build the pipeline with SourceFunc to allow it. It matches
// ErrSourceNotRetryable.
type SourceNotRetryableError struct {
	Stage int // the stage that asked: always 1
	Hint  any // the hint it gave
}

// Error returns the SourceNotRetryableError message.
func (e *SourceNotRetryableError) Error() string {
	return fmt.Sprintf("%s asked to retry the source, but the source is a literal value, not a function, "+
		"and cannot be retried; build the pipeline with retry.SourceFunc to make the source retryable",
		stageLabel(e.Stage, ""))
}

// Is makes errors.Is(err, ErrSourceNotRetryable) true.
func (e *SourceNotRetryableError) Is(target error) bool { return target == ErrSourceNotRetryable }

// stageLabel names stage i as users see it: "the source", "stage 2" or
// "stage 2 (review)".
func stageLabel(i int, name string) string {
	if i == 0 {
		return "the source"
	}
	if name == "" {
		return fmt.Sprintf("stage %d", i)
	}
	return fmt.Sprintf("stage %d (%s)", i, name)
}
