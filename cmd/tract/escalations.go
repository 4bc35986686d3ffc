package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// EscalationsOptions are the inputs of 'tract escalations'.
type EscalationsOptions struct {
	Factory *Factory
	JSON    bool
}

func newCmdEscalations(f *Factory, runF func(*EscalationsOptions) error) *cobra.Command {
	opts := &EscalationsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "escalations",
		Short: "List the escalations waiting in the repository for an answer",
		Long: `List the escalations that wait in the repository, oldest first: those of
turns run with 'tract chat --on-exhausted wait' (or exit) whose attempts ran
out, pending, or answered and not yet taken up by their turn. Answer one
with 'tract escalation answer ID', from any process or machine that opens
the repository.`,
		Example: `  tract escalations
  tract escalations --json | jq -r '.[].id'
  tract escalation show k3x9qa
  tract escalation answer k3x9qa fix "use integers"`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return escalationsRun(cmd, opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print JSON", "escalations")
	return cmd
}

func escalationsRun(cmd *cobra.Command, opts *EscalationsOptions) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		es, err := t.Escalations(cmd.Context())
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(f.IO.Out, es)
		}
		if len(es) == 0 {
			fmt.Fprintln(f.IO.ErrOut, "no escalation waits for an answer")
			return nil
		}
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tBRANCH\tTASK\tREASON\tATTEMPTS\tSINCE\tLAST ERROR / ANSWER")
		for _, e := range es {
			task := e.Task
			if task == "" {
				task = "-"
			}
			last := "-"
			if n := len(e.Failures); n > 0 {
				last = e.Failures[n-1].Error
			}
			if e.Answer != nil {
				last = e.Answer.String()
				if e.Answer.By != "" {
					last += " (by " + e.Answer.By + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", e.ID, e.State, screenText(e.Branch), screenText(task), e.Reason,
				e.Attempts, e.MaxAttempts, e.Created.Local().Format(time.DateTime), screenText(preview(last, 60)))
		}
		return tw.Flush()
	})
}
