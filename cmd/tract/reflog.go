package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// ReflogOptions are the inputs of 'tract reflog'.
type ReflogOptions struct {
	Factory *Factory
	Ref     string
	Limit   int
	JSON    bool
	// Date, when set (--date), names each move by its time instead of
	// its index: REF@{2026-11-23 17:07:10 +0100}, as git does.
	Date dateMode
}

func newCmdReflog(f *Factory, runF func(*ReflogOptions) error) *cobra.Command {
	opts := &ReflogOptions{Factory: f}
	var date string
	cmd := &cobra.Command{
		Use:   "reflog [REF]",
		Short: "Show every move of HEAD or a branch, newest first",
		Long: `Show the moves of REF (HEAD by default, a branch, or STRANDED), newest first,
as 'git reflog' does: the commit each move led to, REF@{N}, and what moved it
(commit, purify, reset, compress, import, …). REF@{N} is also a revision:
'tract reset --soft HEAD@{1}' undoes the last move.`,
		Example: `  tract reflog
  tract reflog main -n 5
  tract reset --soft HEAD@{1}      # undo the last move of HEAD
  tract reflog STRANDED --json
  tract reflog --date relative`,
		Args: revisionArgs(maxArgs(1, "one ref")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			if opts.Limit < 0 {
				return usageErrorf("-n must be 0 (no limit) or more, got %d", opts.Limit)
			}
			if cmd.Flags().Changed("date") {
				if date == "" {
					return usageErrorf("--date needs a mode: iso, relative or unix")
				}
				var err error
				if opts.Date, err = parseDateMode(date); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				es, err := t.Reflog(cmd.Context(), opts.Ref, tract.ReflogLimit(opts.Limit))
				if err != nil {
					return err
				}
				return withPager(f, func() error {
					if opts.JSON {
						if es == nil {
							es = []tract.ReflogEntry{}
						}
						return writeJSON(f.IO.Out, es)
					}
					p, d := palette{f.IO.Color}, newDates(f, opts.Date)
					w, done := fitOut(f)
					defer done()
					for _, e := range es {
						name := e.RefName()
						at := fmt.Sprint(e.Index)
						if opts.Date != "" {
							at = d.format(e.Time)
						}
						if _, err := fmt.Fprintf(w, "%s %s: %s\n", p.hash(e.New.Short()), p.refs(name+"@{"+at+"}"), preview(e.Message, 0)); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "max-count", "n", 0, "show at most `N` entries (or -N, as in git)")
	markCountShorthand(cmd, "max-count")
	addJSONFlag(cmd, &opts.JSON, "print JSON", "reflog")
	addDateFlag(cmd, &date, "", "name each move by its time, not its index")
	return cmd
}
