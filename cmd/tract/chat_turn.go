package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// A failed turn (exhausted validation, a failed model call, an
// interrupt) leaves the branch ending in its user message and error
// commits (tract.TurnUnanswered). 'tract chat' says so when it happens and
// prints the two ways out; the next 'tract chat MESSAGE' warns before it
// sends, and still sends: a second user message in a row is what some
// conversations want, and the warning names both fixes.

// failedTurnError is a chat's error when the turn left the branch ending
// in its unanswered message: printError adds the way out after the
// error and its hint.
type failedTurnError struct {
	err  error
	turn *tract.Turn
	// branch is --branch ("" for HEAD's branch).
	branch string
	// again are the flags of the turn that sending the message again
	// needs too (see againFlags).
	again []string
}

func (e *failedTurnError) Error() string { return e.err.Error() }
func (e *failedTurnError) Unwrap() error { return e.err }

// recovery says how to go on from the unanswered message the failed turn
// left, or "" when err is not a failedTurnError.
func recovery(err error) string {
	var ft *failedTurnError
	if !errors.As(err, &ft) {
		return ""
	}
	return fmt.Sprintf("The branch now ends in your message %s with no answer (%s); a new message would follow it,\n"+
		"so the model would see two user messages in a row. Either send it again: %s\n"+
		"or take it off the branch (it stays in 'tract log --all'): %s",
		ft.turn.User.Short(), turnParts(ft.turn), retryLastCommand(ft.branch, ft.again), resetCommand(ft.branch, ft.turn))
}

// turnParts lists what an unanswered turn holds after its message.
func turnParts(t *tract.Turn) string {
	after := t.Commits - 1
	if after == 0 {
		return "nothing after it"
	}
	if t.Errors == after {
		return english.Count(t.Errors, "error commit", "error commits") + " after it"
	}
	return english.Count(t.Errors, "error commit", "error commits") + " and " +
		english.Count(after-t.Errors, "note", "notes") + " after it"
}

// retryLastCommand is the command that sends the unanswered message
// again, with the turn's validators when they are known.
func retryLastCommand(branch string, again []string) string {
	cmd := "tract chat --retry-last"
	if branch != "" {
		cmd = "tract chat --branch " + shellQuote(branch) + " --retry-last"
	}
	for i := 0; i+1 < len(again); i += 2 {
		cmd += " " + again[i]
		if again[i+1] != "" {
			cmd += " " + shellQuote(again[i+1])
		}
	}
	return cmd
}

// againFlags are the flags of a chat that sending its message again
// needs, as flag and value pairs (a value "" for a flag that takes none):
// its validators, its tools and the approval of their runs.
func againFlags(opts *ChatOptions) []string {
	var again []string
	for _, spec := range opts.Validate {
		again = append(again, "--validate", spec)
	}
	for _, v := range opts.ToolFlags.Tools {
		again = append(again, "--tool", v)
	}
	for _, v := range opts.ToolFlags.Schemas {
		again = append(again, "--tool-schema", v)
	}
	if opts.ToolFlags.Approve {
		again = append(again, "--approve-tools", "")
	}
	return again
}

// shellQuote quotes s for a POSIX shell when it needs quoting, so that a
// command printed as a hint can be pasted as it is.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func resetCommand(branch string, t *tract.Turn) string {
	if branch != "" {
		return fmt.Sprintf("tract reset --soft --branch %s HEAD~%d", shellQuote(branch), t.Commits)
	}
	return fmt.Sprintf("tract reset --soft HEAD~%d", t.Commits)
}

// failedTurn wraps err, the failure of a turn whose message is user, in
// a *failedTurnError when the turn left the branch ending in user,
// unanswered. It reads the branch even when the turn was interrupted.
func failedTurn(ctx context.Context, t *tract.Tract, opts *ChatOptions, user tract.Hash, err error) error {
	if err == nil || user.IsZero() {
		return err
	}
	turn, perr := t.PendingTurn(context.WithoutCancel(ctx))
	if perr != nil || turn == nil || turn.User != user {
		return err // the branch moved on, or cannot be read: nothing to advise
	}
	return &failedTurnError{err: err, turn: turn, branch: opts.Branch, again: againFlags(opts)}
}

// warnPending returns the callback of tract.OnPendingTurn that prints a
// warning on w: the branch ends in an unanswered message, which the
// message about to be sent follows. It says a turn failed only when one
// left its error commit; a message committed by hand, or one whose turn
// was interrupted, has nothing after it.
func warnPending(w io.Writer, branch string) func(*tract.Turn) {
	return func(turn *tract.Turn) {
		how := "which has no answer"
		if turn.Errors > 0 {
			how = "left unanswered by a failed turn"
		}
		fmt.Fprintf(w, "warning: the branch ends in your message %s, %s (%s);\n"+
			"this message follows it, so the model sees two user messages in a row. Sending anyway.\n"+
			"Before a new message, '%s' answers the unanswered one and '%s' drops it.\n",
			turn.User.Short(), how, turnParts(turn), retryLastCommand(branch, nil), resetCommand(branch, turn))
	}
}

// checkRetryLast refuses what --retry-last cannot be given with.
func checkRetryLast(opts *ChatOptions, args []string) error {
	switch {
	case !opts.RetryLast:
		return nil
	case len(args) > 0:
		return usageErrorf("--retry-last sends the branch's last message again: give no MESSAGE")
	case opts.Interactive:
		return usageErrorf("--retry-last and --interactive cannot be combined: /retry replaces the last interaction in the REPL")
	case opts.System != "":
		return usageErrorf("--retry-last cannot add --system: the system prompt would follow the message it should precede")
	case opts.New:
		return usageErrorf("--retry-last and --new cannot be combined: a new conversation has no message to answer again")
	}
	return nil
}

// runTurn runs the turn of 'tract chat': the message, or with
// --retry-last the branch's unanswered message again. A message sent
// after an unanswered one is warned about first.
func runTurn(ctx context.Context, f *Factory, t *tract.Tract, opts *ChatOptions, text string, copts []tract.ChatOption) (*tract.ChatResult, error) {
	if opts.RetryLast {
		return t.RetryLast(ctx, copts...)
	}
	if opts.Resume != "" {
		return resumeTurn(ctx, f, t, opts, copts)
	}
	warnWaitingEscalation(ctx, f, t)
	return t.Chat(ctx, text, append(copts, tract.OnPendingTurn(warnPending(f.IO.ErrOut, opts.Branch)))...)
}
