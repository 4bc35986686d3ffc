package postgres

import (
	"bytes"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

var (
	_ store.BatchReader = (*pgTx)(nil)
	_ store.ChainReader = (*pgTx)(nil)
)

// maxBatch is how many objects one query of Blobs or Commits asks for:
// a longer list is asked for in several, so that no statement grows
// without bound.
const maxBatch = 1000

// maxChain is how many commits one query of Chain returns at most, so
// that a damaged repository whose chain loops (a commit stored under the
// hash of one of its descendants) cannot make a query run forever.
const maxChain = 10000

// Blobs reads blobs hs in one query per maxBatch of them.
func (t *pgTx) Blobs(hs []dag.Hash) ([][]byte, error) {
	found, err := t.readMany("tract_blobs", "data", hs)
	if err != nil {
		return nil, fmt.Errorf("read %d blobs: %w", len(hs), err)
	}
	out := make([][]byte, len(hs))
	taken := make(map[dag.Hash]bool, len(found))
	for i, h := range hs {
		b, ok := found[h]
		switch {
		case !ok:
			continue
		case b == nil:
			b = []byte{}
		case taken[h]:
			b = bytes.Clone(b) // asked twice: each answer the caller's own
		}
		out[i], taken[h] = b, true
	}
	return out, nil
}

// Commits reads commits hs in one query per maxBatch of them.
func (t *pgTx) Commits(hs []dag.Hash) ([]*dag.Commit, error) {
	found, err := t.readMany("tract_commits", "raw", hs)
	if err != nil {
		return nil, fmt.Errorf("read %d commits: %w", len(hs), err)
	}
	out := make([]*dag.Commit, len(hs))
	for i, h := range hs {
		raw, ok := found[h]
		if !ok {
			continue
		}
		c, err := dag.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
		}
		out[i] = c
	}
	return out, nil
}

// CountersOf reads the counters of commits hs in one query per maxBatch
// of them.
func (t *pgTx) CountersOf(hs []dag.Hash) ([]store.Counters, []bool, error) {
	found := make(map[dag.Hash]store.Counters, len(hs))
	var c store.Counters
	err := t.eachMany("tract_counters", "depth, messages, tokens", hs, []any{&c.Depth, &c.Messages, &c.Tokens},
		func(h dag.Hash) { found[h] = c })
	if err != nil {
		return nil, nil, fmt.Errorf("read %d counters: %w", len(hs), err)
	}
	cs, ok := make([]store.Counters, len(hs)), make([]bool, len(hs))
	for i, h := range hs {
		cs[i], ok[i] = found[h]
	}
	return cs, ok, nil
}

// manyQuery returns the query of cols of the rows of table whose hashes
// the array $2 holds. Each is a LATERAL lookup with LIMIT 1, which the
// planner can only run as one index lookup per hash: "hash = ANY($2)"
// was planned, for a repository the statistics do not know yet (one
// just imported), as a scan of all the repository's rows per query.
func manyQuery(table, cols string) string {
	return `SELECT ` + cols + ` FROM unnest($2::bytea[]) AS k (key) CROSS JOIN LATERAL (
	SELECT ` + cols + ` FROM ` + table + ` WHERE repository = $1 AND hash = k.key LIMIT 1) r`
}

// readMany returns the column col of the rows of table whose hashes hs
// holds, by hash; a hash not stored has no entry.
func (t *pgTx) readMany(table, col string, hs []dag.Hash) (map[dag.Hash][]byte, error) {
	found := make(map[dag.Hash][]byte, len(hs))
	var v []byte
	err := t.eachMany(table, col, hs, []any{&v}, func(h dag.Hash) { found[h] = v })
	return found, err
}

// eachMany reads the columns cols of the rows of table whose hashes hs
// holds, in one query per maxBatch of them: for each row found it scans
// the columns into dest and calls fn with the row's hash.
func (t *pgTx) eachMany(table, cols string, hs []dag.Hash, dest []any, fn func(dag.Hash)) error {
	var k []byte
	scan := append([]any{&k}, dest...)
	for len(hs) > 0 {
		n := min(len(hs), maxBatch)
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = hs[i][:]
		}
		hs = hs[n:]
		rows, err := t.query(manyQuery(table, "hash, "+cols), t.s.repository, keys)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, scan, func() error {
			h, err := hashOf(table, k)
			if err != nil {
				return err
			}
			fn(h)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// chainQuery walks a first-parent chain on the server. A commit's first
// parent is bytes 3 to 34 of its encoding (dag.Encode: a version byte, the
// number of parents as a varint, then the parents), when that number is
// 1 to 127 (a one-byte varint); for anything else the walk stops, and
// store.ReadChain carries on from the header that Go decodes. $4 is the
// hash to stop before.
//
// Each step is a LATERAL lookup with LIMIT 1, which the planner can only
// run as one index lookup per commit: as a plain join, a repository whose
// rows the statistics do not know yet (one just imported) was hashed
// whole at every step, a walk quadratic in the chain's length.
const chainQuery = `WITH RECURSIVE chain (depth, hash, raw) AS (
	SELECT 1, hash, raw FROM tract_commits WHERE repository = $1 AND hash = $2
UNION ALL
	SELECT c.depth + 1, p.hash, p.raw
	FROM chain c CROSS JOIN LATERAL (
		SELECT hash, raw FROM tract_commits
		WHERE repository = $1 AND hash = (CASE
			WHEN length(c.raw) < 34 THEN NULL
			WHEN get_byte(c.raw, 0) = 1 AND get_byte(c.raw, 1) BETWEEN 1 AND 127 THEN substring(c.raw FROM 3 FOR 32)
		END)
		LIMIT 1
	) p
	WHERE c.depth < $3 AND p.hash <> $4
)
SELECT hash, raw FROM chain ORDER BY depth`

// Chain reads up to n commits of the first-parent chain from from in one
// query (at most maxChain).
func (t *pgTx) Chain(from dag.Hash, n int, stop dag.Hash) ([]store.ChainLink, error) {
	if n < 1 || from == stop {
		return nil, nil
	}
	rows, err := t.query(chainQuery, t.s.repository, from[:], min(n, maxChain), stop[:])
	if err != nil {
		return nil, fmt.Errorf("chain from %s: %w", from.Short(), err)
	}
	var out []store.ChainLink
	var k, raw []byte
	_, err = pgx.ForEachRow(rows, []any{&k, &raw}, func() error {
		h, err := hashOf("commit", k)
		if err != nil {
			return err
		}
		hd, err := dag.DecodeHeader(raw)
		if err != nil {
			return fmt.Errorf("commit %s: %w", h.Short(), err)
		}
		out = append(out, store.ChainLink{Hash: h, Header: hd, Raw: raw})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chain from %s: %w", from.Short(), err)
	}
	return out, nil
}
