package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/store/postgres"
)

// Every kind of database server error exits 1 with its own hint; an
// interruption during COMMIT exits 130 and says the outcome is unknown.
func TestPrintError_ServerErrors(t *testing.T) {
	for _, tc := range []struct {
		kind error
		hint string
	}{
		{postgres.ErrUnreachable, "connect_timeout=SECONDS"},
		{postgres.ErrTimeout, "reply_timeout=2m"},
		{postgres.ErrConnectionLost, "Run the command again once it answers"},
		{postgres.ErrCommitUnknown, "Look with 'tract log'"},
		{postgres.ErrTooManyConnections, "pool_max_conns"},
		{postgres.ErrAuthFailed, "~/.pgpass"},
	} {
		t.Run(tc.kind.Error(), func(t *testing.T) {
			f, _, errOut := testFactory(t, nil)
			err := fmt.Errorf("log: %w", &postgres.ServerError{Kind: tc.kind, Server: "db.internal:5432", Database: "tract",
				User: "agent", Op: "a query", Wait: time.Second, Code: "53300", Err: context.DeadlineExceeded})
			assert.Equal(t, exitError, printError(f, nil, err))
			assert.Contains(t, errOut.String(), "db.internal:5432 (database tract)")
			assert.Contains(t, errOut.String(), tc.hint)
			assert.NotContains(t, errOut.String(), "--salvage")
		})
	}
	// A URL of a primary and its standby: before a standby is promoted
	// no host takes writes; without target_session_attrs a write lands
	// on a standby.
	for name, tc := range map[string]struct {
		err  *postgres.ServerError
		says []string
	}{
		"no host takes writes": {&postgres.ServerError{Kind: postgres.ErrUnreachable, Server: "db1:5432,db2:5432", Database: "tract",
			Err: fmt.Errorf("db2:5432 (db2): ValidateConnect failed: %w", pgconn.ErrReadOnlyConnection)},
			[]string{"no database server of db1:5432,db2:5432 (database tract) takes writes", "read-only (a standby)",
				"Once one is promoted (pg_ctl promote"}},
		"a write on a standby": {&postgres.ServerError{Kind: postgres.ErrNoPrimary, Server: "db2:5432", Database: "tract",
			Code: "25006", Err: &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}},
			[]string{"db2:5432 (database tract) is read-only", "(SQLSTATE 25006)", "target_session_attrs=read-write (postgres://USER@HOST1"}},
	} {
		t.Run(name, func(t *testing.T) {
			f, _, errOut := testFactory(t, nil)
			assert.Equal(t, exitError, printError(f, nil, fmt.Errorf("commit: %w", tc.err)))
			for _, w := range tc.says {
				assert.Contains(t, errOut.String(), w)
			}
			assert.ErrorIs(t, tc.err, postgres.ErrNoPrimary)
		})
	}
	t.Run("interrupted during COMMIT", func(t *testing.T) {
		f, _, errOut := testFactory(t, nil)
		err := &postgres.ServerError{Kind: postgres.ErrCommitUnknown, Server: "db.internal:5432", Database: "tract", Err: context.Canceled}
		assert.Equal(t, exitInterrupt, printError(f, nil, err))
		assert.Contains(t, errOut.String(), "may or may not have been written")
		assert.NotContains(t, errOut.String(), "every commit made so far is intact")
	})
}

// Damage in a database points to backups; in a file, to --salvage.
func TestHintOn_DamageByBackend(t *testing.T) {
	f, _, _ := testFactory(t, map[string]string{"TRACT_DB": "postgres://u@db.internal/tract"})
	assert.Contains(t, hintOn(f, tract.ErrCorrupt), "restore the database from a backup")
	assert.NotContains(t, hintOn(f, tract.ErrCorrupt), "--salvage NEW.db' copies")
	f, _, _ = testFactory(t, map[string]string{"TRACT_DB": "/tmp/x/tract.db"})
	assert.Contains(t, hintOn(f, tract.ErrCorrupt), "tract fsck --salvage NEW.db")
}
