package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// StatusOptions are the inputs of 'tract status'.
type StatusOptions struct {
	Factory *Factory
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch string
	JSON   bool
}

func newCmdStatus(f *Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the current branch, HEAD and the size of the context",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
				st, err := t.Status(cmd.Context())
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, st)
				}
				p := palette{f.IO.Color}
				w := f.IO.Out
				switch {
				case st.Detached:
					fmt.Fprintf(w, "HEAD detached at %s\n", p.hash(st.Head.Short()))
				default:
					fmt.Fprintf(w, "On branch %s\n", p.good(st.Branch))
				}
				if st.Head.IsZero() {
					fmt.Fprintln(w, "No commits yet")
				} else {
					tip := "HEAD"
					if opts.Branch != "" {
						tip = "Tip"
					}
					fmt.Fprintf(w, "%s %s: %s on the chain, %s (~%s) in the compiled context\n",
						tip, p.hash(st.Head.Short()), english.Count(st.Length, "commit", "commits"), english.Count(st.Messages, "message", "messages"),
						english.Count(st.Tokens, "token", "tokens"))
				}
				if !st.OrigHead.IsZero() {
					fmt.Fprintf(w, "ORIG_HEAD %s\n", p.hash(st.OrigHead.Short()))
				}
				fmt.Fprintf(w, "Repository %s\n", st.Path)
				return nil
			})
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print JSON", "status record")
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}
