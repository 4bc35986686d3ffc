package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// BranchOptions are the inputs of 'tract branch'.
type BranchOptions struct {
	Factory *Factory
	Name    string
	Start   string
	Delete  bool
	JSON    bool
}

func newCmdBranch(f *Factory, runF func(*BranchOptions) error) *cobra.Command {
	opts := &BranchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "branch [NAME [START] | -d NAME]",
		Short: "List, create or delete branches",
		Long: `List, create or delete branches. -d also deletes a ref 'fsck --salvage'
made for a chain no branch reached, named in full (as 'log --all' shows
it): keep the chain on a branch first if you want it.`,
		Example: `  tract branch                 # list
  tract branch experiment      # create at HEAD
  tract branch -d experiment   # delete
  tract branch kept refs/salvaged/1a2b3c4d      # keep a salvaged chain
  tract branch -d refs/salvaged/1a2b3c4d        # then drop its ref`,
		Args: branchArgs(maxArgs(2, "a name and a start revision"), 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Name = args[0]
			}
			if len(args) > 1 {
				opts.Start = args[1]
			}
			if opts.Delete && (opts.Name == "" || opts.Start != "") {
				return usageErrorf("-d takes exactly one branch name")
			}
			if opts.JSON && opts.Name != "" {
				return usageErrorf("--json lists the branches: it takes no NAME (after creating or deleting one, run 'tract branch --json')")
			}
			if runF != nil {
				return runF(opts)
			}
			return branchRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Delete, "delete", "d", false, "delete the branch NAME (or a ref refs/salvaged/…)")
	addJSONFlag(cmd, &opts.JSON, "list branches as JSON", "branch")
	return cmd
}

func branchRun(cmd *cobra.Command, opts *BranchOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	p := palette{f.IO.Color}
	return withTract(f, func(t *tract.Tract) error {
		switch {
		case opts.Delete:
			was, err := t.DeleteBranch(ctx, opts.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Deleted branch %s (was %s)\n", opts.Name, was.Short())
			return nil
		case opts.Name != "":
			at, err := t.CreateBranch(ctx, opts.Name, opts.Start)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Created branch %s at %s\n", opts.Name, at.Short())
			return nil
		}
		bs, err := t.Branches(ctx)
		if err != nil {
			return err
		}
		if opts.JSON {
			if bs == nil {
				bs = []tract.Branch{}
			}
			return writeJSON(f.IO.Out, bs)
		}
		for _, b := range bs {
			mark := "  "
			name := b.Name
			if b.Current {
				mark, name = "* ", p.good(b.Name)
			}
			fmt.Fprintf(f.IO.Out, "%s%s %s\n", mark, name, p.hash(b.Hash.Short()))
		}
		return nil
	})
}
