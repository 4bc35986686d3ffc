package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// CompileOptions are the inputs of 'tract compile'.
type CompileOptions struct {
	Factory *Factory
	Rev     string
	Notes   bool
	JSON    bool
}

func newCmdCompile(f *Factory, runF func(*CompileOptions) error) *cobra.Command {
	opts := &CompileOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "compile [REV]",
		Short: "Print the messages a model would be sent",
		Long: `Print the messages a model would be sent for HEAD (or REV): the
first-parent chain from the root, with message, summary and steering
commits (steering as role user), notes and errors left out; --json prints
the OpenAI chat "messages" array.`,
		Args: revisionArgs(maxArgs(1, "one revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Rev = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return compileRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Notes, "notes", false, "include note commits")
	addJSONFlag(cmd, &opts.JSON, "print the OpenAI messages array", "compile")
	return cmd
}

func compileRun(cmd *cobra.Command, opts *CompileOptions) error {
	f := opts.Factory
	var copts []tract.CompileOption
	if opts.Rev != "" {
		copts = append(copts, tract.CompileAt(opts.Rev))
	}
	if opts.Notes {
		copts = append(copts, tract.IncludeNotes())
	}
	return withTract(f, func(t *tract.Tract) error {
		msgs := t.CompileSeq(cmd.Context(), copts...)
		if opts.JSON {
			return writeJSONSeq(f.IO.Out, msgs)
		}
		p := palette{f.IO.Color}
		n := 0
		names := map[string]string{} // tool call id -> tool name
		for m, err := range msgs {
			if err != nil {
				return err
			}
			if n > 0 {
				fmt.Fprintln(f.IO.Out)
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
			head := m.Role
			if m.ToolCallID != "" {
				// A tool result names its tool (or, not found, its call).
				head += ": " + toolLabel(m.ToolCallID, names[m.ToolCallID])
			}
			text := m.Text()
			if f.IO.OutTTY { // stored text: on a terminal, through the screen sanitiser
				text, head = screenText(text), screenText(head)
			}
			fmt.Fprintf(f.IO.Out, "%s\n%s\n", p.refs("["+head+"]"), text)
			n++
		}
		return nil
	})
}
