package postgres

import (
	"fmt"

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
	out := make([][]byte, len(hs))
	err := t.eachMany("tract_blobs", "data", hs, func(i int, cols [][]byte) error {
		out[i] = append([]byte{}, cols[0]...) // an empty blob is stored, not nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %d blobs: %w", len(hs), err)
	}
	return out, nil
}

// Commits reads commits hs in one query per maxBatch of them.
func (t *pgTx) Commits(hs []dag.Hash) ([]*dag.Commit, error) {
	out := make([]*dag.Commit, len(hs))
	err := t.eachMany("tract_commits", "raw", hs, func(i int, cols [][]byte) error {
		c, err := dag.Decode(cols[0])
		if err != nil {
			return fmt.Errorf("commit %s: %w", hs[i].Short(), err)
		}
		out[i] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %d commits: %w", len(hs), err)
	}
	return out, nil
}

// CountersOf reads the counters of commits hs in one query per maxBatch
// of them.
func (t *pgTx) CountersOf(hs []dag.Hash) ([]store.Counters, []bool, error) {
	cs, ok := make([]store.Counters, len(hs)), make([]bool, len(hs))
	err := t.eachMany("tract_counters", "depth, messages, tokens", hs, func(i int, cols [][]byte) error {
		c, err := countersCols("tract_counters", cols)
		cs[i], ok[i] = c, err == nil
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %d counters: %w", len(hs), err)
	}
	return cs, ok, nil
}

// manyQuery returns the query of cols of the rows of table whose hashes
// the array $2 holds, each row with the position (from 1) of its hash in
// the array. Each is a LATERAL lookup with LIMIT 1, which the planner can
// only run as one index lookup per hash: "hash = ANY($2)" was planned,
// for a repository the statistics do not know yet (one just imported),
// as a scan of all the repository's rows per query. A condition and (its
// parameters from $3), when not empty, narrows each lookup.
func manyQuery(table, cols, and string) string {
	if and != "" {
		and = " AND " + and
	}
	return `SELECT k.i, ` + cols + ` FROM unnest($2::bytea[]) WITH ORDINALITY AS k (key, i) CROSS JOIN LATERAL (
	SELECT ` + cols + ` FROM ` + table + ` WHERE repository = $1 AND hash = k.key` + and + ` LIMIT 1) r`
}

// eachMany reads the columns cols of the rows of table whose hashes hs
// holds, in one query per maxBatch of them: for each row found it calls fn
// with the index in hs of the row's hash (a hash asked twice is answered
// twice) and the row's columns, in binary (see binaryQuery).
func (t *pgTx) eachMany(table, cols string, hs []dag.Hash, fn func(i int, cols [][]byte) error) error {
	return t.eachManyAnd(table, cols, "", nil, hs, fn)
}

// eachManyAnd is eachMany of the rows that also meet the condition and,
// whose parameters, from $3, are params.
func (t *pgTx) eachManyAnd(table, cols, and string, params []param, hs []dag.Hash, fn func(i int, cols [][]byte) error) error {
	query := manyQuery(table, cols, and)
	for base := 0; base < len(hs); base += maxBatch {
		n := min(len(hs)-base, maxBatch)
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = hs[base+i][:]
		}
		err := t.binaryQuery(query, append([]param{textParam(t.s.repository), byteaArrayParam(keys)}, params...), func(row [][]byte) error {
			at, err := int8Col(table, row[0])
			if err != nil {
				return err
			}
			if at < 1 || at > int64(n) {
				return fmt.Errorf("%s: a row for position %d of %d: %w", table, at, n, store.ErrCorrupt)
			}
			return fn(base+int(at)-1, row[1:])
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
	WHERE c.depth < $3::bigint AND p.hash <> $4
)
SELECT hash, raw FROM chain ORDER BY depth`

// Chain reads up to n commits of the first-parent chain from from in one
// query (at most maxChain).
func (t *pgTx) Chain(from dag.Hash, n int, stop dag.Hash) ([]store.ChainLink, error) {
	if n < 1 || from == stop {
		return nil, nil
	}
	var out []store.ChainLink
	err := t.binaryQuery(chainQuery, []param{textParam(t.s.repository), byteaParam(from[:]),
		int8Param(int64(min(n, maxChain))), byteaParam(stop[:])}, func(row [][]byte) error {
		h, err := hashOf("commit", row[0])
		if err != nil {
			return err
		}
		raw := append([]byte{}, row[1]...)
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
