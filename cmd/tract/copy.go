package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// CopyOptions are the inputs of 'tract copy'.
type CopyOptions struct {
	Factory  *Factory
	Src, Dst string
	JSON     bool
}

func newCmdCopy(f *Factory, runF func(*CopyOptions) error) *cobra.Command {
	opts := &CopyOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "copy SRC DST [--json]",
		Short: "Copy a repository into a new one, verifying every object",
		Long: `Copy the repository SRC into DST, a new or empty repository (a file or a
postgres:// URL): every object re-hashed before it is written, every ref and
reflog unchanged. The copy is all or nothing: a copy that fails or is
interrupted leaves DST as it was, and SRC is only read.`,
		Example: `  tract copy .tract/tract.db /backup/agent.db
  tract copy old.db new.db --json`,
		Args: exactArgs(2, "two arguments, SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Src, opts.Dst = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return copyRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print what was copied as JSON", "copy")
	return cmd
}

func copyRun(ctx context.Context, opts *CopyOptions) error {
	f := opts.Factory
	open, err := f.options()
	if err != nil {
		return err
	}
	line := f.progressLine("copy")
	res, err := tract.Copy(ctx, opts.Src, opts.Dst, tract.CopyOpenOptions(open...), tract.CopyProgress(line.tract()))
	line.clear()
	switch {
	case errors.Is(err, tract.ErrNotEmpty):
		return usageErrorf("%w\nCopy into a path that does not exist yet (copy creates it), or into an empty repository as 'tract init' leaves it.", err)
	case errors.Is(err, tract.ErrSameRepository):
		return usageErrorf("%w: give another DST", err)
	case partialHint(err) != "":
		return &hintedError{err, partialHint(err)}
	case errors.Is(err, tract.ErrInvalidBranchName):
		// A name SRC's store took (a database, or an older tract) that
		// DST's cannot: nothing was copied.
		return &hintedError{err, fmt.Sprintf("Give that branch a name of at most %d bytes in SRC: 'tract branch NEW OLD' makes one at its commit,\n"+
			"then 'tract branch -d OLD' deletes the long one (run them with --db SRC); then copy again.", tract.MaxBranchNameBytes)}
	case errors.Is(err, tract.ErrNotRepository) && !errors.Is(err, tract.ErrCorrupt):
		return &hintedError{err, copyNotRepositoryHint(opts)}
	case err != nil:
		return err
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, res)
	}
	fmt.Fprintf(f.IO.Out, "Copied %s and %s (%s, every one re-hashed), %s and %s from %s to %s\n",
		english.Count(int(res.Commits), "commit", "commits"), english.Count(int(res.Blobs), "blob", "blobs"),
		english.Bytes(res.Bytes), english.Count(res.Refs, "ref", "refs"),
		english.Count(res.ReflogEntries, "reflog entry", "reflog entries"), res.Source, res.Destination)
	if res.UnfinishedImports > 0 {
		fmt.Fprintf(f.IO.Out, "note: %s in %s not copied (running, or killed)\n",
			english.Count(res.UnfinishedImports, "unfinished import was", "unfinished imports were"), res.Source)
	}
	return nil
}

// partialHint says what to do about the partial file of another copy or
// salvage into the same destination: wait for a running one, remove one
// that cannot be removed automatically; "" for other errors.
func partialHint(err error) string {
	var left *tract.LeftoverError
	switch {
	case errors.Is(err, tract.ErrDestinationBusy):
		return "Wait for it to finish, or stop it; the next run removes a partial file no one has open."
	case errors.As(err, &left):
		return "Remove it, then run the command again:\n  rm " + shellQuote(left.Path)
	}
	return ""
}

// copyNotRepositoryHint says what to do when SRC or DST of a copy is no
// repository: SRC must be one, DST a new path or an empty repository.
func copyNotRepositoryHint(opts *CopyOptions) string {
	if src, err := os.Stat(opts.Src); err == nil && src.Mode().IsRegular() && isDir(opts.Dst) {
		return "DST " + dirHint(opts.Dst, "")
	}
	if src, err := tract.Open(opts.Src, tract.WithReadOnly()); err == nil {
		src.Close()
		if dst, err := os.Stat(opts.Dst); err == nil && dst.Mode().IsRegular() {
			// SRC is a repository: DST is the file that is not. A copy
			// killed by a tract that wrote DST in place could leave one.
			return "DST is a file that is not a tract repository; copy leaves it alone. If an interrupted copy\n" +
				"left it, remove it and copy again (rm " + shellQuote(opts.Dst) + "); else give a path that does not exist yet."
		}
	}
	return "SRC must be a tract repository, and DST a path that does not exist yet (copy creates it)\n" +
		"or an empty repository."
}
