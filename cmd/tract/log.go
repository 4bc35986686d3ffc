package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
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
		Args: maxArgs(1, "one revision"),
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
			h, err := t.LogAll(ctx)
			if err != nil {
				return err
			}
			if opts.JSON {
				return writeJSON(f.IO.Out, h)
			}
			renderGraphAll(f.IO.Out, p, h, opts.Limit)
			return nil
		}
		var lopts []tract.LogOption
		if opts.Limit > 0 {
			lopts = append(lopts, tract.LogLimit(opts.Limit))
		}
		if opts.Rev != "" {
			lopts = append(lopts, tract.LogFrom(opts.Rev))
		}
		cs, err := t.Log(ctx, lopts...)
		if err != nil {
			return err
		}
		if opts.JSON {
			if cs == nil {
				cs = []*tract.CommitInfo{}
			}
			return writeJSON(f.IO.Out, cs)
		}
		if len(cs) == 0 {
			fmt.Fprintln(f.IO.ErrOut, "No commits yet on this branch.")
			return nil
		}
		for i, c := range cs {
			switch {
			case opts.Oneline || opts.Graph:
				prefix := ""
				if opts.Graph {
					prefix = p.graph("*") + " "
				}
				fmt.Fprintln(f.IO.Out, prefix+oneLine(p, c, 72))
			default:
				if i > 0 {
					fmt.Fprintln(f.IO.Out)
				}
				renderFull(f.IO.Out, p, c)
			}
		}
		return nil
	})
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
// With limit > 0 it stops after that many main-line commits.
func renderGraphAll(w io.Writer, p palette, h *tract.History, limit int) {
	byFork := make(map[tract.Hash][]*tract.OrphanChain)
	var rootless []*tract.OrphanChain
	for _, oc := range h.Orphans {
		if oc.Fork.IsZero() {
			rootless = append(rootless, oc)
			continue
		}
		byFork[oc.Fork] = append(byFork[oc.Fork], oc)
	}
	bar := p.graph("|")
	for i, c := range h.Commits {
		if limit > 0 && i >= limit {
			break
		}
		for j := len(byFork[c.Hash]) - 1; j >= 0; j-- {
			oc := byFork[c.Hash][j]
			for _, oc := range oc.Commits {
				fmt.Fprintf(w, "%s %s %s\n", bar, p.graph("*"), oneLine(p, oc, 60))
			}
			fmt.Fprintf(w, "%s%s  %s\n", bar, p.graph("/"), p.dim(orphanedBy(oc)))
		}
		fmt.Fprintf(w, "%s %s\n", p.graph("*"), oneLine(p, c, 72))
	}
	for _, oc := range rootless {
		fmt.Fprintln(w)
		for _, c := range oc.Commits {
			fmt.Fprintf(w, "  %s %s\n", p.graph("*"), oneLine(p, c, 60))
		}
		fmt.Fprintf(w, "  %s\n", p.dim(orphanedBy(oc)+" (no reachable ancestor)"))
	}
	if len(h.Commits) == 0 && len(h.Orphans) == 0 {
		fmt.Fprintln(w, "(no commits)")
	}
}

func orphanedBy(oc *tract.OrphanChain) string {
	n := plural(len(oc.Commits), "commit", "commits")
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
