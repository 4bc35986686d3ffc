package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// LogOptions are the inputs of 'tract log'.
type LogOptions struct {
	Factory *Factory
	Limit   int
	All     bool
	Oneline bool
	Graph   bool
	JSON    bool
	Rev     string
	// Format is the --format template ("" for the default output).
	Format string
	// Date is how dates are written (--date).
	Date dateMode
	// Grep are the --grep patterns; IgnoreCase (-i) and AllMatch
	// (--all-match) change how they match.
	Grep       []string
	IgnoreCase bool
	AllMatch   bool
}

func newCmdLog(f *Factory, runF func(*LogOptions) error) *cobra.Command {
	opts := &LogOptions{Factory: f}
	var date string
	cmd := &cobra.Command{
		Use:   "log [REV]",
		Short: "Show the history from HEAD, or every commit with --all",
		Long: `Show the first-parent history from HEAD (or REV), newest first; with --all,
every commit as a graph, as 'git log --graph --all --oneline' draws it, with
orphaned commits (failed attempts, chains left by reset or compress) beside
the commit they forked from. --format TEMPLATE takes git-like placeholders
(%h hash, %s subject, %x diagnosis…); long output goes through a pager on a
terminal. --grep PATTERN keeps the commits whose text or diagnosis a
regular expression matches (several: any of them; -i ignores case); with
--all, orphaned attempts too.`,
		Example: `  tract log --oneline -n 10
  tract log --grep 'invalid char' -i --all --oneline
  tract log --all
  tract log --format '%h %d %r: %s' --date relative
  tract log --all --format '%h %k %x'`,
		Args: revisionArgs(maxArgs(1, "one revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			if opts.All && opts.Rev != "" {
				return usageErrorf("--all shows every commit; it takes no revision")
			}
			if opts.Limit < 0 {
				return usageErrorf("-n must be 0 (no limit) or more, got %d", opts.Limit)
			}
			if cmd.Flags().Changed("format") {
				switch {
				case opts.JSON:
					return usageErrorf("--format and --json are two ways to print: give one")
				case opts.Oneline:
					return usageErrorf("--format and --oneline are two ways to print: give one")
				case opts.Format == "":
					return usageErrorf("--format needs a template, such as '%%h %%s'")
				}
				if _, err := parseLogFormat(opts.Format); err != nil {
					return err
				}
			}
			if len(opts.Grep) == 0 && (opts.IgnoreCase || opts.AllMatch) {
				return usageErrorf("-i and --all-match change how --grep matches: give --grep PATTERN too")
			}
			if len(opts.Grep) > 0 && opts.Graph {
				return usageErrorf("--grep lists the matching commits, which draw no graph: leave out --graph")
			}
			if _, err := newGrep(opts); err != nil {
				return err
			}
			var err error
			if opts.Date, err = parseDateMode(date); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return logRun(cmd, opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "max-count", "n", 0, "show at most `N` commits (or -N, as in git)")
	markCountShorthand(cmd, "max-count")
	cmd.Flags().BoolVar(&opts.All, "all", false, "draw every commit: branches and orphans")
	cmd.Flags().BoolVar(&opts.Oneline, "oneline", false, "one line per commit")
	cmd.Flags().BoolVar(&opts.Graph, "graph", false, "draw the history as a graph")
	addJSONFlag(cmd, &opts.JSON, "print JSON", "log")
	cmd.Flags().StringVar(&opts.Format, "format", "",
		"print by `TEMPLATE` (see 'tract help history')")
	addDateFlag(cmd, &date, dateISO, dateHelp)
	cmd.Flags().StringArrayVar(&opts.Grep, "grep", nil,
		"keep commits matching the regexp `PATTERN`")
	cmd.Flags().BoolVarP(&opts.IgnoreCase, "regexp-ignore-case", "i", false, "--grep ignores case")
	cmd.Flags().BoolVar(&opts.AllMatch, "all-match", false, "every --grep pattern must match, not any")
	return cmd
}

// newGrep compiles the --grep patterns (nil when there are none).
func newGrep(opts *LogOptions) (*search.Grep, error) {
	if len(opts.Grep) == 0 {
		return nil, nil
	}
	var gopts []search.GrepOption
	if opts.IgnoreCase {
		gopts = append(gopts, search.IgnoreCase())
	}
	if opts.AllMatch {
		gopts = append(gopts, search.AllMatch())
	}
	g, err := search.NewGrep(opts.Grep, gopts...)
	var pe *search.PatternError
	if errors.As(err, &pe) {
		return nil, usageErrorf("--grep %q is not a regular expression (Go's syntax, as RE2): %v", pe.Pattern, pe.Err)
	}
	return g, err
}

func logRun(cmd *cobra.Command, opts *LogOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	p := palette{f.IO.Color}
	d := newDates(f, opts.Date)
	var format logFormat
	if opts.Format != "" {
		var err error
		if format, err = parseLogFormat(opts.Format); err != nil {
			return err
		}
	}
	grep, err := newGrep(opts)
	if err != nil {
		return err
	}
	return withTract(f, func(t *tract.Tract) error {
		names := newToolNames(ctx, t)
		// line renders one commit for the graph or a list of lines.
		line := func(c *tract.CommitInfo) string {
			if format != nil {
				return format.expand(p, d, c, f.IO.OutTTY)
			}
			return oneLine(p, c, 72, names)
		}
		if opts.All {
			collectForWalk()
		}
		if opts.All && grep != nil {
			return logGrepAll(ctx, f, opts, t, grep, line)
		}
		if opts.All {
			o, err := t.Outline(ctx)
			if err != nil {
				return err
			}
			if !opts.JSON && len(o.Commits) == 0 && len(o.Orphans) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "No commits yet in this repository.")
				return nil
			}
			return withPager(f, func() error {
				if opts.JSON {
					return writeOutlineJSON(ctx, f.IO.Out, o)
				}
				// The drawing takes its order from TopoSeq: the list of
				// reachable commits (32 bytes a commit) can go.
				o.Commits = nil
				// A graph line never wraps: the terminal would break its columns.
				w, done := fitOut(f)
				if err := renderGraphAll(ctx, w, p, o, opts.Limit, line); err != nil {
					return err
				}
				return done()
			})
		}
		var lopts []tract.LogOption
		if opts.Limit > 0 {
			lopts = append(lopts, tract.LogLimit(opts.Limit))
		}
		if opts.Rev != "" {
			lopts = append(lopts, tract.LogFrom(opts.Rev))
		}
		if grep != nil {
			lopts = append(lopts, tract.LogGrep(grep))
		}
		seq := t.LogSeq(ctx, lopts...)
		return withPager(f, func() error {
			w := f.IO.Out
			if opts.JSON {
				return writeLogJSON(w, seq)
			}
			if opts.Graph || opts.Oneline || format.oneLine() {
				// One line per commit: cut to the terminal's width.
				fw, done := fitOut(f)
				defer done()
				w = fw
			}
			graph := &lanes{w: w, p: p}
			n := 0
			for c, err := range seq {
				if err != nil {
					return err
				}
				switch {
				case opts.Graph:
					tc := tract.TopoCommit{LaneCommit: tract.LaneCommit{Hash: c.Hash}}
					if len(c.Parents) > 0 {
						tc.Parent = c.Parents[0]
					}
					if err := graph.commit(tc, line(c), ""); err != nil {
						return err
					}
				case opts.Oneline || format != nil:
					if _, err := fmt.Fprintln(w, line(c)); err != nil {
						return err
					}
				default:
					if n > 0 {
						fmt.Fprintln(w)
					}
					renderFull(w, p, d, c, f.IO.OutTTY, names)
				}
				if !c.LostParent.IsZero() {
					// A salvage kept this commit without its parent.
					if _, err := fmt.Fprintf(w, "%s\n", p.bad(fmt.Sprintf("history lost before here (parent %s not recovered)", c.LostParent.Short()))); err != nil {
						return err
					}
				}
				n++
			}
			if n == 0 && grep != nil {
				fmt.Fprintln(f.IO.ErrOut, "No commit matches.")
				return nil
			}
			if n == 0 {
				// Only an unborn branch has no history (a revision names a commit).
				branch, _, err := t.Head(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(f.IO.ErrOut, "No commits yet on branch %s.\n", branch)
			}
			return nil
		})
	})
}

// logGrepAll prints the commits of the whole repository that grep
// matches, in the order 'log --all' draws them, each orphan marked with
// what orphaned its chain; --json keeps log --all's shape, with the
// chains that have no match left out. It reads the texts a page at a
// time and holds only the outline.
func logGrepAll(ctx context.Context, f *Factory, opts *LogOptions, t *tract.Tract, grep *search.Grep, line func(*tract.CommitInfo) string) error {
	o, err := t.Outline(ctx)
	if err != nil {
		return err
	}
	match := func(c *tract.CommitInfo) bool { return grep.Match(c.Text, c.Diagnosis()) }
	return withPager(f, func() error {
		if opts.JSON {
			return writeOutlineJSONMatching(ctx, f.IO.Out, o, match, opts.Limit)
		}
		w, done := fitOut(f)
		defer done()
		chainOf := make(map[tract.Hash]*tract.OrphanOutline)
		for i := range o.Orphans {
			for _, h := range o.Orphans[i].Commits {
				chainOf[h] = &o.Orphans[i]
			}
		}
		topo := o.Topo()
		hs := make([]tract.Hash, len(topo))
		for i, tc := range topo {
			hs[i] = tc.Hash
		}
		p := palette{f.IO.Color}
		n := 0
		for c, err := range o.Infos(ctx, hs) {
			if err != nil {
				return err
			}
			if !match(c) {
				continue
			}
			s := line(c)
			if ch := chainOf[c.Hash]; ch != nil {
				s += " " + p.dim("["+orphanedBy(ch)+"]")
			}
			if _, err := fmt.Fprintln(w, s); err != nil {
				return err
			}
			if n++; opts.Limit > 0 && n >= opts.Limit {
				break
			}
		}
		if n == 0 {
			fmt.Fprintln(f.IO.ErrOut, "No commit matches.")
		}
		return nil
	})
}

// writeLogJSON writes the first-parent history seq yields as writeJSON
// writes a tract.History with no orphans: 'log --json' has the shape of
// 'log --all --json'.
func writeLogJSON(w io.Writer, seq iter.Seq2[*tract.CommitInfo, error]) error {
	if _, err := io.WriteString(w, "{\n  \"commits\": "); err != nil {
		return err
	}
	if err := writeJSONCommits(w, seq); err != nil {
		return err
	}
	_, err := io.WriteString(w, ",\n  \"orphans\": []\n}\n")
	return err
}

// writeJSONCommits writes the commits seq yields as a JSON array, two
// spaces in, one commit at a time.
func writeJSONCommits(w io.Writer, seq iter.Seq2[*tract.CommitInfo, error]) error {
	a, err := startJSONArray(w, "  ")
	if err != nil {
		return err
	}
	for c, err := range seq {
		if err != nil {
			return err
		}
		if err := a.add(c); err != nil {
			return err
		}
	}
	return a.end()
}

// writeOutlineJSON writes the whole history as writeJSON writes a
// tract.History, reading the commits' texts as it goes.
func writeOutlineJSON(ctx context.Context, w io.Writer, o *tract.Outline) error {
	return writeOutlineJSONMatching(ctx, w, o, nil, 0)
}

// writeOutlineJSONMatching is writeOutlineJSON keeping only the commits
// match keeps (nil: all), at most limit of them (0: all), and only the
// orphan chains that keep one.
func writeOutlineJSONMatching(ctx context.Context, w io.Writer, o *tract.Outline, match func(*tract.CommitInfo) bool, limit int) error {
	n := 0
	full := func() bool { return limit > 0 && n >= limit }
	// list writes the kept commits of hs; opened, when not nil, is called
	// before the first of them.
	list := func(hs []tract.Hash, indent string, opened func() error) (*jsonArray, error) {
		var a *jsonArray
		for ci, err := range o.Infos(ctx, hs) {
			if err != nil {
				return nil, err
			}
			if full() {
				break
			}
			if match != nil && !match(ci) {
				continue
			}
			if a == nil {
				if opened != nil {
					if err := opened(); err != nil {
						return nil, err
					}
				}
				if a, err = startJSONArray(w, indent); err != nil {
					return nil, err
				}
			}
			if err := a.add(ci); err != nil {
				return nil, err
			}
			n++
		}
		return a, nil
	}
	if _, err := io.WriteString(w, "{\n  \"commits\": "); err != nil {
		return err
	}
	commits, err := list(o.Commits, "  ", nil)
	if err != nil {
		return err
	}
	if commits == nil {
		_, err = io.WriteString(w, "[]")
	} else {
		err = commits.end()
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, ",\n  \"orphans\": "); err != nil {
		return err
	}
	var chains *jsonArray
	for _, ch := range o.Orphans {
		if full() {
			break
		}
		// The chain's fields, with its commits streamed in between.
		var after string
		opened := func() error {
			if chains == nil {
				var err error
				if chains, err = startJSONArray(w, "  "); err != nil {
					return err
				}
			}
			head, err := chains.marshal(tract.OrphanChain{Fork: ch.Fork, Commits: []*tract.CommitInfo{},
				Action: ch.Action, Reason: ch.Reason, When: ch.When}, "    ")
			if err != nil {
				return err
			}
			before, rest, _ := strings.Cut(head, `"commits": []`)
			after = rest
			_, err = io.WriteString(w, chains.sep()+"    "+before+`"commits": `)
			return err
		}
		inner, err := list(ch.Commits, "      ", opened)
		if err != nil {
			return err
		}
		if inner == nil {
			continue // no commit of the chain kept
		}
		if err := inner.end(); err != nil {
			return err
		}
		if _, err := io.WriteString(w, after); err != nil {
			return err
		}
	}
	if chains == nil {
		_, err := io.WriteString(w, "[]\n}\n")
		return err
	}
	if err := chains.end(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}

// renderFull prints a commit the way 'git log' does; on a terminal, its
// text through the screen sanitiser (see screenText).
func renderFull(w io.Writer, p palette, d dates, c *tract.CommitInfo, terminal bool, names *toolNames) {
	refs := ""
	if len(c.Refs) > 0 {
		refs = " " + p.refs("("+strings.Join(c.Refs, ", ")+")")
	}
	fmt.Fprintf(w, "%s%s\n", p.hash("commit "+c.Hash.String()), refs)
	fmt.Fprintf(w, "Kind:   %s\nRole:   %s\n", c.Kind, c.Role)
	names.learnCommit(c)
	if id, name, ok := names.callOf(c); ok {
		// A tool result: the call it answers.
		call := id
		if name != "" {
			call = name + " (call " + id + ")"
		}
		if terminal {
			call = screenText(call)
		}
		fmt.Fprintf(w, "Tool:   %s\n", call)
	}
	fmt.Fprintf(w, "Date:   %s\n", d.format(c.Time))
	if d := c.Diagnosis(); d != "" {
		fmt.Fprintf(w, "Failed: %s\n", p.bad(preview(d, 200)))
	}
	text := c.Text
	if terminal {
		text = screenText(text)
	}
	fmt.Fprintf(w, "\n%s\n", indent(text, "    "))
}
