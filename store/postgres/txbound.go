package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	err = t.s.server.classify(t.ctx, op, t.tx.Conn().PgConn(), committing, err)
	if t.race == nil && retryable(err) {
		t.race = err
	}
	return err
}

// commit commits t, waiting at most the reply timeout for the reply. The
// writes still queued go in the same round trip as COMMIT (a pipeline,
// one Sync): a commit costs one round trip, not two. A write the server
// refuses skips the COMMIT behind it, and t is rolled back; a reply that
// never comes fails with ErrCommitUnknown, as the COMMIT may have run.
func (t *pgTx) commit() error {
	ctx, cancel := t.bound()
	defer cancel()
	if t.pending.Len() == 0 {
		if err := t.fail("COMMIT", true, t.tx.Commit(ctx)); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}
	b := t.pending
	t.pending = pgx.Batch{}
	writes := b.Len()
	b.Queue("COMMIT")
	br := t.tx.SendBatch(ctx, &b)
	var err error
	for i := 0; i < writes && err == nil; i++ {
		_, err = br.Exec()
	}
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// The server answered: a write was refused, and the COMMIT after
		// it did not run.
		err = t.fail("sending writes", false, err)
		_ = t.rollback()
		return fmt.Errorf("write: %w", err)
	}
	if err != nil {
		return fmt.Errorf("commit: %w", t.fail("COMMIT", true, err))
	}
	return nil
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
