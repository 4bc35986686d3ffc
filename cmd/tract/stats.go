package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

// StatsOptions are the inputs of 'tract stats'.
type StatsOptions struct {
	Factory *Factory
	// TaskPrefix keeps the tasks whose id starts with it.
	TaskPrefix string
	// Since keeps the turns started at or after it (zero: all).
	Since time.Time
	JSON  bool
}

func newCmdStats(f *Factory, runF func(*StatsOptions) error) *cobra.Command {
	opts := &StatsOptions{Factory: f}
	var since string
	cmd := &cobra.Command{
		Use:   "stats [--task PREFIX] [--since TIME] [--json]",
		Short: "Summarise how the tasks in the repository went",
		Long: `Summarise how the tasks in the repository went, read from the commits of
every validated turn (orphaned attempts included): first-attempt successes,
retries, answers a validator fixed (--fix-json), escalations, skips and
aborts, mean attempts, tokens spent on rejected and accepted answers,
failure types, the most common diagnoses (paths, hashes and numbers
normalised), and a table of the tasks. The turns
of a task id count as one task; each turn without one counts as a task of
its own, listed together on a "(no task)" line that --task leaves out.`,
		Example: `  tract stats
  tract stats --task 03-01: --since 7d --json | jq .first_attempt_success_pct`,
		Args: exactArgs(0, "no arguments (use --task PREFIX)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				line := f.progressLine("stats")
				st, err := t.Stats(cmd.Context(), tract.StatsFilter{TaskPrefix: opts.TaskPrefix, Since: opts.Since, Progress: line.tract()})
				line.clear()
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, st)
				}
				printStats(f.IO.Out, st, f.IO.OutTTY)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.TaskPrefix, "task", "", "only the tasks whose id starts with `PREFIX`")
	fl.StringVar(&since, "since", "", "only the turns since `TIME`: RFC 3339 or an age (7d)")
	addJSONFlag(cmd, &opts.JSON, "print the figures as JSON", "stats")
	return cmd
}

// printStats writes st as a summary, the failure patterns and the table
// of tasks.
func printStats(w io.Writer, st *tract.Stats, terminal bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	pct := func(n int) string {
		if st.TotalTasks == 0 {
			return fmt.Sprint(n)
		}
		return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(st.TotalTasks))
	}
	fmt.Fprintf(tw, "Total tasks\t%d\n", st.TotalTasks)
	fmt.Fprintf(tw, "First-attempt success\t%s\n", pct(st.FirstAttemptSuccesses))
	fmt.Fprintf(tw, "Retried\t%s\n", pct(st.Retried))
	fmt.Fprintf(tw, "Retry success\t%d\n", st.RetrySuccesses)
	fmt.Fprintf(tw, "Fixes\t%s\n", fixesLine(st))
	fmt.Fprintf(tw, "Escalations\t%d\n", st.Escalations)
	fmt.Fprintf(tw, "Skipped\t%d\n", st.Skipped)
	fmt.Fprintf(tw, "Aborted\t%d\n", st.Aborted)
	if len(st.AnsweredBy) > 0 { // escalations answered in the repository
		fmt.Fprintf(tw, "Answered by\t%s\n", answeredByLine(st, terminal))
	}
	fmt.Fprintf(tw, "Mean attempts\t%.2f\n", st.MeanAttempts)
	fmt.Fprintf(tw, "Tokens\t%d on failed attempts, %d on accepted answers\n", st.TokensFailed, st.TokensAccepted)
	tw.Flush()
	if len(st.FailureTypes) > 0 {
		fmt.Fprintln(w, "\nFailure types")
		types := make([]retry.FailureType, 0, len(st.FailureTypes))
		for ft := range st.FailureTypes {
			types = append(types, ft)
		}
		slices.SortFunc(types, func(a, b retry.FailureType) int {
			if d := st.FailureTypes[b] - st.FailureTypes[a]; d != 0 {
				return d
			}
			return strings.Compare(string(a), string(b))
		})
		for _, ft := range types {
			fmt.Fprintf(tw, "  %s\t%d\n", ft, st.FailureTypes[ft])
		}
		tw.Flush()
	}
	if len(st.TopDiagnoses) > 0 {
		fmt.Fprintln(w, "\nCommon diagnoses")
		for _, d := range st.TopDiagnoses {
			diagnosis := d.Diagnosis
			if terminal { // a diagnosis may quote a model's answer
				diagnosis = screenText(diagnosis)
			}
			fmt.Fprintf(tw, "  %d\t%s\n", d.Count, diagnosis)
		}
		tw.Flush()
	}
	if len(st.Tasks) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "Task\tTurns\tAttempts\tResult")
		for _, ts := range st.Tasks {
			task := ts.Task
			if task == tract.NoTask {
				task = "(no task)"
			}
			result := ts.Result
			switch {
			case ts.Task == tract.NoTask && ts.Turns > 1:
				// Turns of tasks of their own: the last one's result, no
				// story of retries across them.
			case ts.Result == tract.ResolvedSuccess && ts.Attempts > 1 && ts.Fixes > 0:
				result += " (retry worked, fixed)"
			case ts.Result == tract.ResolvedSuccess && ts.Attempts > 1:
				result += " (retry worked)"
			case ts.Result == tract.ResolvedSuccess && ts.Fixes > 0:
				result += " (fixed)"
			case ts.Escalated && ts.Result != tract.ResolvedEscalated:
				result += " (escalated)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", task, ts.Turns, ts.Attempts, result)
		}
		tw.Flush()
	}
}

// fixesLine is the number of answers validators fixed, and by which:
// "2 (json 1, mask 1)"; "0" when none was.
func fixesLine(st *tract.Stats) string {
	if st.Fixes == 0 {
		return "0"
	}
	names := make([]string, 0, len(st.FixesByValidator))
	for name := range st.FixesByValidator {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		names[i] = fmt.Sprintf("%s %d", name, st.FixesByValidator[name])
	}
	return fmt.Sprintf("%d (%s)", st.Fixes, strings.Join(names, ", "))
}

// answeredByLine lists who answered escalations that waited in the
// repository, most answers first: "bob@host 2, ann 1".
func answeredByLine(st *tract.Stats, terminal bool) string {
	names := make([]string, 0, len(st.AnsweredBy))
	for name := range st.AnsweredBy {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(st.AnsweredBy[b]-st.AnsweredBy[a], strings.Compare(a, b))
	})
	for i, name := range names {
		if terminal {
			name = screenText(name)
		}
		names[i] = fmt.Sprintf("%s %d", name, st.AnsweredBy[names[i]])
	}
	return strings.Join(names, ", ")
}
