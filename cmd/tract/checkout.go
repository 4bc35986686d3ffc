package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// CheckoutOptions are the inputs of 'tract checkout'.
type CheckoutOptions struct {
	Factory *Factory
	Target  string
}

func newCmdCheckout(f *Factory, runF func(*CheckoutOptions) error) *cobra.Command {
	opts := &CheckoutOptions{Factory: f}
	return &cobra.Command{
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
				reportHead(f.IO.ErrOut, st)
				return nil
			})
		},
	}
}

// SwitchOptions are the inputs of 'tract switch'.
type SwitchOptions struct {
	Factory *Factory
	Branch  string
	Create  bool
}

func newCmdSwitch(f *Factory, runF func(*SwitchOptions) error) *cobra.Command {
	opts := &SwitchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "switch [-c] BRANCH",
		Short: "Switch to a branch (-c creates it at HEAD)",
		Args:  revisionArgs(exactArgs(1, "one branch name")),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Branch = args[0]
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				st, err := t.Switch(cmd.Context(), opts.Branch, opts.Create)
				if err != nil {
					return err
				}
				reportHead(f.IO.ErrOut, st)
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&opts.Create, "create", "c", false, "create the branch at HEAD first")
	return cmd
}

func reportHead(w io.Writer, st *tract.Status) {
	switch {
	case st.Detached:
		fmt.Fprintf(w, "HEAD is now detached at %s (commit on it after 'tract switch -c NAME')\n", st.Head.Short())
	case st.Head.IsZero():
		fmt.Fprintf(w, "Switched to branch %s (no commits yet)\n", st.Branch)
	default:
		fmt.Fprintf(w, "Switched to branch %s at %s\n", st.Branch, st.Head.Short())
	}
}
