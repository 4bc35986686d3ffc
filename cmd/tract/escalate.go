package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// The values of --on-exhausted.
var onExhaustedValues = []tract.ResolutionAction{tract.ResolveAbort, tract.ResolveSkip, tract.ResolveRetry}

// checkEscalationFlags refuses --on-exhausted and --fix values chat cannot
// act on.
func checkEscalationFlags(opts *ChatOptions) error {
	known := false
	for _, v := range onExhaustedValues {
		known = known || tract.ResolutionAction(opts.OnExhausted) == v
	}
	switch {
	case !known:
		return usageErrorf("--on-exhausted %q: give abort, skip or retry", opts.OnExhausted)
	case opts.FixSet && strings.TrimSpace(opts.Fix) == "":
		return usageErrorf("--fix needs an instruction for the model")
	}
	return nil
}

// escalationHook is how 'tract chat' answers an escalation: --fix (once)
// and then --on-exhausted when either was given; else a person at the
// terminal when standard input and standard error are terminals; else
// nothing (nil): the turn ends as without a hook, which is abort.
func escalationHook(f *Factory, opts *ChatOptions) tract.EscalationFunc {
	switch {
	case opts.FixSet || opts.OnExhaustedSet:
		return scriptedEscalation(f.IO.ErrOut, opts.Fix, tract.ResolutionAction(opts.OnExhausted))
	case f.IO.InTTY && f.IO.ErrTTY:
		return promptEscalation(bufio.NewReader(f.IO.In), f.IO.ErrOut)
	}
	return nil
}

// scriptedEscalation answers an exhaustion with fix (once, when given),
// then with then; any other escalation (a failure retrying cannot fix) is
// aborted. It says each answer on w.
func scriptedEscalation(w io.Writer, fix string, then tract.ResolutionAction) tract.EscalationFunc {
	fixed := fix == ""
	return func(_ context.Context, e tract.Escalation) (tract.Resolution, error) {
		res := tract.Resolution{Action: then}
		switch {
		case e.Reason != tract.EscalateMaxRetries:
			res.Action = tract.ResolveAbort
		case !fixed:
			res, fixed = tract.Resolution{Action: tract.ResolveFix, Instruction: fix}, true
		}
		fmt.Fprintf(w, "escalated: %s after %d of %d attempts (round %d); answer: %s\n",
			e.Reason, e.Attempts, e.MaxAttempts, e.Round, res)
		return res, nil
	}
}

// promptEscalation prints each escalation on w and reads the answer from
// in, asking again after an answer it cannot read; the end of the input
// answers abort.
func promptEscalation(in *bufio.Reader, w io.Writer) tract.EscalationFunc {
	return func(ctx context.Context, e tract.Escalation) (tract.Resolution, error) {
		writeEscalation(w, e)
		for {
			fmt.Fprint(w, "Your answer: ")
			line, err := in.ReadString('\n')
			if err := ctx.Err(); err != nil {
				return tract.Resolution{}, err
			}
			if strings.TrimSpace(line) == "" && errors.Is(err, io.EOF) {
				fmt.Fprintln(w, "abort (end of input)")
				return tract.Resolution{Action: tract.ResolveAbort}, nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return tract.Resolution{}, fmt.Errorf("read the answer: %w", err)
			}
			res, perr := tract.ParseResolution(line)
			if perr == nil {
				return res, nil
			}
			fmt.Fprintln(w, perr)
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(w, "abort (end of input)")
				return tract.Resolution{Action: tract.ResolveAbort}, nil
			}
		}
	}
}

// writeEscalation prints the escalation message: the task, the attempts,
// the attempt history, the last error's details and the options.
func writeEscalation(w io.Writer, e tract.Escalation) {
	task := e.Task
	if task == "" {
		task = "(no task id)"
	}
	fmt.Fprintf(w, "\nTask escalation required\n\nTask:     %s\nReason:   %s\nAttempts: %d of %d (round %d of at most %d; %s in all)\n",
		task, e.Reason, e.Attempts, e.MaxAttempts, e.Round, tract.MaxRounds, english.Count(e.TotalAttempts, "attempt", "attempts"))
	if len(e.Failures) > 0 {
		fmt.Fprintln(w, "\nAttempt history:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  ATTEMPT\tTIME\tTYPE\tERROR")
		for _, r := range e.Failures {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", r.Attempt, r.Timestamp.Local().Format(time.DateTime), r.Type, r.Error)
		}
		tw.Flush()
		last := e.Failures[len(e.Failures)-1]
		fmt.Fprintf(w, "\nLast error details:\n%s\n", indent(strings.TrimRight(nonBlank(last.Details, last.Error), "\n"), "  "))
		if last.SuggestedFix != "" {
			fmt.Fprintf(w, "Suggested fix: %s\n", last.SuggestedFix)
		}
	}
	fmt.Fprint(w, "\nOptions:\n"+
		"  retry              a fresh round of attempts\n"+
		"  skip               give the task up (a skip note is committed); exit 6\n"+
		"  abort              stop here; everything so far stays in the repository\n"+
		"  fix: INSTRUCTION   one more round, with INSTRUCTION as the model's first guidance\n")
}

// nonBlank returns s, or fallback when s is blank.
func nonBlank(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}
