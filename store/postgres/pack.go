package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// countersColumns is the kind of an entry of tract_pack_entries that
// holds a commit's counters as the server reads them: depth, messages and
// tokens, each 8 bytes big-endian (encodeCountersColumns). AppendPack
// stores counters so, rather than as Counters.Encode (kind 3, which an
// earlier tract stored), so that PublishPack copies them with one INSERT
// … SELECT, as it copies blobs and commits, instead of reading every one
// back to decode it.
const countersColumns = 13

// encodeCountersColumns is the value of a countersColumns entry.
func encodeCountersColumns(c store.Counters) []byte {
	b := make([]byte, 0, 24)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Depth))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Messages))
	return binary.BigEndian.AppendUint64(b, uint64(c.Tokens))
}

// countersColumn is the SQL that reads the 8 bytes at byte from (from 1)
// of a countersColumns entry's value as a bigint.
func countersColumn(from int) string {
	return `('x' || encode(substring(value FROM ` + strconv.Itoa(from) + ` FOR 8), 'hex'))::bit(64)::bigint`
}

// An unpublished pack is a row of tract_packs and its entries rows of
// tract_pack_entries, which no read of objects looks at. PublishPack
// copies the entries into the object tables and deletes the pack, in its
// transaction: so PublishedPacks is always 0 here.

func (t *pgTx) CreatePack(now time.Time) (uint64, error) {
	if err := t.writable(); err != nil {
		return 0, fmt.Errorf("create pack: %w", err)
	}
	var id int64
	err := t.queryRow(`INSERT INTO tract_packs (repository, updated_ns, entries) VALUES ($1, $2, 0) RETURNING id`,
		t.s.repository, now.UnixNano()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create pack: %w", err)
	}
	return uint64(id), nil
}

// packTail returns how many entries pack id holds and its last one (Kind
// 0 when it holds none), locking its row; a missing pack is an error
// wrapping store.ErrNotFound.
func (t *pgTx) packTail(id uint64) (n int64, last store.PackEntry, err error) {
	var kind *int16
	var hash []byte
	err = t.queryRow(`SELECT entries, last_kind, last_hash FROM tract_packs WHERE repository = $1 AND id = $2 FOR UPDATE`,
		t.s.repository, int64(id)).Scan(&n, &kind, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, last, fmt.Errorf("pack %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, last, fmt.Errorf("pack %d: %w", id, err)
	}
	if kind != nil {
		last.Kind = store.PackKind(*kind)
		if last.Hash, err = hashOf("pack entry", hash); err != nil {
			return 0, last, fmt.Errorf("pack %d: %w", id, err)
		}
	}
	return n, last, nil
}

func (t *pgTx) AppendPack(id uint64, now time.Time, entries []store.PackEntry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("append to pack %d: %w", id, err)
	}
	n, last, err := t.packTail(id)
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(entries))
	for _, e := range entries {
		if last.Kind != 0 && last.Compare(e) >= 0 {
			return fmt.Errorf("append to pack %d: entry %s is out of order", id, e.Hash.Short())
		}
		kind, value := int16(e.Kind), e.Value
		if value == nil {
			value = []byte{}
		}
		if e.Kind == store.PackCounters {
			c, err := store.DecodeCounters(e.Value)
			if err != nil {
				return fmt.Errorf("append to pack %d: %w", id, err)
			}
			kind, value = countersColumns, encodeCountersColumns(c)
		}
		rows = append(rows, []any{int64(id), n + int64(len(rows)), kind, e.Hash[:], value})
		last = e
	}
	if len(rows) > 0 {
		if err := t.flush(); err != nil {
			return fmt.Errorf("append to pack %d: %w", id, err)
		}
		ctx, cancel := t.bound()
		_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"tract_pack_entries"},
			[]string{"pack", "ord", "kind", "hash", "value"}, pgx.CopyFromRows(rows))
		cancel()
		if err != nil {
			return fmt.Errorf("append to pack %d: %w", id, t.fail("COPY", false, err))
		}
	}
	var lastKind *int16
	var lastHash []byte
	if last.Kind != 0 {
		k := int16(last.Kind)
		lastKind, lastHash = &k, last.Hash[:]
	}
	err = t.exec(`UPDATE tract_packs SET entries = $3, updated_ns = $4, last_kind = $5, last_hash = $6
WHERE repository = $1 AND id = $2`, t.s.repository, int64(id), n+int64(len(rows)), now.UnixNano(), lastKind, lastHash)
	if err != nil {
		return fmt.Errorf("append to pack %d: %w", id, err)
	}
	return nil
}

// PublishPack copies pack id into the object tables, exclusively.
func (t *pgTx) PublishPack(id uint64) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	if err := t.exclusive(fmt.Sprintf("publish pack %d", id)); err != nil {
		return err
	}
	if _, _, err := t.packTail(id); err != nil {
		return err
	}
	// The copies below may replace counters the transaction read.
	clear(t.seen.counters)
	clear(t.seen.fresh)
	for _, q := range []string{
		`INSERT INTO tract_blobs (repository, hash, data)
SELECT $1, hash, value FROM tract_pack_entries WHERE pack = $2 AND kind = 1 ON CONFLICT DO NOTHING`,
		`INSERT INTO tract_commits (repository, hash, raw)
SELECT $1, hash, value FROM tract_pack_entries WHERE pack = $2 AND kind = 2 ON CONFLICT DO NOTHING`,
		`INSERT INTO tract_counters (repository, hash, depth, messages, tokens)
SELECT $1, hash, ` + countersColumn(1) + `, ` + countersColumn(9) + `, ` + countersColumn(17) + `
FROM tract_pack_entries WHERE pack = $2 AND kind = ` + strconv.Itoa(countersColumns) + `
ON CONFLICT (repository, hash) DO UPDATE SET depth = EXCLUDED.depth, messages = EXCLUDED.messages, tokens = EXCLUDED.tokens`,
	} {
		if err := t.exec(q, t.s.repository, int64(id)); err != nil {
			return fmt.Errorf("publish pack %d: %w", id, err)
		}
	}
	// Counters appended by an earlier tract are stored encoded
	// (Counters.Encode, kind 3): decode them in pages of the pack's order.
	after := int64(-1)
	for {
		rows, err := t.query(`SELECT ord, hash, value FROM tract_pack_entries WHERE pack = $1 AND kind = 3 AND ord > $2
ORDER BY ord LIMIT $3`, int64(id), after, pageSize)
		if err != nil {
			return fmt.Errorf("publish pack %d: %w", id, err)
		}
		type counted struct {
			h dag.Hash
			c store.Counters
		}
		var page []counted
		for rows.Next() {
			var hash, value []byte
			if err := rows.Scan(&after, &hash, &value); err != nil {
				rows.Close()
				return fmt.Errorf("publish pack %d: %w", id, err)
			}
			h, err := hashOf("pack entry", hash)
			if err == nil {
				var c store.Counters
				c, err = store.DecodeCounters(value)
				page = append(page, counted{h, c})
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("publish pack %d: %w", id, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("publish pack %d: %w", id, err)
		}
		for _, e := range page {
			if err := t.PutCounters(e.h, e.c); err != nil {
				return fmt.Errorf("publish pack %d: %w", id, err)
			}
		}
		if len(page) < pageSize {
			break
		}
	}
	if err := t.notePackCommits(id); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	if err := t.exec(`DELETE FROM tract_packs WHERE id = $1`, int64(id)); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	return nil
}

func (t *pgTx) DropPack(id uint64) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	if err := t.exec(`DELETE FROM tract_packs WHERE repository = $1 AND id = $2`, t.s.repository, int64(id)); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	return nil
}

func (t *pgTx) UnpublishedPacks() ([]store.PackInfo, error) {
	rows, err := t.query(`SELECT id, updated_ns, entries FROM tract_packs WHERE repository = $1 ORDER BY id`, t.s.repository)
	if err != nil {
		return nil, fmt.Errorf("packs: %w", err)
	}
	defer rows.Close()
	var out []store.PackInfo
	for rows.Next() {
		var id, ns, n int64
		if err := rows.Scan(&id, &ns, &n); err != nil {
			return nil, fmt.Errorf("packs: %w", err)
		}
		out = append(out, store.PackInfo{ID: uint64(id), Updated: time.Unix(0, ns).UTC(), Entries: n})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("packs: %w", err)
	}
	return out, nil
}

// PublishedPacks is always 0: publishing a pack merges it into the object
// tables.
func (t *pgTx) PublishedPacks() (int, error) { return 0, nil }

// notePackCommits records the commits of pack id for the word index (see
// finishWords), reading them in pages of the pack's order.
func (t *pgTx) notePackCommits(id uint64) error {
	after := int64(-1)
	for {
		n := 0
		err := t.binaryQuery(`SELECT ord, hash, value FROM tract_pack_entries WHERE pack = $1 AND kind = 2 AND ord > $2
ORDER BY ord LIMIT $3`, []param{int8Param(int64(id)), int8Param(after), int8Param(packPage)}, func(cols [][]byte) error {
			n++
			ord, err := int8Col("tract_pack_entries", cols[0])
			if err != nil {
				return err
			}
			h, err := hashOf("pack entry", cols[1])
			if err != nil {
				return err
			}
			after = ord
			if c, err := dag.Decode(cols[2]); err == nil { // one that does not decode: fsck reports it
				t.words.added = append(t.words.added, docOf(h, c))
				delete(t.words.dropped, h)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n < packPage {
			return nil
		}
	}
}

// packPage is how many commits of a pack notePackCommits reads a query.
const packPage = 5000
