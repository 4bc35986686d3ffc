package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// ResetOptions are the inputs of 'tract reset'.
type ResetOptions struct {
	Factory *Factory
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch string
	Rev    string
	// Unborn takes every commit off the branch (--unborn) instead of
	// moving it to Rev.
	Unborn bool
	Hard   bool
	Force  bool
	JSON   bool
}

func newCmdReset(f *Factory, runF func(*ResetOptions) error) *cobra.Command {
	opts := &ResetOptions{Factory: f}
	var soft bool
	cmd := &cobra.Command{
		Use:   "reset [--soft | --hard --force] (REV | --unborn)",
		Short: "Move the current branch to REV",
		Long: `Move the current branch (or a detached HEAD) to REV and set ORIG_HEAD to
where it was. --soft (the default) keeps what it leaves behind as orphans,
which 'tract log --all' lists; --hard --force permanently erases them, for a
leaked secret; --unborn takes every commit off the branch.`,
		Example: `  tract reset HEAD~2
  tract reset --hard --force HEAD^
  tract reset --unborn`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Unborn {
				if len(args) > 0 {
					return usageErrorf("--unborn takes no revision: it takes every commit off the branch")
				}
				return nil
			}
			return revisionArgs(exactArgs(1, "one revision (or --unborn)"))(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Rev = args[0]
			}
			if soft && opts.Hard {
				return usageErrorf("--soft and --hard exclude each other")
			}
			if opts.Hard && !opts.Force {
				return usageErrorf("--hard permanently deletes the commits it leaves behind; add --force to do it (or use --soft to keep them as orphans)")
			}
			if runF != nil {
				return runF(opts)
			}
			return resetRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&soft, "soft", false, "keep the commits left behind as orphans (default)")
	cmd.Flags().BoolVar(&opts.Hard, "hard", false, "delete the commits left behind (needs --force)")
	cmd.Flags().BoolVarP(&opts.Force, "force", "f", false, "confirm --hard")
	cmd.Flags().BoolVar(&opts.Unborn, "unborn", false, "take every commit off the branch")
	addJSONFlag(cmd, &opts.JSON, "print the result as JSON", "reset")
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

func resetRun(cmd *cobra.Command, opts *ResetOptions) error {
	f := opts.Factory
	mode := tract.Soft
	if opts.Hard {
		mode = tract.Hard
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		var res *tract.ResetResult
		var err error
		if opts.Unborn {
			res, err = t.ResetUnborn(cmd.Context(), mode)
		} else {
			res, err = t.Reset(cmd.Context(), opts.Rev, mode)
		}
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(f.IO.Out, res)
		}
		p := palette{f.IO.Color}
		if res.To.IsZero() {
			st, err := t.Status(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "branch %s has no commits now\n", st.Branch)
		} else {
			fmt.Fprintf(f.IO.Out, "%s is now at %s\n", position(t), p.hash(res.To.Short()))
		}
		switch {
		case mode == tract.Hard && res.Deleted.Commits > 0:
			fmt.Fprintf(f.IO.ErrOut, "Deleted %s, %s and %s for good\n",
				english.Count(res.Deleted.Commits, "commit", "commits"), english.Count(res.Deleted.Blobs, "blob", "blobs"),
				english.Count(res.Deleted.ReflogEntries, "reflog entry", "reflog entries"))
		case res.Orphaned > 0:
			fmt.Fprintf(f.IO.ErrOut, "%s left behind as orphans (see 'tract log --all'; ORIG_HEAD is %s)\n",
				english.Count(res.Orphaned, "commit", "commits"), res.From.Short())
		}
		return nil
	})
}
