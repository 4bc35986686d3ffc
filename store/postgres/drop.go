package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Drop deletes the repository url names, and everything in it, in one
// transaction. Dropping a repository that does not exist is not an error.
// Other repositories of the database are untouched.
func Drop(ctx context.Context, url string) error {
	loc, err := parseLocation(url)
	if err != nil {
		return err
	}
	sv := &newStore(loc, nil).server
	pool, err := pgxpool.NewWithConfig(ctx, loc.pool)
	if err != nil {
		return redact(fmt.Errorf("connect to %s: %w", loc.display, err), loc.secrets)
	}
	defer pool.Close()
	if err := checkSchema(ctx, pool, sv); err != nil {
		return redact(fmt.Errorf("%s: %w", loc.display, err), loc.secrets)
	}
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// A writer at work finishes first; one that comes after finds the
		// repository gone.
		if err := lockRepository(ctx, tx, loc.repository); err != nil {
			return err
		}
		for _, table := range []string{"tract_blobs", "tract_commits", "tract_counters", "tract_contexts", "tract_words", "tract_refs", "tract_reflog", "tract_packs"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE repository = $1`, loc.repository); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM tract_repositories WHERE name = $1`, loc.repository)
		return err
	})
	if err != nil {
		return redact(fmt.Errorf("drop %s: %w", loc.display, err), loc.secrets)
	}
	return nil
}
