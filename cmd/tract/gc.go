package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// GCOptions are the inputs of 'tract gc'.
type GCOptions struct {
	Factory *Factory
	Expire  time.Duration
	DryRun  bool
	JSON    bool
}

func newCmdGC(f *Factory, runF func(*GCOptions) error) *cobra.Command {
	opts := &GCOptions{Factory: f}
	var expire string
	cmd := &cobra.Command{
		Use:   "gc [--expire AGE] [--dry-run]",
		Short: "Delete orphans whose reflog entries have expired",
		Long: `Delete orphaned commits that no reflog entry younger than --expire (default
30d) refers to, the text only they used and the expired reflog entries;
commits a branch, HEAD or ORIG_HEAD reaches always stay.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseAge(expire)
			if err != nil {
				return err
			}
			opts.Expire = d
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				gopts := []tract.GCOption{tract.GCExpiry(opts.Expire)}
				if opts.DryRun {
					gopts = append(gopts, tract.GCDryRun())
				}
				line := f.progressLine("gc")
				rm, err := t.GC(cmd.Context(), append(gopts, tract.GCProgress(line.tract()))...)
				line.clear()
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, rm)
				}
				verb := "Removed"
				if opts.DryRun {
					verb = "Would remove"
				}
				fmt.Fprintf(f.IO.Out, "%s %s, %s and %s", verb, english.Count(rm.Commits, "commit", "commits"),
					english.Count(rm.Blobs, "blob", "blobs"), english.Count(rm.ReflogEntries, "reflog entry", "reflog entries"))
				if rm.UnfinishedImports > 0 {
					fmt.Fprintf(f.IO.Out, ", and what %s had written", english.Count(rm.UnfinishedImports, "unfinished import", "unfinished imports"))
				}
				fmt.Fprintln(f.IO.Out)
				if rm.SideChains > 0 {
					verb = "Closed"
					if opts.DryRun {
						verb = "Would close"
					}
					fmt.Fprintf(f.IO.Out, "%s %s left open by programs that ended (their commits are orphans now: 'tract log --all')\n",
						verb, english.Count(rm.SideChains, "side chain", "side chains"))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&expire, "expire", "30d", "expire reflog entries older than `AGE`")
	cmd.Flags().BoolVarP(&opts.DryRun, "dry-run", "n", false, "only count what would be removed")
	addJSONFlag(cmd, &opts.JSON, "print the counts as JSON", "gc")
	return cmd
}

// maxAgeDays is the most days a time.Duration holds (about 292 years).
const maxAgeDays = int(math.MaxInt64 / int64(24*time.Hour))

// parseAge parses the value of gc's --expire (see parseAgeOf).
func parseAge(s string) (time.Duration, error) { return parseAgeOf("--expire", s) }

// parseAgeOf parses an age given as flag: "now" (or 0), a number of days
// like 7d, or a duration like 12h; anything else is a usage error.
func parseAgeOf(flag, s string) (time.Duration, error) {
	switch {
	case s == "now" || s == "0":
		return 0, nil
	case strings.HasSuffix(s, "d"):
		n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
		if errors.Is(err, strconv.ErrRange) && n > 0 || err == nil && n > maxAgeDays {
			// More would overflow into a negative age, which expires
			// every entry: the opposite of what was asked.
			return 0, usageErrorf("%s %q: at most %dd (about 292 years)", flag, s, maxAgeDays)
		}
		if err == nil && n >= 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	default:
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d, nil
		}
	}
	return 0, usageErrorf(`%s %q: use "now", a number of days like 7d, or a duration like 12h`, flag, s)
}
