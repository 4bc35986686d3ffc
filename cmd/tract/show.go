package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// ShowOptions are the inputs of 'tract show'.
type ShowOptions struct {
	Factory *Factory
	Rev     string
	JSON    bool
	// Date is how dates are written (--date).
	Date dateMode
}

func newCmdShow(f *Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	var date string
	cmd := &cobra.Command{
		Use:   "show [REV]",
		Short: "Show one commit: text, metadata and provenance",
		Long:  "Show one commit, HEAD or REV: its text, metadata and provenance.",
		Args:  revisionArgs(maxArgs(1, "one revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Rev = "HEAD"
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			var err error
			if opts.Date, err = parseDateMode(date); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd, opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print JSON", "commit record")
	addDateFlag(cmd, &date, dateISO, dateHelp)
	return cmd
}

func showRun(cmd *cobra.Command, opts *ShowOptions) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		c, err := t.Show(cmd.Context(), opts.Rev)
		if err != nil {
			return err
		}
		return withPager(f, func() error {
			if opts.JSON {
				return writeJSON(f.IO.Out, c)
			}
			p, d := palette{f.IO.Color}, newDates(f, opts.Date)
			renderFull(f.IO.Out, p, d, c, f.IO.OutTTY, newToolNames(cmd.Context(), t))
			renderMeta(f.IO.Out, p, d, c, f.IO.OutTTY)
			return nil
		})
	})
}

// renderMeta prints provenance in words, then the raw metadata; on a
// terminal, the texts it quotes (a diagnosis, a command's output) without
// control characters.
func renderMeta(w io.Writer, p palette, d dates, c *tract.CommitInfo, terminal bool) {
	if len(c.Meta) == 0 {
		return
	}
	clean := func(s string) string { return s }
	if terminal {
		clean = screenText
	}
	if prov, ok := c.Provenance(); ok {
		fmt.Fprintf(w, "\nProvenance: accepted after %s\n", english.Count(prov.Attempts, "attempt", "attempts"))
		for i, d := range prov.Diagnoses {
			fmt.Fprintf(w, "  attempt %d failed: %s\n", i+1, p.bad(clean(d)))
		}
	}
	if fix, ok := fixRecord(c); ok {
		if fix.Original.IsZero() {
			fmt.Fprintf(w, "\nFixed by %s: this answer as the model gave it was not accepted; the fixed answer was, in its place\n", clean(fix.By))
			if d := c.Diagnosis(); d != "" {
				fmt.Fprintf(w, "  what was fixed: %s\n", p.bad(indent(clean(d), "    ")[4:]))
			}
		} else {
			fmt.Fprintf(w, "\nFixed by %s: the answer as the model gave it is %s (off the branch)\n", clean(fix.By), p.hash(fix.Original.Short()))
		}
	}
	if task := c.Task(); task != "" {
		fmt.Fprintf(w, "\nTask: %s\n", clean(task))
	}
	if r, ok := c.FailureRecord(); ok {
		renderFailure(w, p, d, r, clean)
	}
	renderShape(w, c)
	var buf bytes.Buffer
	if meta := metaWithoutShape(c.Meta); meta != nil && json.Indent(&buf, meta, "    ", "  ") == nil {
		fmt.Fprintf(w, "\nMetadata:\n    %s\n", strings.TrimSpace(string(jsonSafe(buf.Bytes()))))
	}
}

// renderFailure prints a failure record in words, its texts through clean.
func renderFailure(w io.Writer, p palette, d dates, r tract.FailureRecord, clean func(string) string) {
	fmt.Fprintf(w, "\nFailure: attempt %d, %s, at %s\n", r.Attempt, p.bad(string(r.Type)), d.format(r.Timestamp))
	fmt.Fprintf(w, "  error:          %s\n", clean(r.Error))
	switch r.Escalation {
	case "":
	case tract.EscalateTransport:
		fmt.Fprintf(w, "  escalated:      %s (the model server stayed unavailable through the retries)\n", r.Escalation)
	default:
		fmt.Fprintf(w, "  escalated:      %s (retrying cannot fix it)\n", clean(string(r.Escalation)))
	}
	if r.Command != "" {
		fmt.Fprintf(w, "  command:        %s\n", clean(r.Command))
		if r.ExitCode != nil {
			fmt.Fprintf(w, "  exit code:      %d\n", *r.ExitCode)
		}
		if r.OutputSummary != "" {
			fmt.Fprintf(w, "  output (last lines):\n%s\n", indent(clean(r.OutputSummary), "    "))
		}
	}
	if r.RootCauseGuess != "" {
		fmt.Fprintf(w, "  root cause:     %s (a guess)\n", clean(r.RootCauseGuess))
	}
	if r.SuggestedFix != "" {
		fmt.Fprintf(w, "  suggested fix:  %s\n", clean(r.SuggestedFix))
	}
	if r.AnalysisError != "" {
		fmt.Fprintf(w, "  analysis:       failed: %s\n", clean(r.AnalysisError))
	}
	if r.Details != "" && r.Details != r.Error {
		fmt.Fprintf(w, "  details:\n%s\n", indent(clean(r.Details), "    "))
	}
}
