package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// MigrateOptions are the inputs of 'tract migrate'.
type MigrateOptions struct {
	Factory *Factory
	JSON    bool
}

// migrateRecord is what 'tract migrate --json' prints.
type migrateRecord struct {
	// Database is the URL, without its password.
	Database string `json:"database"`
	*tract.MigrateResult
}

func newCmdMigrate(f *Factory, runF func(*MigrateOptions) error) *cobra.Command {
	opts := &MigrateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the tract schema in a PostgreSQL database",
		Long: `Create, or upgrade to this tract's schema, the tables tract keeps
repositories in, in the PostgreSQL database --db or TRACT_DB names; running
it again, or from several machines at once, is harmless. 'tract init --db
URL' then creates a repository there; a repository file needs no migration.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return migrateRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, "print the schema versions before and after as JSON", "migrate")
	return cmd
}

func migrateRun(ctx context.Context, opts *MigrateOptions) error {
	f := opts.Factory
	url := f.DBFlag
	if url == "" {
		url = f.Getenv("TRACT_DB")
	}
	if !tract.IsDatabaseURL(url) {
		if url == "" {
			return usageErrorf("migrate needs a database: pass --db postgres://USER@HOST/DB or set TRACT_DB")
		}
		return usageErrorf("%s is not a postgres:// URL: migrate creates the schema of a PostgreSQL database (a repository file upgrades itself)", url)
	}
	res, err := tract.Migrate(ctx, url)
	if err != nil {
		return err
	}
	shown := tract.Redact(url)
	if opts.JSON {
		return writeJSON(f.IO.Out, migrateRecord{Database: shown, MigrateResult: res})
	}
	switch {
	case res.From == 0:
		fmt.Fprintf(f.IO.Out, "Created the tract schema (version %d) in %s\n", res.To, shown)
	case res.From < res.To:
		fmt.Fprintf(f.IO.Out, "Upgraded the tract schema from version %d to %d in %s\n", res.From, res.To, shown)
	default:
		fmt.Fprintf(f.IO.Out, "The tract schema is up to date (version %d) in %s\n", res.To, shown)
	}
	return nil
}
