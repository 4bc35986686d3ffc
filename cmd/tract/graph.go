package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// GraphOptions are the inputs of 'tract graph'.
type GraphOptions struct {
	Factory *Factory
	All     bool
	Rev     string
	Format  tract.GraphFormat
	// Output is the file to write ("" or "-": standard output).
	Output string
}

func newCmdGraph(f *Factory, runF func(*GraphOptions) error) *cobra.Command {
	opts := &GraphOptions{Factory: f}
	var format string
	cmd := &cobra.Command{
		Use:   "graph [--all | REV] [--format dot|mermaid] [-o FILE]",
		Short: "Write the history as a Graphviz (dot) or Mermaid graph",
		Long: `Write the history as a graph to draw: Graphviz DOT (the default; 'tract
graph | dot -Tsvg > graph.svg') or a Mermaid flowchart, of the commits HEAD
(or REV) reaches and the orphans that forked from them, or with --all of
every commit; orphans are dashed and failed attempts red with their
diagnosis.`,
		Example: `  tract graph | dot -Tsvg > history.svg
  tract graph --all --format mermaid -o history.md
  tract graph side -o side.dot`,
		Args: revisionArgs(maxArgs(1, "one revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			if opts.All && opts.Rev != "" {
				return usageErrorf("--all draws every commit; it takes no revision")
			}
			opts.Format = tract.GraphFormat(format)
			if !validGraphFormat(opts.Format) {
				return usageErrorf("--format %q: give dot or mermaid", format)
			}
			if strings.HasSuffix(opts.Output, ".md") && opts.Format != tract.GraphMermaid {
				return usageErrorf("-o %s: a Markdown file takes --format mermaid", opts.Output)
			}
			if runF != nil {
				return runF(opts)
			}
			return graphRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "draw every commit: every branch and every orphan")
	cmd.Flags().StringVar(&format, "format", string(tract.GraphDot), "Graphviz (dot) or Mermaid")
	setValueName(cmd.Flags(), "format", "dot|mermaid")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{string(tract.GraphDot), string(tract.GraphMermaid)}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of standard output")
	return cmd
}

func validGraphFormat(f tract.GraphFormat) bool {
	for _, g := range tract.GraphFormats() {
		if f == g {
			return true
		}
	}
	return false
}

func graphRun(cmd *cobra.Command, opts *GraphOptions) error {
	f := opts.Factory
	var gopts []tract.GraphOption
	if opts.All {
		gopts = append(gopts, tract.GraphAll())
	}
	if opts.Rev != "" {
		gopts = append(gopts, tract.GraphFrom(opts.Rev))
	}
	return withTract(f, func(t *tract.Tract) error {
		draw := func(w io.Writer) error { return t.WriteGraph(cmd.Context(), w, opts.Format, gopts...) }
		if opts.Output == "" || opts.Output == "-" {
			return draw(f.IO.Out)
		}
		markdown := strings.HasSuffix(opts.Output, ".md")
		// 0600 as the repository: a graph's labels are its messages' text.
		return writeFileWhole(opts.Output, 0o600, func(w io.Writer) error {
			if markdown {
				if _, err := io.WriteString(w, "```mermaid\n"); err != nil {
					return err
				}
			}
			if err := draw(w); err != nil {
				return err
			}
			if markdown {
				_, err := io.WriteString(w, "```\n")
				return err
			}
			return nil
		})
	})
}
