package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// The compiled-context records (store.ContextTx) live in tract_contexts,
// a row per record; a row holds texts, and a database keeps no copy of a
// deleted row that a reader of the database could reach.

var (
	_ store.ContextTx          = (*pgTx)(nil)
	_ store.ContextChainReader = (*pgTx)(nil)
)

// ContextChain follows the records' links on the server: each step is an
// index lookup of the hash in bytes 2 to 33 of the record before.
func (t *pgTx) ContextChain(h dag.Hash, n int) ([]dag.Hash, [][]byte, error) {
	rows, err := t.query(`WITH RECURSIVE chain(n, hash, record) AS (
	SELECT 1, hash, record FROM tract_contexts WHERE repository = $1 AND hash = $2
	UNION ALL
	SELECT chain.n + 1, c.hash, c.record FROM chain, LATERAL (
		SELECT hash, record FROM tract_contexts
		WHERE repository = $1 AND hash = substring(chain.record FROM 2 FOR 32)
	) c WHERE chain.n < $3
)
SELECT hash, record FROM chain ORDER BY n`, t.s.repository, h[:], n)
	if err != nil {
		return nil, nil, fmt.Errorf("compiled contexts from %s: %w", h.Short(), err)
	}
	defer rows.Close()
	var hs []dag.Hash
	var recs [][]byte
	for rows.Next() {
		var k, rec []byte
		if err := rows.Scan(&k, &rec); err != nil {
			return nil, nil, fmt.Errorf("compiled contexts from %s: %w", h.Short(), err)
		}
		kh, err := hashOf("compiled context", k)
		if err != nil {
			return nil, nil, err
		}
		hs, recs = append(hs, kh), append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("compiled contexts from %s: %w", h.Short(), err)
	}
	return hs, recs, nil
}

func (t *pgTx) Context(h dag.Hash) ([]byte, error) {
	var rec []byte
	err := t.queryRow(`SELECT record FROM tract_contexts WHERE repository = $1 AND hash = $2`, t.s.repository, h[:]).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compiled context %s: %w", h.Short(), err)
	}
	return rec, nil
}

func (t *pgTx) HasContexts(hs []dag.Hash) ([]bool, error) {
	has := make([]bool, len(hs))
	if len(hs) == 0 {
		return has, nil
	}
	at := make(map[dag.Hash]int, len(hs))
	keys := make([][]byte, len(hs))
	for i, h := range hs {
		at[h], keys[i] = i, h[:]
	}
	rows, err := t.query(`SELECT hash FROM tract_contexts WHERE repository = $1 AND hash = ANY($2)`, t.s.repository, keys)
	if err != nil {
		return nil, fmt.Errorf("compiled contexts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k []byte
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("compiled contexts: %w", err)
		}
		h, err := hashOf("compiled context", k)
		if err != nil {
			return nil, err
		}
		if i, ok := at[h]; ok {
			has[i] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compiled contexts: %w", err)
	}
	return has, nil
}

func (t *pgTx) PutContext(h dag.Hash, rec []byte, replaced []dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
	}
	if len(replaced) > 0 {
		keys := make([][]byte, len(replaced))
		for i, r := range replaced {
			keys[i] = r[:]
		}
		if err := t.exec(`DELETE FROM tract_contexts WHERE repository = $1 AND hash = ANY($2)`, t.s.repository, keys); err != nil {
			return fmt.Errorf("replace compiled contexts: %w", err)
		}
	}
	err := t.exec(`INSERT INTO tract_contexts (repository, hash, record) VALUES ($1, $2, $3)
ON CONFLICT (repository, hash) DO UPDATE SET record = EXCLUDED.record`, t.s.repository, h[:], rec)
	if err != nil {
		return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
	}
	return nil
}

// DeleteContext deletes the record of h, exclusively, as DeleteCommit
// deletes a commit.
func (t *pgTx) DeleteContext(h dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete compiled context %s: %w", h.Short(), err)
	}
	if err := t.exclusive("delete compiled context " + h.Short()); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM tract_contexts WHERE repository = $1 AND hash = $2`, t.s.repository, h[:]); err != nil {
		return fmt.Errorf("delete compiled context %s: %w", h.Short(), err)
	}
	return nil
}
