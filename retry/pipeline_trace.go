package retry

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NewPipelineTracer returns an observer that writes each event to w as one
// line of a tree, as it happens:
//
//	┌─ plan: source → draft → review
//	├─ s0 start (attempt 1) mode=initial
//	├─ s0 ok
//	├─ s1 start (attempt 1) mode=initial
//	├─ s1 ok
//	├─ s2 start (attempt 1) mode=initial
//	├─ s2 retry request → retry s1 (hint: "too long")
//	├─ s1 start (attempt 2) mode=fresh
//	├─ s1 ok
//	├─ s2 start (attempt 2) mode=fresh
//	├─ s2 ok
//	└─ complete
//
// Stages are shown as s0 (the source) to sN and unnamed stages as sK in the
// plan. The trace holds no times or durations, so a run gives the same trace
// every time. Write errors are ignored. WithTrace and TraceEnv switch it on
// for a run.
func NewPipelineTracer(w io.Writer) func(PipelineEvent) {
	return func(e PipelineEvent) {
		_, _ = io.WriteString(w, traceLine(e)) // tracing never fails a run
	}
}

// WritePipelineTrace writes the trace of recorded events (see
// NewPipelineTracer) to w.
func WritePipelineTrace(w io.Writer, events []PipelineEvent) error {
	for _, e := range events {
		if _, err := io.WriteString(w, traceLine(e)); err != nil {
			return err
		}
	}
	return nil
}

// traceLine renders e as one line, newline included.
func traceLine(e PipelineEvent) string {
	var b strings.Builder
	switch e.Kind {
	case EventPipelineStart:
		b.WriteString("┌─ plan: ")
		for i, name := range e.Plan {
			if i > 0 {
				b.WriteString(" → ")
			}
			if name == "" {
				name = "s" + strconv.Itoa(i)
			}
			b.WriteString(oneLine(name))
		}
	case EventStageStart:
		fmt.Fprintf(&b, "├─ s%d start (attempt %d) mode=%s", e.Stage, e.Attempt, e.Mode)
	case EventStageSuccess:
		fmt.Fprintf(&b, "├─ s%d ok", e.Stage)
	case EventRetryRequest:
		fmt.Fprintf(&b, "├─ s%d retry request → retry s%d", e.Stage, e.RetryStage)
		if e.Hint != nil {
			fmt.Fprintf(&b, " (hint: %s)", formatHint(e.Hint))
		}
	case EventStageFailure:
		fmt.Fprintf(&b, "├─ s%d failed: %s", e.Stage, errorText(e.Err))
	case EventComplete:
		b.WriteString("└─ complete")
	case EventAbort:
		fmt.Fprintf(&b, "└─ abort: %s", errorText(e.Err))
	default:
		fmt.Fprintf(&b, "├─ %v", e.Kind)
	}
	b.WriteByte('\n')
	return b.String()
}

// formatHint quotes text hints (strings, errors, Stringers) and prints other
// values with %v, keeping the result on one line.
func formatHint(h any) string {
	switch h := h.(type) {
	case string:
		return strconv.Quote(h)
	case error:
		return strconv.Quote(h.Error())
	case fmt.Stringer:
		return strconv.Quote(h.String())
	}
	return oneLine(fmt.Sprintf("%v", h))
}

func errorText(err error) string {
	if err == nil {
		err = errors.New("<nil>")
	}
	return oneLine(err.Error())
}

// oneLine escapes line breaks so that every event stays on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
