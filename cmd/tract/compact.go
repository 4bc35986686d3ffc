package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// CompactOptions are the inputs of 'tract compact'.
type CompactOptions struct {
	Factory *Factory
	JSON    bool
}

func newCmdCompact(f *Factory, runF func(*CompactOptions) error) *cobra.Command {
	opts := &CompactOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Rewrite the repository file without its free space",
		Long: `Rewrite the repository file with only the pages in use and rename it over
the old one, giving back the space 'tract gc' and 'tract reset --hard'
freed (the file never shrinks by itself); nothing in the repository
changes, other commands wait while it runs, and a crash leaves the old file
or the new one. Texts are compressed anew with a symbol table trained on the
repository's own (a file an older tract wrote gets its texts compressed
so). When the new file would not be smaller, the old one stays: compact
never makes the file larger.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return withTract(f, func(t *tract.Tract) error {
				res, err := t.Compact(cmd.Context())
				if err != nil {
					return err
				}
				if opts.JSON {
					return writeJSON(f.IO.Out, res)
				}
				fmt.Fprintf(f.IO.Out, "Compacted %s: %s -> %s\n", res.Path, english.Bytes(res.Before), english.Bytes(res.After))
				return nil
			})
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print the sizes as JSON", "compact")
	return cmd
}
