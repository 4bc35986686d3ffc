package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// The values of --on-exhausted that are no answer: ask asks a person at
// the terminal; wait records the escalation in the repository and waits
// for its answer, and exit records it and exits (see chat_resume.go).
const (
	onExhaustedAsk  = "ask"
	onExhaustedWait = "wait"
	onExhaustedExit = "exit"
)

// The values of --on-exhausted: an answer, ask, wait or exit.
var onExhaustedValues = []string{string(tract.ResolveAbort), string(tract.ResolveSkip), string(tract.ResolveRetry),
	onExhaustedAsk, onExhaustedWait, onExhaustedExit}

// checkEscalationFlags refuses --on-exhausted and --fix values chat cannot
// act on, and ask without a terminal to ask on: a one-shot chat never
// waits for keyboard input unless asked to, and when asked, it cannot
// read an answer from a pipe that carries something else.
func checkEscalationFlags(f *Factory, opts *ChatOptions) error {
	switch {
	case !slices.Contains(onExhaustedValues, opts.OnExhausted):
		return usageErrorf("--on-exhausted %q: give abort, skip, retry, ask, wait or exit", opts.OnExhausted)
	case opts.OnExhausted == onExhaustedAsk && !(f.IO.InTTY && f.IO.ErrTTY):
		return usageErrorf("--on-exhausted ask reads your answer from the terminal, but standard input or standard error is not one: " +
			"give abort, skip or retry instead")
	case opts.FixSet && strings.TrimSpace(opts.Fix) == "":
		return usageErrorf("--fix needs an instruction for the model")
	case opts.FixSet && waitsInRepo(opts):
		return usageErrorf("--fix answers the first escalation here, and --on-exhausted %s has every escalation answered "+
			"in the repository: give one of them (answer with 'tract escalation answer ID \"fix: TEXT\"')", opts.OnExhausted)
	}
	return nil
}

// waitsInRepo reports a chat whose escalations wait in the repository
// (--on-exhausted wait or exit).
func waitsInRepo(opts *ChatOptions) bool {
	return opts.OnExhausted == onExhaustedWait || opts.OnExhausted == onExhaustedExit
}

// escalationOption is how 'tract chat' has its escalations answered: in
// the repository (wait, exit), else by escalationHook.
func escalationOption(f *Factory, opts *ChatOptions) (tract.ChatOption, error) {
	if !waitsInRepo(opts) {
		return tract.OnEscalation(escalationHook(f, opts)), nil
	}
	wopts, err := waitOptions(f, opts)
	if err != nil {
		return nil, err
	}
	return tract.EscalateWait(wopts...), nil
}

// escalationHook is how a one-shot 'tract chat' answers an escalation:
// --fix (once, for an exhaustion), then --on-exhausted: its answer
// (abort by default), or with ask the person at the terminal. The same
// hook whether or not a flag was given, so that the default abort is
// recorded (a note, the user_response event) as an explicit one is.
func escalationHook(f *Factory, opts *ChatOptions) tract.EscalationFunc {
	var ask tract.EscalationFunc
	if opts.OnExhausted == onExhaustedAsk {
		ask = promptEscalation(bufio.NewReader(f.IO.In), f.IO.ErrOut)
	}
	return scriptedEscalation(f.IO.ErrOut, opts.Fix, tract.ResolutionAction(opts.OnExhausted), ask)
}

// scriptedEscalation answers an exhaustion with fix (once, when given),
// then with then, or by asking (ask, when not nil). A model server that
// stayed unavailable is answered with then too (a fix is guidance for the
// model, which was not reached); any other escalation (a failure
// retrying cannot fix) is aborted, unless asked. It says on w each answer
// it gives but abort, which the turn's error then reports.
func scriptedEscalation(w io.Writer, fix string, then tract.ResolutionAction, ask tract.EscalationFunc) tract.EscalationFunc {
	fixed := fix == ""
	return func(ctx context.Context, e tract.Escalation) (tract.Resolution, error) {
		res := tract.Resolution{Action: then}
		switch {
		case e.Reason == tract.EscalateMaxRetries && !fixed:
			res, fixed = tract.Resolution{Action: tract.ResolveFix, Instruction: fix}, true
		case ask != nil:
			return ask(ctx, e)
		case e.Reason != tract.EscalateMaxRetries && e.Reason != tract.EscalateTransport:
			res.Action = tract.ResolveAbort
		}
		if res.Action != tract.ResolveAbort { // an abort's error line says it
			fmt.Fprintf(w, "escalated: %s after %d of %d attempts (round %d); answer: %s\n",
				e.Reason, e.Attempts, e.MaxAttempts, e.Round, res)
		}
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
// the attempt history, the last error's details and the options. It is
// printed on a terminal (--on-exhausted ask needs one): the texts it
// quotes (errors, a validator's output) go through the screen sanitiser,
// and an error is one line of the history's table.
func writeEscalation(w io.Writer, e tract.Escalation) {
	task := screenText(e.Task)
	if task == "" {
		task = "(no task id)"
	}
	fmt.Fprintf(w, "\nTask escalation required\n\nTask:     %s\nReason:   %s\nAttempts: %d of %d (round %d of at most %d; %s in all)\n",
		task, e.Reason, e.Attempts, e.MaxAttempts, e.Round, tract.MaxRounds, english.Count(e.TotalAttempts, "attempt", "attempts"))
	writeAttemptHistory(w, e.Failures)
	fmt.Fprint(w, "\nOptions:\n"+
		"  retry              a fresh round of attempts\n"+
		"  skip               give the task up (a skip note is committed); exit 6\n"+
		"  abort              stop here; everything so far stays in the repository\n"+
		"  fix: INSTRUCTION   one more round, with INSTRUCTION as the model's first guidance\n")
}

// writeAttemptHistory prints an escalation's failure records, one line
// of a table each (an error flattened to its line), then the last one's
// details and suggested fix: nothing when there are none.
func writeAttemptHistory(w io.Writer, fs []tract.FailureRecord) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAttempt history:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ATTEMPT\tTIME\tTYPE\tERROR")
	for _, r := range fs {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", r.Attempt, r.Timestamp.Local().Format(time.DateTime), r.Type, screenText(flattenLines(r.Error)))
	}
	tw.Flush()
	last := fs[len(fs)-1]
	fmt.Fprintf(w, "\nLast error details:\n%s\n", indent(screenText(strings.TrimRight(nonBlank(last.Details, last.Error), "\n")), "  "))
	if last.SuggestedFix != "" {
		fmt.Fprintf(w, "Suggested fix: %s\n", screenText(last.SuggestedFix))
	}
}

// nonBlank returns s, or fallback when s is blank.
func nonBlank(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}
