package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/internal/english"
	prog "github.com/tractdag/tract/internal/progress"
)

// ExportOptions are the inputs of 'tract export'.
type ExportOptions struct {
	Factory *Factory
	// Rev is the conversation to export ("": HEAD's); All exports the
	// whole repository; Branches the named branches.
	Rev      string
	All      bool
	Branches []string
	Format   export.Format
	Weights  export.Weights
	// Output is the file to write ("" or "-": standard output).
	Output      string
	Task        string
	Validator   string
	Since       time.Time
	Until       time.Time
	MinAttempts int
}

func newCmdExport(f *Factory, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{Factory: f}
	var format, weights, since, until string
	cmd := &cobra.Command{
		Use:   "export [REV | --all | --branch NAME...] [-f FORMAT]",
		Short: "Write conversations or preference pairs as fine-tuning data",
		Long: `Write the repository's conversations (--format openai, the default), or the
accepted and rejected answers of its validated turns (openai-preference,
trl-preference, trl-kto), as fine-tuning data: one JSON object a line, to
standard output or -o FILE, read as a stream in bounded memory. REV (default
HEAD), --branch or --all choose the conversations; --task, --validator,
--min-attempts, --since and --until filter them.`,
		Example: `  tract export --format openai -o sft.jsonl
  tract export --all -f openai-preference --min-attempts 2 -o dpo.jsonl
  tract export feature --format trl-kto --validator cmd | head -1 | jq .label`,
		Args: maxArgs(1, "one revision"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			switch {
			case opts.All && opts.Rev != "":
				return usageErrorf("--all exports the whole repository: give it or a revision (%s), not both", opts.Rev)
			case len(opts.Branches) > 0 && (opts.All || opts.Rev != ""):
				return usageErrorf("--branch selects what to export: give it, a revision or --all, not several")
			case slices.Contains(opts.Branches, ""):
				return usageErrorf("--branch needs a branch name")
			case opts.MinAttempts < 0:
				return usageErrorf("--min-attempts must be 0 or more (got %d)", opts.MinAttempts)
			}
			var err error
			if opts.Format, err = export.ParseFormat(format); err != nil {
				return &usageError{fmt.Errorf("--format: %w", err)}
			}
			if opts.Weights, err = export.ParseWeights(weights); err != nil {
				return &usageError{fmt.Errorf("--weight: %w", err)}
			}
			if cmd.Flags().Changed("weight") && !opts.Format.Conversational() {
				return usageErrorf("--weight applies to the openai format, not %s", opts.Format)
			}
			now := time.Now()
			if f.Clock != nil {
				now = f.Clock()
			}
			if opts.Since, err = parseTimeFlag("--since", since, now); err != nil {
				return err
			}
			if opts.Until, err = parseTimeFlag("--until", until, now); err != nil {
				return err
			}
			if !opts.Since.IsZero() && !opts.Until.IsZero() && !opts.Since.Before(opts.Until) {
				return usageErrorf("--since (%s) must be before --until (%s)", since, until)
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&format, "format", "f", string(export.OpenAI), "openai, openai-preference, trl-preference or trl-kto")
	setValueName(fl, "format", "FORMAT")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to `FILE`, replaced once the export succeeds")
	fl.BoolVar(&opts.All, "all", false, "export the whole repository")
	fl.StringArrayVar(&opts.Branches, "branch", nil, "export branch `NAME` (repeatable)")
	fl.StringVar(&weights, "weight", string(export.WeightsRecorded), "weights (openai): recorded, none or assistant-last")
	setValueName(fl, "weight", "MODE")
	fl.StringVar(&opts.Task, "task", "", "only the turns with task `ID`")
	fl.StringVar(&opts.Validator, "validator", "", "only the turns validated by `SPEC` (or its kind)")
	fl.StringVar(&since, "since", "", "only what started since `TIME`: RFC 3339 or an age")
	fl.StringVar(&until, "until", "", "only what started before `TIME`")
	fl.IntVar(&opts.MinAttempts, "min-attempts", 0, "only the turns that took at least `N` attempts")
	markBranchFlag(cmd, "branch")
	formats := make([]string, len(export.Formats))
	for i, f := range export.Formats {
		formats[i] = string(f)
	}
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("weight", cobra.FixedCompletions([]string{string(export.WeightsRecorded),
		string(export.WeightsNone), string(export.WeightsAssistantLast)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parseTimeFlag parses a time flag's value: "" (no bound), an RFC 3339
// time, or an age before now.
func parseTimeFlag(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := parseAgeOf(flag, s)
	if err != nil {
		return time.Time{}, usageErrorf(`%s %q: use an RFC 3339 time such as 2026-01-26T14:00:00Z, or an age such as 90m, 12h or 7d`, flag, s)
	}
	return now.Add(-d), nil
}

// exportOptions are the API options of opts.
func (opts *ExportOptions) exportOptions() []tract.ExportOption {
	var o []tract.ExportOption
	switch {
	case opts.All:
		o = append(o, tract.ExportAll())
	case len(opts.Branches) > 0:
		o = append(o, tract.ExportBranches(opts.Branches...))
	default:
		o = append(o, tract.ExportRev(opts.Rev))
	}
	return append(o, tract.ExportTask(opts.Task), tract.ExportValidator(opts.Validator),
		tract.ExportSince(opts.Since), tract.ExportUntil(opts.Until), tract.ExportMinAttempts(opts.MinAttempts),
		tract.ExportWeights(opts.Weights))
}

func exportRun(cmd *cobra.Command, opts *ExportOptions) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		out, commit, abort, err := exportOutput(f.IO.Interrupts, f.IO.Out, opts.Output)
		if err != nil {
			return err
		}
		eopts := opts.exportOptions()
		// The progress line shares the terminal only with a file's or a
		// pipe's export: it would break into lines written to the screen.
		var line *progressLine
		if (opts.Output != "" && opts.Output != "-") || !f.IO.OutTTY {
			line = f.progressLine("export")
		}
		if line != nil {
			unit := "conversations"
			if !opts.Format.Conversational() {
				unit = "validated turns"
			}
			eopts = append(eopts, tract.OnExport(func(p tract.ExportProgress) {
				line.set(prog.Count(int64(p.Items), 0, unit) + ", " + prog.Count(int64(p.Lines), 0, "lines"))
			}))
		}
		res, err := t.Export(cmd.Context(), out, opts.Format, eopts...)
		line.clear()
		if err == nil {
			err = commit()
		} else {
			abort()
		}
		if err != nil {
			return err
		}
		what := english.Count(res.Items, "conversation", "conversations")
		if !opts.Format.Conversational() {
			what = fmt.Sprintf("%s from %s", english.Count(res.Lines, "line", "lines"), english.Count(res.Items, "validated turn", "validated turns"))
		}
		to := ""
		if opts.Output != "" && opts.Output != "-" {
			to = " to " + opts.Output
		}
		fmt.Fprintf(f.IO.ErrOut, "Exported %s (%s)%s\n", what, opts.Format, to)
		return nil
	})
}

// exportOutput opens where an export writes: stdout, or a wholeFile
// (mode 0600, as the repository: an export is its conversations), so that
// a failed export leaves no half-written file and an existing one as it
// was.
func exportOutput(in *interrupts, stdout io.Writer, name string) (w io.Writer, commit func() error, abort func(), err error) {
	if name == "" || name == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	wf, err := createWhole(in, name, 0o600)
	if err != nil {
		return nil, nil, nil, err
	}
	return wf, wf.commit, wf.abort, nil
}
