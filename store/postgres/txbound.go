package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// bound returns the context of one statement of t: t's, ended when the
// reply timeout runs out (see WithReplyTimeout). When it does, pgx ends
// the statement by closing the connection, and the transaction is over.
func (t *pgTx) bound() (context.Context, context.CancelFunc) { return t.s.server.bound(t.ctx) }

// fail classifies err, the error of op in t (see server.classify).
func (t *pgTx) fail(op string, committing bool, err error) error {
	if err == nil {
		return nil
	}
	return t.s.server.classify(t.ctx, op, t.tx.Conn().PgConn(), committing, err)
}

// lock takes the repository's writer lock and sets the idle timeout (see
// takeWriterLock), waiting at most the reply timeout.
func (t *pgTx) lock() error {
	ctx, cancel := t.bound()
	defer cancel()
	return t.fail("waiting for the repository's writer lock", false, t.s.takeWriterLock(ctx, t.tx))
}

// commit commits t, waiting at most the reply timeout for the reply. A
// COMMIT whose reply never came fails with ErrCommitUnknown.
func (t *pgTx) commit() error {
	ctx, cancel := t.bound()
	defer cancel()
	return t.fail("COMMIT", true, t.tx.Commit(ctx))
}

// rollback rolls t back, waiting at most the reply timeout for the reply.
func (t *pgTx) rollback() error {
	ctx, cancel := t.bound()
	defer cancel()
	return t.fail("ROLLBACK", false, t.tx.Rollback(ctx))
}

// boundRows are the rows of a query whose reply is bounded: closing them
// ends the bound, and their error is classified.
type boundRows struct {
	pgx.Rows
	t      *pgTx
	cancel context.CancelFunc
}

func (r *boundRows) Close() {
	r.Rows.Close()
	r.cancel()
}

func (r *boundRows) Err() error { return r.t.fail("a query", false, r.Rows.Err()) }

// boundRow is the row of a query whose reply is bounded: Scan ends the
// bound, and its error is classified.
type boundRow struct {
	row    pgx.Row
	t      *pgTx
	cancel context.CancelFunc
}

func (r *boundRow) Scan(dest ...any) error {
	defer r.cancel()
	return r.t.fail("a query", false, r.row.Scan(dest...))
}
