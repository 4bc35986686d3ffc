package retry

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NewPipelineTracer returns an observer that writes each event to w as one
// line of a tree, as it happens:
//
//	┌─ plan: source → draft → review
//	├─ s0 start (attempt 1) mode=initial
//	├─ s0 ok → "Go"
//	├─ s1 start (attempt 1) mode=initial ← "Go"
//	├─ s1 ok → "Go is a programming language with fast builds, a…" (80 bytes)
//	├─ s2 start (attempt 1) mode=initial ← "Go is a programming language with fast builds, a…" (80 bytes)
//	├─ s2 retry request → retry s1 (hint: "too long")
//	├─ s1 start (attempt 2) mode=fresh ← "Go"
//	├─ s1 ok → "Go: small, fast, simple."
//	├─ s2 start (attempt 2) mode=fresh ← "Go: small, fast, simple."
//	├─ s2 ok → "Go: small, fast, simple."
//	└─ complete
//
// Each stage's input and output are shown, cut to 48 characters with their
// length when longer. Stages are shown as s0 (the source) to sN and unnamed
// stages as sK in the plan. The trace holds no times or durations, so a run gives the same trace
// every time. Write errors are ignored. WithTrace switches it on for a
// run.
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
		if e.Stage > 0 {
			b.WriteString(" ← " + preview(e.Input))
		}
	case EventStageSuccess:
		fmt.Fprintf(&b, "├─ s%d ok → %s", e.Stage, preview(e.Output))
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

// previewRunes is how much of a stage's input or output a trace line shows.
const previewRunes = 48

// preview shows a value on one line: a string quoted, anything else as %v,
// cut to previewRunes with its full length after it when it is longer.
func preview(v any) string {
	s, quoted := "", false
	switch v := v.(type) {
	case string:
		s, quoted = v, true
	case fmt.Stringer:
		s, quoted = v.String(), true
	default:
		s = fmt.Sprintf("%v", v)
	}
	cut := s
	if n := utf8.RuneCountInString(s); n > previewRunes {
		cut = string([]rune(s)[:previewRunes]) + "…"
	}
	out := oneLine(cut)
	if quoted {
		out = strconv.Quote(cut)
	}
	if cut != s {
		out += fmt.Sprintf(" (%d bytes)", len(s))
	}
	return out
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
