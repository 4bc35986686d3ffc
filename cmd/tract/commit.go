package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// CommitOptions are the inputs of 'tract commit'.
type CommitOptions struct {
	Factory *Factory
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch string
	Role   string
	Kind   string
	// Message is the text of -m; several -m are joined as paragraphs.
	Message string
	// MessageSet is true when -m was given (else the text comes from stdin).
	MessageSet bool
	Meta       string
	JSON       bool
}

func newCmdCommit(f *Factory, runF func(*CommitOptions) error) *cobra.Command {
	opts := &CommitOptions{Factory: f}
	var messages []string
	cmd := &cobra.Command{
		Use:   "commit --role ROLE [--kind KIND] [-m TEXT | -]",
		Short: "Append a commit to the current branch",
		Long: `Append a commit to the current branch: the text is -m TEXT (several -m are
joined as paragraphs, a blank line between), or standard input when -m is
absent or "-"; the role is system, user, assistant or tool, and the kind
message (default), steering, summary, note or error.`,
		Example: `  tract commit --role system -m "You are terse."
  tract commit --role user -m "Summarize this:" -m "$(cat notes.txt)"
  echo "What is 2+2?" | tract commit --role user`,
		Args: maxArgs(1, `one argument "-" (text from stdin)`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.MessageSet = cmd.Flags().Changed("message")
			if len(messages) > 1 && slices.Contains(messages, "-") {
				return usageErrorf(`-m - reads the text from standard input: it cannot be joined with another -m`)
			}
			opts.Message = strings.Join(messages, "\n\n")
			if len(args) == 1 {
				if args[0] != "-" || opts.MessageSet {
					return usageErrorf("unexpected argument %q: give the text with -m TEXT or on stdin", args[0])
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return commitRun(cmd, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Role, "role", "r", "", "system, user, assistant or tool (required)")
	setValueName(cmd.Flags(), "role", "ROLE")
	cmd.Flags().StringVarP(&opts.Kind, "kind", "k", "message", "message, steering, summary, note, error")
	setValueName(cmd.Flags(), "kind", "KIND")
	cmd.Flags().StringArrayVarP(&messages, "message", "m", nil, "the `TEXT` (\"-\": standard input); repeat for paragraphs")
	cmd.Flags().StringVar(&opts.Meta, "meta", "", "metadata as a `JSON` object")
	addJSONFlag(cmd, &opts.JSON, "print the new commit as JSON", "commit record")
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

func commitRun(cmd *cobra.Command, opts *CommitOptions) error {
	f := opts.Factory
	if opts.Role == "" {
		return usageErrorf("--role is required (system, user, assistant or tool)")
	}
	role, err := tract.ParseRole(opts.Role)
	if err != nil {
		return &usageError{err}
	}
	kind, err := tract.ParseKind(opts.Kind)
	if err != nil {
		return &usageError{err}
	}
	text, err := readText(f, opts.Message, opts.MessageSet)
	if err != nil {
		return err
	}
	var copts []tract.CommitOption
	if opts.Meta != "" {
		copts = append(copts, tract.WithMetaJSON([]byte(opts.Meta)))
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		h, err := t.Commit(cmd.Context(), kind, role, text, copts...)
		if err != nil {
			return err
		}
		ci, err := t.Show(cmd.Context(), h.String())
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(f.IO.Out, ci)
		}
		branch, _, err := t.Head(cmd.Context())
		if err != nil {
			return err
		}
		p := palette{f.IO.Color}
		w, done := fitOut(f)
		fmt.Fprintf(w, "[%s %s] %s: %s\n", branch, p.hash(h.Short()), label(ci), preview(ci.Text, 72))
		return done()
	})
}
