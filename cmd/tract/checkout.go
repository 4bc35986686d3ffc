package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// CheckoutOptions are the inputs of 'tract checkout'.
type CheckoutOptions struct {
	Factory *Factory
	Target  string
	JSON    bool
}

func newCmdCheckout(f *Factory, runF func(*CheckoutOptions) error) *cobra.Command {
	opts := &CheckoutOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "checkout BRANCH|REV",
		Short: "Attach HEAD to a branch, or detach it at a commit",
		Args:  revisionArgs(exactArgs(1, "one branch or revision")),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				st, err := t.Checkout(cmd.Context(), opts.Target)
				if err != nil {
					return err
				}
				return reportHead(f, st, opts.JSON)
			})
		},
	}
	addStatusJSONFlag(cmd, &opts.JSON)
	return cmd
}

// SwitchOptions are the inputs of 'tract switch'.
type SwitchOptions struct {
	Factory *Factory
	Branch  string
	Create  bool
	JSON    bool
}

func newCmdSwitch(f *Factory, runF func(*SwitchOptions) error) *cobra.Command {
	opts := &SwitchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "switch [-c] BRANCH",
		Short: "Switch to a branch (-c creates it at HEAD)",
		Args:  branchArgs(exactArgs(1, "one branch name"), 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Branch = args[0]
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				st, err := t.Switch(cmd.Context(), opts.Branch, opts.Create)
				if opts.Create && errors.Is(err, tract.ErrBranchExists) {
					return &hintedError{err, fmt.Sprintf("To go to it, run 'tract switch %s' (without -c); or choose another name.", shellQuote(opts.Branch))}
				}
				if err != nil {
					return err
				}
				return reportHead(f, st, opts.JSON)
			})
		},
	}
	cmd.Flags().BoolVarP(&opts.Create, "create", "c", false, "create the branch at HEAD first")
	addStatusJSONFlag(cmd, &opts.JSON)
	return cmd
}

// addStatusJSONFlag registers --json on a command that moves HEAD.
func addStatusJSONFlag(cmd *cobra.Command, v *bool) {
	addJSONFlag(cmd, v, "print the new status as JSON (as 'tract status --json')", "status record")
}

// reportHead says where HEAD is now on stderr, and prints the status as
// JSON on stdout when asJSON.
func reportHead(f *Factory, st *tract.Status, asJSON bool) error {
	w := f.IO.ErrOut
	switch {
	case st.Detached:
		fmt.Fprintf(w, "HEAD is now detached at %s (commit on it after 'tract switch -c NAME')\n", st.Head.Short())
	case st.Head.IsZero():
		fmt.Fprintf(w, "Switched to branch %s (no commits yet)\n", st.Branch)
	default:
		fmt.Fprintf(w, "Switched to branch %s at %s\n", st.Branch, st.Head.Short())
	}
	if asJSON {
		return writeJSON(f.IO.Out, st)
	}
	return nil
}
