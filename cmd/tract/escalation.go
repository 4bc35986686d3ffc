package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// newCmdEscalation is 'tract escalation': the commands on one escalation
// that waits in the repository.
func newCmdEscalation(f *Factory, runF func(*EscalationOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escalation",
		Short: "Show or answer an escalation that waits in the repository",
		Long: `Show or answer one of the escalations 'tract escalations' lists: those of
turns run with 'tract chat --on-exhausted wait' (or exit) whose attempts ran
out. The waiting turn goes on with the answer as if it had been given on
its own terminal; a turn whose process ended goes on with 'tract chat
--resume ID'.`,
		Args: exactArgs(0, "a subcommand: show or answer"),
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdEscalationShow(f, runF), newCmdEscalationAnswer(f, runF))
	return cmd
}

// EscalationOptions are the inputs of 'tract escalation show' and
// 'tract escalation answer'.
type EscalationOptions struct {
	Factory *Factory
	ID      string
	// Answer is the answer of 'escalation answer'; By who gives it
	// (--by; "": user@host).
	Answer tract.Resolution
	By     string
	JSON   bool
}

func newCmdEscalationShow(f *Factory, runF func(*EscalationOptions) error) *cobra.Command {
	opts := &EscalationOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an escalation: its task, attempts, failures and answer",
		Long: `Show the escalation ID as its turn recorded it: the task, the reason, the
attempts, a table of the failures, the last error's details and the last
answer, then its answer if it has one.`,
		Example: `  tract escalation show k3x9qa
  tract escalation show k3x9qa --json | jq .failures`,
		Args:              exactArgs(1, "an escalation ID"),
		ValidArgsFunction: upTo(1, escalationIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				e, err := t.EscalationByID(cmd.Context(), opts.ID)
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, e)
				}
				return withPager(f, func() error { return writeStoredEscalation(f.IO.Out, e) })
			})
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print JSON", "escalations")
	return cmd
}

func newCmdEscalationAnswer(f *Factory, runF func(*EscalationOptions) error) *cobra.Command {
	opts := &EscalationOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "answer ID retry|skip|abort|fix [TEXT]",
		Short: "Answer an escalation that waits in the repository",
		Long: `Answer the escalation ID: retry (a fresh round of attempts), skip (give the
task up), abort (stop there), or fix TEXT (a fresh round with TEXT as the
model's first guidance; "fix: TEXT" as one argument works too). One answer
wins: a second is refused, naming the first (exit 5). The answer records
who gave it: --by NAME, else your user and host name.`,
		Example: `  tract escalation answer k3x9qa retry
  tract escalation answer k3x9qa fix "use integers"
  tract escalation answer k3x9qa "fix: use integers" --by night-shift`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("%s takes an escalation ID and an answer: retry, skip, abort or fix TEXT", cmd.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return escalationIDs(f)(cmd, args, toComplete)
			case 1:
				return []cobra.Completion{"retry", "skip", "abort", "fix"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			res, err := tract.ParseResolution(answerText(args[1:]))
			if err != nil {
				return usageErrorf("%v", err)
			}
			if cmd.Flags().Changed("by") && strings.TrimSpace(opts.By) == "" {
				return usageErrorf("--by needs a name")
			}
			res.By = strings.TrimSpace(opts.By)
			opts.Answer = res
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				e, err := t.AnswerEscalation(cmd.Context(), opts.ID, opts.Answer)
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, e)
				}
				fmt.Fprintf(f.IO.ErrOut, "answered escalation %s: %s (by %s)\n", e.ID, screenText(e.Answer.String()), screenText(e.Answer.By))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "record `NAME` as who answered (default user@host)")
	addJSONFlag(cmd, &opts.JSON, "print the answered escalation as JSON", "escalations")
	return cmd
}

// answerText joins the words of an answer: "fix" "use integers" reads as
// "fix: use integers"; "fix: use integers" as one word stays.
func answerText(words []string) string {
	if len(words) > 1 && strings.EqualFold(strings.TrimSpace(words[0]), "fix") {
		return "fix: " + strings.Join(words[1:], " ")
	}
	return strings.Join(words, " ")
}

// writeStoredEscalation prints escalation e for a person: what the
// terminal's escalation message says, then its state and answer.
func writeStoredEscalation(w io.Writer, e *tract.PendingEscalation) error {
	task := screenText(e.Task)
	if task == "" {
		task = "(no task id)"
	}
	fmt.Fprintf(w, "Escalation %s (%s)\n\nBranch:   %s\nTask:     %s\nReason:   %s\nAttempts: %d of %d (round %d of at most %d; %s in all)\nSince:    %s\n",
		e.ID, e.State, screenText(e.Branch), task, e.Reason, e.Attempts, e.MaxAttempts, e.Round, tract.MaxRounds,
		english.Count(e.TotalAttempts, "attempt", "attempts"), e.Created.Local().Format(time.DateTime))
	writeAttemptHistory(w, e.Failures)
	if e.LastAnswer != "" {
		fmt.Fprintf(w, "\nLast answer:\n%s\n", indent(screenText(strings.TrimRight(e.LastAnswer, "\n")), "  "))
	}
	if e.Answer == nil {
		_, err := fmt.Fprintf(w, "\nAnswer with: tract escalation answer %s retry|skip|abort|fix TEXT\n", e.ID)
		return err
	}
	by := e.Answer.By
	if by == "" {
		by = "(unknown)"
	}
	_, err := fmt.Fprintf(w, "\nAnswer:   %s\nBy:       %s at %s\nThe turn goes on at its process's next look, or with: tract chat --resume %s\n",
		screenText(e.Answer.String()), screenText(by), e.Answer.At.Local().Format(time.DateTime), e.ID)
	return err
}
