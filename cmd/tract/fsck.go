package main

import (
	"context"
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
	Salvage string
}

// errFsckProblems makes fsck exit 1 after printing its report.
var errFsckProblems = errors.New("fsck found problems")

func newCmdFsck(f *Factory, runF func(*FsckOptions) error) *cobra.Command {
	opts := &FsckOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "fsck [--salvage NEW]",
		Short: "Verify every hash and reference; salvage a damaged file",
		Long: `Re-derive the hash of every blob and commit, decode every commit, ref and
reflog entry, and check that every parent, blob and ref target exists; exit 1
when something is damaged (on any file, even one too damaged to open).
--salvage NEW.db copies everything that still verifies into a new repository
and says what was lost.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			if opts.Salvage != "" {
				return runSalvage(cmd.Context(), opts)
			}
			return runFsck(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print the report as JSON", "fsck", "fsck --salvage")
	cmd.Flags().StringVar(&opts.Salvage, "salvage", "", "copy what still verifies into a new repository `NEW`")
	return cmd
}

func runFsck(ctx context.Context, opts *FsckOptions) error {
	f := opts.Factory
	path, lockOpts, err := fsckTarget(f)
	if err != nil {
		return err
	}
	collectForWalk()
	line := f.progressLine("fsck")
	r, err := tract.FsckFile(ctx, path, append(lockOpts, tract.WithFsckProgress(line.tract()))...)
	line.clear()
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(f.IO.Out, r); err != nil {
			return err
		}
		if !r.OK() {
			// What to do goes where a person reads it, as the text
			// report says it, and leaves the JSON as documented.
			fmt.Fprintln(f.IO.ErrOut, fsckDamageHint(tract.IsDatabaseURL(path)))
		}
	} else {
		printFsck(f, r, tract.IsDatabaseURL(path))
	}
	if !r.OK() {
		return errFsckProblems
	}
	return nil
}

// fsckTarget returns the repository path and the options fsck and salvage
// open it with.
func fsckTarget(f *Factory) (string, []tract.Option, error) {
	opts, err := f.options()
	if err != nil {
		return "", nil, err
	}
	path, err := f.RepoPath(false)
	return path, opts, err
}

func printFsck(f *Factory, r *tract.FsckReport, database bool) {
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
	if r.SalvageBoundaries > 0 || r.LostTexts > 0 {
		fmt.Fprintf(f.IO.Out, "note: salvaged from a damaged file: %s where history was lost, %s lost ('tract log' says where)\n",
			english.Count(r.SalvageBoundaries, "chain starts", "chains start"), english.Count(r.LostTexts, "text", "texts"))
	}
	switch r.WordIndex {
	case tract.WordIndexRebuilt:
		fmt.Fprintf(f.IO.Out, "note: the word index did not match the commits (%s): rebuilt\n", r.WordIndexProblem)
	case tract.WordIndexAbsent:
		fmt.Fprintln(f.IO.Out, "note: no word index yet: the next write builds it ('tract search' reads every text until then)")
	}
	packs := ""
	if r.Packs > 0 {
		packs = fmt.Sprintf(" (in %s; 'tract compact' merges them)", english.Count(r.Packs+1, "part", "parts"))
	}
	fmt.Fprintf(f.IO.Out, "checked %s, %s%s, %s, %s, %s: %s\n",
		english.Count(r.Commits, "commit", "commits"), english.Count(r.Blobs, "blob", "blobs"), packs,
		english.Count(r.Refs, "ref", "refs"), english.Count(r.ReflogEntries, "reflog entry", "reflog entries"),
		english.Count(r.Counters, "index entry", "index entries"), status)
	if !r.OK() {
		fmt.Fprintln(f.IO.Out, fsckDamageHint(database))
	}
}

// fsckDamageHint is what to do about the damage fsck found in a
// repository, a database's or a file.
func fsckDamageHint(database bool) string {
	if database {
		return databaseDamageHint
	}
	return "The repository is marked damaged and refuses writes; 'tract fsck --salvage NEW.db' copies what is intact into a new one."
}

// salvageResult is what 'tract fsck --salvage --json' prints.
type salvageResult struct {
	*tract.SalvageReport
	Path  string            `json:"path"`
	Check *tract.FsckReport `json:"check"`
}

func runSalvage(ctx context.Context, opts *FsckOptions) error {
	f := opts.Factory
	src, lockOpts, err := fsckTarget(f)
	if err != nil {
		return err
	}
	rep, err := tract.Salvage(ctx, src, opts.Salvage)
	if hint := partialHint(err); hint != "" {
		return &hintedError{err, hint}
	}
	if err != nil {
		return err
	}
	check, err := tract.FsckFile(ctx, opts.Salvage, lockOpts...)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(f.IO.Out, salvageResult{SalvageReport: rep, Path: opts.Salvage, Check: check}); err != nil {
			return err
		}
	} else {
		p := palette{f.IO.Color}
		for _, l := range rep.Lost {
			fmt.Fprintf(f.IO.Out, "%s %s\n", p.bad("lost:"), l)
		}
		fmt.Fprintf(f.IO.Out, "salvaged %s, %s, %s, %s into %s (%s lost, %s unreadable)\n",
			english.Count(rep.Commits, "commit", "commits"), english.Count(rep.Blobs, "blob", "blobs"),
			english.Count(rep.Refs, "ref", "refs"), english.Count(rep.ReflogEntries, "reflog entry", "reflog entries"),
			opts.Salvage, english.Count(len(rep.Lost), "item", "items"), english.Count(rep.UnreadablePages, "page", "pages"))
		if len(rep.Boundaries) > 0 || rep.LostTexts > 0 || len(rep.SalvagedRefs) > 0 {
			fmt.Fprintf(f.IO.Out, "kept %s whose parent was lost (each now the root of its chain) and %s whose text was; %s under refs/salvaged/ for chains no ref reaches\n",
				english.Count(len(rep.Boundaries), "commit", "commits"), english.Count(rep.LostTexts, "commit", "commits"),
				english.Count(len(rep.SalvagedRefs), "ref", "refs"))
		}
		if len(rep.SalvagedRefs) > 0 {
			fmt.Fprintf(f.IO.Out, "keep a chain on a branch with 'tract branch NAME %s'; drop a ref you no longer need with 'tract branch -d %s'\n",
				rep.SalvagedRefs[0], rep.SalvagedRefs[0])
		}
		if check.OK() {
			fmt.Fprintf(f.IO.Out, "%s: the new repository checks clean; use it with --db %s (or move it into place)\n", p.good("ok"), opts.Salvage)
		}
	}
	if !check.OK() {
		for _, pr := range check.Problems {
			fmt.Fprintf(f.IO.ErrOut, "check of %s: %s\n", opts.Salvage, pr)
		}
		return errFsckProblems
	}
	return nil
}
