package postgres

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/store"
)

// Abort makes the server abort tx with the SQLSTATE code, as it does a
// transaction that lost a serialization race (40001) or a deadlock
// (40P01), so tests can reach Update's retries without staging a race.
func Abort(tx store.Tx, code string) error {
	t := tx.(*pgTx)
	if err := t.exec(fmt.Sprintf(`DO $$ BEGIN RAISE EXCEPTION 'aborted by the test' USING ERRCODE = '%s'; END $$`, code)); err != nil {
		return err
	}
	return t.flush()
}

// WithSearchWindows sets the numbers of documents the first queries of a
// word search cover, so that a test of a few documents reaches the query
// of the rest.
func WithSearchWindows(ws ...int64) Option { return func(s *Store) { s.windows = ws } }

// SettleWords numbers the repository's unnumbered word documents now, as
// a Store does after every settleEvery of them, once the numberings it
// began in the background have ended.
func SettleWords(s *Store) {
	s.settling.Wait()
	s.settle(context.Background())
}
