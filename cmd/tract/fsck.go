package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// FsckOptions are the inputs of 'tract fsck'.
type FsckOptions struct {
	Factory *Factory
	JSON    bool
}

// errFsckProblems makes fsck exit 1 after printing its report.
var errFsckProblems = errors.New("fsck found problems")

func newCmdFsck(f *Factory, runF func(*FsckOptions) error) *cobra.Command {
	opts := &FsckOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "fsck",
		Short: "Verify every object's hash and every reference",
		Long: `Re-derive the hash of every blob and commit, decode every commit, ref and
reflog entry, and check that every parent, blob and ref target exists. Exits 1
when it finds problems; it reports damage instead of crashing.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				r, err := t.Fsck(cmd.Context())
				if err != nil {
					return err
				}
				if opts.JSON {
					if err := writeJSON(f.IO.Out, r); err != nil {
						return err
					}
				} else {
					p := palette{f.IO.Color}
					for _, pr := range r.Problems {
						fmt.Fprintf(f.IO.Out, "%s %s\n", p.bad("error:"), pr)
					}
					status := p.good("ok")
					if !r.OK() {
						status = p.bad(english.Count(len(r.Problems), "problem", "problems"))
					}
					if r.UnfinishedImports > 0 {
						fmt.Fprintf(f.IO.Out, "note: %s (running, or killed: 'tract gc' removes what they wrote after an hour)\n",
							english.Count(r.UnfinishedImports, "unfinished import", "unfinished imports"))
					}
					packs := ""
					if r.Packs > 0 {
						packs = fmt.Sprintf(" (in %s; 'tract compact' merges them)", english.Count(r.Packs+1, "part", "parts"))
					}
					fmt.Fprintf(f.IO.Out, "checked %s, %s%s, %s, %s, %s: %s\n",
						english.Count(r.Commits, "commit", "commits"), english.Count(r.Blobs, "blob", "blobs"), packs,
						english.Count(r.Refs, "ref", "refs"), english.Count(r.ReflogEntries, "reflog entry", "reflog entries"),
						english.Count(r.Counters, "index entry", "index entries"), status)
				}
				if !r.OK() {
					return errFsckProblems
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}
