package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
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
}

func newCmdLog(f *Factory, runF func(*LogOptions) error) *cobra.Command {
	opts := &LogOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "log [REV]",
		Short: "Show the history: first-parent from HEAD, or every commit with --all",
		Long: `Show the first-parent history from HEAD (or REV), newest first.

With --all, show every commit in the repository: the reachable ones with their
refs, and orphaned commits (failed attempts hidden by purify, chains left by
reset or compress) as side chains drawn beside the commit they forked from,
each with the reflog action that orphaned it and, for failed attempts, the
validator's diagnosis. --all always draws the graph.`,
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
			if runF != nil {
				return runF(opts)
			}
			return logRun(cmd, opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "max-count", "n", 0, "show at most N commits (0: all)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "show every commit, orphans as side chains")
	cmd.Flags().BoolVar(&opts.Oneline, "oneline", false, "one line per commit")
	cmd.Flags().BoolVar(&opts.Graph, "graph", false, "draw the history as a graph")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func logRun(cmd *cobra.Command, opts *LogOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	p := palette{f.IO.Color}
	return withTract(f, func(t *tract.Tract) error {
		if opts.All {
			o, err := t.Outline(ctx)
			if err != nil {
				return err
			}
			if opts.JSON {
				return writeOutlineJSON(ctx, f.IO.Out, o)
			}
			return renderGraphAll(ctx, f.IO.Out, p, o, opts.Limit)
		}
		var lopts []tract.LogOption
		if opts.Limit > 0 {
			lopts = append(lopts, tract.LogLimit(opts.Limit))
		}
		if opts.Rev != "" {
			lopts = append(lopts, tract.LogFrom(opts.Rev))
		}
		seq := t.LogSeq(ctx, lopts...)
		if opts.JSON {
			return writeJSONSeq(f.IO.Out, seq)
		}
		n := 0
		for c, err := range seq {
			if err != nil {
				return err
			}
			switch {
			case opts.Oneline || opts.Graph:
				prefix := ""
				if opts.Graph {
					prefix = p.graph("*") + " "
				}
				fmt.Fprintln(f.IO.Out, prefix+oneLine(p, c, 72))
			default:
				if n > 0 {
					fmt.Fprintln(f.IO.Out)
				}
				renderFull(f.IO.Out, p, c)
			}
			n++
		}
		if n == 0 {
			fmt.Fprintln(f.IO.ErrOut, "No commits yet on this branch.")
		}
		return nil
	})
}

// writeOutlineJSON writes the whole history as writeJSON writes a
// tract.History, reading the commits' texts as it goes.
func writeOutlineJSON(ctx context.Context, w io.Writer, o *tract.Outline) error {
	list := func(a *jsonArray, hs []tract.Hash) error {
		for ci, err := range o.Infos(ctx, hs) {
			if err != nil {
				return err
			}
			if err := a.add(ci); err != nil {
				return err
			}
		}
		return a.end()
	}
	if _, err := io.WriteString(w, "{\n  \"commits\": "); err != nil {
		return err
	}
	commits, err := startJSONArray(w, "  ")
	if err != nil {
		return err
	}
	if err := list(commits, o.Commits); err != nil {
		return err
	}
	if _, err := io.WriteString(w, ",\n  \"orphans\": "); err != nil {
		return err
	}
	if len(o.Orphans) == 0 {
		_, err := io.WriteString(w, "null\n}\n")
		return err
	}
	chains, err := startJSONArray(w, "  ")
	if err != nil {
		return err
	}
	for _, ch := range o.Orphans {
		// The chain's fields, with its commits streamed in between.
		head, err := chains.marshal(tract.OrphanChain{Fork: ch.Fork, Commits: []*tract.CommitInfo{},
			Action: ch.Action, Reason: ch.Reason, When: ch.When}, "    ")
		if err != nil {
			return err
		}
		before, after, _ := strings.Cut(head, `"commits": []`)
		if _, err := io.WriteString(w, chains.sep()+"    "+before+`"commits": `); err != nil {
			return err
		}
		inner, err := startJSONArray(w, "      ")
		if err != nil {
			return err
		}
		if err := list(inner, ch.Commits); err != nil {
			return err
		}
		if _, err := io.WriteString(w, after); err != nil {
			return err
		}
	}
	if err := chains.end(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}

// renderFull prints a commit the way 'git log' does.
func renderFull(w io.Writer, p palette, c *tract.CommitInfo) {
	refs := ""
	if len(c.Refs) > 0 {
		refs = " " + p.refs("("+strings.Join(c.Refs, ", ")+")")
	}
	fmt.Fprintf(w, "%s%s\n", p.hash("commit "+c.Hash.String()), refs)
	fmt.Fprintf(w, "Kind:   %s\nRole:   %s\nDate:   %s\n", c.Kind, c.Role, c.Time.Format("2006-01-02 15:04:05.000000000 MST"))
	if d := c.Diagnosis(); d != "" {
		fmt.Fprintf(w, "Failed: %s\n", p.bad(preview(d, 200)))
	}
	fmt.Fprintf(w, "\n%s\n", indent(c.Text, "    "))
}

// renderGraphAll draws every commit: the reachable ones as the main line,
// each orphan chain as a side branch just above the commit it forked from.
// With limit > 0 it stops after that many main-line commits. It reads the
// commits' texts as it draws.
func renderGraphAll(ctx context.Context, w io.Writer, p palette, o *tract.Outline, limit int) error {
	byFork := make(map[tract.Hash][]*tract.OrphanOutline)
	var rootless []*tract.OrphanOutline
	for i := range o.Orphans {
		oc := &o.Orphans[i]
		if oc.Fork.IsZero() {
			rootless = append(rootless, oc)
			continue
		}
		byFork[oc.Fork] = append(byFork[oc.Fork], oc)
	}
	bar := p.graph("|")
	chain := func(oc *tract.OrphanOutline, prefix string, width int) error {
		for c, err := range o.Infos(ctx, oc.Commits) {
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s%s %s\n", prefix, p.graph("*"), oneLine(p, c, width))
		}
		return nil
	}
	main := o.Commits
	if limit > 0 && len(main) > limit {
		main = main[:limit]
	}
	for c, err := range o.Infos(ctx, main) {
		if err != nil {
			return err
		}
		forks := byFork[c.Hash]
		for j := len(forks) - 1; j >= 0; j-- {
			if err := chain(forks[j], bar+" ", 60); err != nil {
				return err
			}
			fmt.Fprintf(w, "%s%s  %s\n", bar, p.graph("/"), p.dim(orphanedBy(forks[j])))
		}
		fmt.Fprintf(w, "%s %s\n", p.graph("*"), oneLine(p, c, 72))
	}
	for _, oc := range rootless {
		fmt.Fprintln(w)
		if err := chain(oc, "  ", 60); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s\n", p.dim(orphanedBy(oc)+" (no reachable ancestor)"))
	}
	if len(o.Commits) == 0 && len(o.Orphans) == 0 {
		fmt.Fprintln(w, "(no commits)")
	}
	return nil
}

func orphanedBy(oc *tract.OrphanOutline) string {
	n := english.Count(len(oc.Commits), "commit", "commits")
	switch {
	case oc.Action == "conflict":
		// "conflict: answer kept off main, which moved from … to …"
		return fmt.Sprintf("stranded by a %s (%s)", oc.Reason, n)
	case oc.Reason != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Reason, n)
	case oc.Action != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Action, n)
	}
	return "orphaned (" + n + ")"
}
