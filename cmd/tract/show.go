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
}

func newCmdShow(f *Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "show [REV]",
		Short: "Show one commit: text, metadata and provenance (default HEAD)",
		Args:  revisionArgs(maxArgs(1, "one revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Rev = "HEAD"
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func showRun(cmd *cobra.Command, opts *ShowOptions) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		c, err := t.Show(cmd.Context(), opts.Rev)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(f.IO.Out, c)
		}
		p := palette{f.IO.Color}
		renderFull(f.IO.Out, p, c)
		renderMeta(f.IO.Out, p, c)
		return nil
	})
}

// renderMeta prints provenance in words, then the raw metadata.
func renderMeta(w io.Writer, p palette, c *tract.CommitInfo) {
	if len(c.Meta) == 0 {
		return
	}
	if prov, ok := c.Provenance(); ok {
		fmt.Fprintf(w, "\nProvenance: accepted after %s\n", english.Count(prov.Attempts, "attempt", "attempts"))
		for i, d := range prov.Diagnoses {
			fmt.Fprintf(w, "  attempt %d failed: %s\n", i+1, p.bad(d))
		}
	}
	var buf bytes.Buffer
	if json.Indent(&buf, c.Meta, "    ", "  ") == nil {
		fmt.Fprintf(w, "\nMetadata:\n    %s\n", strings.TrimSpace(buf.String()))
	}
}
