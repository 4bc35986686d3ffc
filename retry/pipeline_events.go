package retry

import (
	"fmt"
	"slices"
	"sync"
)

// PipelineEventKind says what a PipelineEvent reports.
type PipelineEventKind int

// The kinds of pipeline events. A run emits EventPipelineStart first and
// EventComplete or EventAbort last; in between, each stage execution emits
// EventStageStart followed by EventStageSuccess, EventRetryRequest or
// EventStageFailure.
const (
	// EventPipelineStart opens the log; Plan names the source and stages.
	EventPipelineStart PipelineEventKind = iota + 1
	// EventStageStart: Stage starts its Attempt-th try in Mode.
	EventStageStart
	// EventStageSuccess: Stage returned Output.
	EventStageSuccess
	// EventRetryRequest: Stage asked to retry RetryStage with Hint.
	EventRetryRequest
	// EventStageFailure: Stage returned the error Err.
	EventStageFailure
	// EventComplete: the run returned Output, the last stage's output.
	EventComplete
	// EventAbort: the run failed with Err at Stage.
	EventAbort
)

// String returns the PipelineEventKind as users see it.
func (k PipelineEventKind) String() string {
	switch k {
	case EventPipelineStart:
		return "pipeline start"
	case EventStageStart:
		return "stage start"
	case EventStageSuccess:
		return "stage success"
	case EventRetryRequest:
		return "retry request"
	case EventStageFailure:
		return "stage failure"
	case EventComplete:
		return "complete"
	case EventAbort:
		return "abort"
	}
	return fmt.Sprintf("PipelineEventKind(%d)", int(k))
}

// StageMode says why a stage executes.
type StageMode string

// The modes of a stage start.
const (
	// ModeInitial is a stage's first execution in a run.
	ModeInitial StageMode = "initial"
	// ModeFresh is any later execution: the stage runs again because of a
	// retry request, as the retried stage or as the requester.
	ModeFresh StageMode = "fresh"
)

// PipelineEvent is one entry of a run's ordered event log. Stage numbers are
// as users see them, 0 being the source. Fields that do not apply to a Kind
// are zero.
type PipelineEvent struct {
	Kind PipelineEventKind
	Seq  int // 1-based position in the run's log

	// Stage is the stage the event is about. For EventPipelineStart it is
	// 0, for EventComplete the last stage, for EventAbort the stage that
	// was running or about to run.
	Stage int
	Name  string // Stage's name; "source" for 0, "" when unnamed

	Attempt int       // the stage's Try (stage start, success, retry request, failure)
	Mode    StageMode // stage start
	Input   any       // stage start: the stage's input (nil for the source)

	RetryStage int // retry request: the stage to re-run, Stage-1
	Hint       any // retry request: the hint given

	Output any   // stage success and complete: the output
	Err    error // stage failure: the stage's error; abort: the error Run returns

	Plan []string // pipeline start: the names of the source and stages, in order
}

// PipelineEventLog records the events of pipeline runs in order. Pass its
// Observe method to WithObserver. It is safe for concurrent use, but events
// of concurrent runs interleave.
type PipelineEventLog struct {
	mu     sync.Mutex // guards events
	events []PipelineEvent
}

// Observe appends e to the log.
func (l *PipelineEventLog) Observe(e PipelineEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// Events returns a copy of the events recorded so far, oldest first.
func (l *PipelineEventLog) Events() []PipelineEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}
