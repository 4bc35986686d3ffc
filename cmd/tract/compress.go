package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// CompressOptions are the inputs of 'tract compress'.
type CompressOptions struct {
	Factory *Factory
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch       string
	From, To     string
	KeepLast     int
	TargetTokens int
	Instructions string
	Content      []string
	Validate     []string
	// CmdTimeout bounds one run of a "cmd:" validator (--cmd-timeout).
	CmdTimeout  time.Duration
	MaxAttempts int
	Model       string
	DryRun      bool
	JSON        bool
	// ModelFlags are --provider, --max-tokens and --structured.
	ModelFlags ModelFlags
}

func newCmdCompress(f *Factory, runF func(*CompressOptions) error) *cobra.Command {
	opts := &CompressOptions{Factory: f}
	var cmdTimeout string
	cmd := &cobra.Command{
		Use:   "compress [--from REV] [--to REV | --keep-last N] [flags]",
		Short: "Replace a range of history with validated summaries",
		Long: `Replace the commits from --from (default: the root) to --to (default: HEAD,
or HEAD~N with --keep-last N) with validated summaries: system and pinned
commits stay, each run of others becomes one summary that must be shorter
than what it replaces, within --target-tokens and pass every --validate, and
the commits after the range are replayed. Nothing is written until every
summary is accepted; the old commits stay as an orphan chain in 'tract log
--all'.`,
		Example: `  tract compress --keep-last 20 --dry-run
  tract compress --to HEAD~20 --validate 'maxlen:2000'
  tract compress --from HEAD~10 --to HEAD~4 --content "We agreed on X."`,
		Args: exactArgs(0, "no arguments (use --from and --to)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.To != "" && cmd.Flags().Changed("keep-last") {
				return usageErrorf("--to and --keep-last both say where the range ends; give one")
			}
			if opts.KeepLast < 0 || opts.TargetTokens < 0 || opts.MaxAttempts < 1 {
				return usageErrorf("--keep-last and --target-tokens must be 0 or more and --max-attempts at least 1")
			}
			var err error
			if opts.CmdTimeout, err = parseCmdTimeout(cmdTimeout); err != nil {
				return err
			}
			if err := opts.ModelFlags.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return compressRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "first commit of the range (default: the root)")
	setValueName(fl, "from", "REV")
	fl.StringVar(&opts.To, "to", "", "last commit of the range (default: HEAD)")
	setValueName(fl, "to", "REV")
	markRevisionFlag(cmd, "from")
	markRevisionFlag(cmd, "to")
	fl.IntVar(&opts.KeepLast, "keep-last", 0, "end the range `N` commits before HEAD")
	fl.IntVar(&opts.TargetTokens, "target-tokens", 0, "aim each summary at `N` tokens (estimated)")
	fl.StringVar(&opts.Instructions, "instructions", "", "extra instructions for the summarizer")
	setValueName(fl, "instructions", "TEXT")
	fl.StringArrayVar(&opts.Content, "content", nil, "the summary's `TEXT`; no model call (repeatable)")
	fl.StringArrayVarP(&opts.Validate, "validate", "V", nil, "check each summary with `SPEC` (repeatable): "+f.validators().Usages())
	addCmdTimeoutFlag(cmd, &cmdTimeout)
	fl.IntVar(&opts.MaxAttempts, "max-attempts", retry.DefaultMaxAttempts, "make at most `N` attempts per summary")
	fl.StringVarP(&opts.Model, "model", "M", "", "the summarizer (default $TRACT_MODEL or config)")
	setValueName(fl, "model", "NAME")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "print what would be summarized; call no model")
	addJSONFlag(cmd, &opts.JSON, "print the plan or the result as JSON", "compress", "compress --dry-run")
	addModelFlags(cmd, &opts.ModelFlags, false)
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

func compressRun(cmd *cobra.Command, opts *CompressOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	copts := []tract.CompressOption{
		tract.KeepLast(opts.KeepLast), tract.TargetTokens(opts.TargetTokens), tract.Instructions(opts.Instructions),
		tract.SummaryAttempts(opts.MaxAttempts), tract.SummaryModel(opts.Model),
	}
	if opts.Content != nil {
		copts = append(copts, tract.Summaries(opts.Content...))
	}
	if !opts.DryRun {
		var client llm.Client
		if opts.Content == nil {
			c, err := newClient(f, opts.Model, opts.ModelFlags)
			if err != nil {
				return err
			}
			client = c
			schema, err := opts.ModelFlags.schema(f, opts.Validate)
			if err != nil {
				return err
			}
			copts = append(copts, tract.SummaryClient(client), tract.SummarySchema(schema))
		}
		v, err := parseValidators(f, opts.Validate, opts.CmdTimeout, client, opts.Model)
		if err != nil {
			return err
		}
		if v != nil {
			copts = append(copts, tract.ValidateSummaries(v))
		}
		line := f.progressLine("compress")
		defer line.clear()
		copts = append(copts, tract.OnGroup(func(g tract.GroupProgress) {
			line.clear()
			fmt.Fprintf(f.IO.ErrOut, "summary %d/%d: %s → %d tokens (from %d, estimated) after %s\n",
				g.Index, g.Total, english.Count(g.Sources, "commit", "commits"), g.TokensAfter, g.TokensBefore, english.Count(g.Attempts, "attempt", "attempts"))
			if g.Index < g.Total {
				line.set(fmt.Sprintf("%d of %d groups summarized; asking for the next", g.Index, g.Total))
			}
		}))
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		if opts.DryRun {
			plan, err := t.PlanCompress(ctx, opts.From, opts.To, copts...)
			if err != nil {
				return rangeFlagError(err)
			}
			if opts.JSON {
				return writeJSON(f.IO.Out, plan)
			}
			w, done := fitOut(f)
			renderPlan(w, palette{f.IO.Color}, plan)
			return done()
		}
		res, err := t.CompressRange(ctx, opts.From, opts.To, copts...)
		if exhausted := (*retry.ExhaustedError)(nil); errors.As(err, &exhausted) {
			return &summaryRejectedError{err: err, given: opts.Content != nil}
		}
		if err != nil {
			return rangeFlagError(err)
		}
		if opts.JSON {
			return writeJSON(f.IO.Out, res)
		}
		// The tokens of what was summarized, as each summary's line says
		// them; the kept commits' apart, since they did not change.
		kept := ""
		if len(res.Kept) > 0 {
			kept = fmt.Sprintf("; %s of %d tokens kept as they were", english.Count(len(res.Kept), "pinned commit", "pinned commits"), res.TokensKept)
		}
		fmt.Fprintf(f.IO.Out, "compressed %s into %s (%d → %d tokens, estimated%s); replayed %s; %s is now at %s\n",
			english.Count(len(res.Sources), "commit", "commits"), english.Count(len(res.Summaries), "summary", "summaries"),
			res.TokensBefore-res.TokensKept, res.TokensAfter-res.TokensKept, kept,
			english.Count(res.Replayed, "commit", "commits"), position(t), res.NewHead.Short())
		if len(res.Dropped) > 0 {
			fmt.Fprintf(f.IO.ErrOut, "dropped %s (notes and errors)\n", english.Count(len(res.Dropped), "commit", "commits"))
		}
		fmt.Fprintf(f.IO.ErrOut, "the old chain is in 'tract log --all'; ORIG_HEAD is %s\n", res.OldHead.Short())
		return nil
	})
}

func renderPlan(w io.Writer, p palette, plan *tract.CompressPlan) {
	k := 0
	for _, g := range plan.Groups {
		if g.Keep {
			fmt.Fprintf(w, "keep       %s\n", oneLine(p, g.Commits[0], 60, nil))
			continue
		}
		k++
		fmt.Fprintf(w, "summarize  group %d: %s, %d tokens (estimated)\n", k, english.Count(len(g.Commits), "commit", "commits"), g.Tokens)
		for _, c := range g.Commits {
			fmt.Fprintf(w, "             %s\n", oneLine(p, c, 56, nil))
		}
	}
	for _, c := range plan.Dropped {
		fmt.Fprintf(w, "drop       %s\n", oneLine(p, c, 60, nil))
	}
	fmt.Fprintf(w, "replay     %s after the range\n", english.Count(plan.Replay, "commit", "commits"))
}

// rangeFlagError names the flag that gave the end of the range err is
// about, where the library names the end ("range start: unknown revision
// …" becomes "--from: unknown revision …"); other errors are returned as
// they are.
func rangeFlagError(err error) error {
	var end *tract.RangeEndError
	if !errors.As(err, &end) {
		return err
	}
	flag := "--to"
	if end.From {
		flag = "--from"
	}
	if end.Hash.IsZero() {
		return fmt.Errorf("compress: %s: %w", flag, end.Err)
	}
	return fmt.Errorf("compress: %s %s (%s): %w (is it on another branch?)", flag, end.Rev, end.Hash.Short(), end.Err)
}

// summaryRejectedError is a compress whose summary failed its checks on
// every attempt: its hint says what compress can do about it, as
// opposed to chat's ways of another round.
type summaryRejectedError struct {
	err error
	// given says the summaries came from --content, not from a model.
	given bool
}

func (e *summaryRejectedError) Error() string { return e.err.Error() }
func (e *summaryRejectedError) Unwrap() error { return e.err }

// hint says what to do: nothing was written, and rejected summaries are
// not committed, so there is nothing to inspect.
func (e *summaryRejectedError) hint() string {
	if e.given {
		return "Nothing was written. A summary given with --content passes the same checks as a model's: shorter than\n" +
			"what it replaces, within --target-tokens, and every --validate spec ('tract compress --dry-run' shows\n" +
			"each group and its size)."
	}
	return "Nothing was written, and rejected summaries are not kept. Allow more attempts with --max-attempts N,\n" +
		"loosen --validate or --target-tokens, guide the model with --instructions TEXT, or write the summaries\n" +
		"yourself with --content TEXT, one per group ('tract compress --dry-run' lists the groups)."
}
