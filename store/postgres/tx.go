package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// pageSize is how many rows a ForEach reads in its first query (see
// forEach for the next ones), and a page of a pack. It reads in pages,
// by key, rather than through one open cursor, so that its callback may
// run other queries of the transaction, and memory stays bounded.
const pageSize = 500

// maxPending is how many writes a transaction queues before it sends
// them.
const maxPending = 1000

// pgTx is one transaction of a Store.
//
// Writes do not go to the server one by one: they are queued, and sent
// in one round trip (a pgx.Batch) before the transaction's next read, when
// maxPending are queued, and before it commits. A bulk write (an import,
// a chat step's few puts) so costs a round trip per thousand rows instead
// of one per row; the error of a queued write is returned by the call that
// sends it. Queued arguments are encoded when sent, so a write that keeps
// a caller's slice copies it first, unless the caller promised not to
// change it (store.HashedPutter).
//
// A transaction also remembers the refs it read, with the counters of the
// commits they hold, and a write transaction what it wrote (see overlay):
// a View reads one snapshot, objects are immutable and only a writer
// holding the repository exclusively deletes them, and a write
// transaction either holds the refs it read locked or checks them again
// before it writes them (see Ref), so a second read of either is answered
// without a round trip. A read that does go to the server carries the
// queued writes in front of it, in the same round trip.
type pgTx struct {
	s     *Store
	tx    pgx.Tx
	ctx   context.Context
	write bool
	// shared is set in a write transaction that holds the repository's
	// row in lockShared: other writers of the repository run beside it.
	// tracked is set in one that began so (see exclusive): it keeps held
	// and observed.
	shared, tracked bool
	// held holds the refs whose rows the transaction has locked (or
	// inserted, or written without reading), or read once it held the
	// repository exclusively: no other writer moves them until it ends.
	held map[string]bool
	// readLocked is set once the transaction locked a ref it read (see
	// exclusive).
	readLocked bool
	// observed holds the refs a shared transaction gave its caller
	// without holding them, with the value given (nil: missing): one of
	// them written is checked first (see SetRef).
	observed map[string][]byte
	// restart is set when a call needed the repository exclusively (see
	// exclusive); race holds the first error of a statement that lost a
	// race another writer won (see retryable). Either ends the
	// transaction, whatever the caller made of the error (see verdict).
	restart bool
	race    error
	// pendingDocs counts the documents the transaction added to the word
	// index unnumbered (see finishWords).
	pendingDocs int
	pending     pgx.Batch
	// seen is what the transaction knows without asking (see overlay).
	seen *overlay
	// words is what the word index must follow (see finishWords).
	words wordsTx
	// indexed counts the commits the transaction added to the word
	// index, by INSERT or COPY: past analyzeRows, the statistics of the
	// tables are refreshed once it committed (see analyze).
	indexed int
}

// maxOverlay bounds the objects an overlay remembers: past it, it forgets
// them all and starts again (the server has them).
const maxOverlay = 4096

// overlay is what a transaction knows without asking the server: the
// refs it read or wrote, the counters of the commits they hold, and the
// objects it put (objects are immutable, counters are replaced whole). A
// deletion forgets the object, so a later read asks the server.
type overlay struct {
	blobs    map[dag.Hash][]byte
	commits  map[dag.Hash][]byte
	counters map[dag.Hash]store.Counters
	// refs holds each ref's stored value, nil for a ref known missing.
	refs map[string][]byte
	// fresh holds the commits the transaction put, whose counters it
	// has neither read nor put: their counters are taken as missing
	// without asking (see Counters).
	fresh map[dag.Hash]bool
}

func newOverlay() *overlay {
	return &overlay{blobs: map[dag.Hash][]byte{}, commits: map[dag.Hash][]byte{},
		counters: map[dag.Hash]store.Counters{}, refs: map[string][]byte{}, fresh: map[dag.Hash]bool{}}
}

// room forgets every object once the overlay holds maxOverlay.
func (o *overlay) room() {
	if len(o.blobs)+len(o.commits)+len(o.counters)+len(o.fresh) >= maxOverlay {
		clear(o.blobs)
		clear(o.commits)
		clear(o.counters)
		clear(o.fresh)
	}
}

// exec queues a write.
func (t *pgTx) exec(sql string, args ...any) error {
	t.pending.Queue(sql, args...)
	if t.pending.Len() >= maxPending {
		return t.flush()
	}
	return nil
}

// flush sends the queued writes.
func (t *pgTx) flush() error {
	if t.pending.Len() == 0 {
		return nil
	}
	b := t.pending
	t.pending = pgx.Batch{}
	ctx, cancel := t.bound()
	defer cancel()
	if err := t.tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("write: %w", t.fail("sending writes", false, err))
	}
	return nil
}

// query runs a query, the queued writes sent ahead of it in the same
// round trip (a pipeline: a write the server refuses skips the query).
// Its reply is bounded (see bound) until the rows are closed.
func (t *pgTx) query(sql string, args ...any) (pgx.Rows, error) {
	ctx, cancel := t.bound()
	if t.pending.Len() == 0 {
		rows, err := t.tx.Query(ctx, sql, args...)
		if err != nil {
			cancel()
			return nil, t.fail("a query", false, err)
		}
		return &boundRows{Rows: rows, t: t, cancel: cancel}, nil
	}
	b := t.pending
	t.pending = pgx.Batch{}
	writes := b.Len()
	b.Queue(sql, args...)
	br := t.tx.SendBatch(ctx, &b)
	for i := 0; i < writes; i++ {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			cancel()
			return nil, fmt.Errorf("write: %w", t.fail("sending writes", false, err))
		}
	}
	rows, err := br.Query()
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		_ = br.Close()
		cancel()
		return nil, t.fail("a query", false, err)
	}
	return &boundRows{Rows: rows, t: t, cancel: func() { _ = br.Close(); cancel() }}, nil
}

// queryRow runs a query of one row, as query does.
func (t *pgTx) queryRow(sql string, args ...any) pgx.Row {
	rows, err := t.query(sql, args...)
	if err != nil {
		return errRow{err}
	}
	return oneRow{rows}
}

// oneRow is the first row of rows, as pgx.Conn.QueryRow gives it.
type oneRow struct{ rows pgx.Rows }

func (r oneRow) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		r.rows.Close()
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// errRow is a row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// writable fails with store.ErrReadOnly in a View.
func (t *pgTx) writable() error {
	if !t.write {
		return store.ErrReadOnly
	}
	return nil
}

func notFound(what string, h dag.Hash) error {
	return fmt.Errorf("%s %s: %w", what, h.Short(), store.ErrNotFound)
}

// hashOf converts a stored key to a hash.
func hashOf(what string, b []byte) (dag.Hash, error) {
	if len(b) != dag.HashSize {
		return dag.Hash{}, fmt.Errorf("%s key of %d bytes: %w", what, len(b), store.ErrCorrupt)
	}
	return dag.Hash(b), nil
}

// getBytes reads one bytea column of one row; found is false when no row
// matched.
func (t *pgTx) getBytes(sql string, args ...any) (b []byte, found bool, err error) {
	err = t.queryRow(sql, args...).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return b, err == nil, err
}

func (t *pgTx) exists(sql string, args ...any) (bool, error) {
	var ok bool
	err := t.queryRow(sql, args...).Scan(&ok)
	return ok, err
}

func (t *pgTx) Blob(h dag.Hash) ([]byte, error) {
	if b, ok := t.seen.blobs[h]; ok {
		return bytes.Clone(b), nil
	}
	b, found, err := t.getBytes(`SELECT data FROM tract_blobs WHERE repository = $1 AND hash = $2`, t.s.repository, h[:])
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h.Short(), err)
	}
	if !found {
		return nil, notFound("blob", h)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func (t *pgTx) PutBlob(data []byte) (dag.Hash, error) {
	h := dag.Sum(data)
	return h, t.PutHashedBlob(h, bytes.Clone(data))
}

// PutHashedBlob stores data under h, which the caller computed.
func (t *pgTx) PutHashedBlob(h dag.Hash, data []byte) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	if data == nil {
		data = []byte{} // NULL is not an empty blob
	}
	err := t.exec(`INSERT INTO tract_blobs (repository, hash, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		t.s.repository, h[:], data)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	t.seen.room()
	t.seen.blobs[h] = data
	return nil
}

func (t *pgTx) HasBlob(h dag.Hash) (bool, error) {
	if _, ok := t.seen.blobs[h]; ok {
		return true, nil
	}
	ok, err := t.exists(`SELECT EXISTS (SELECT 1 FROM tract_blobs WHERE repository = $1 AND hash = $2)`, t.s.repository, h[:])
	if err != nil {
		return false, fmt.Errorf("blob %s: %w", h.Short(), err)
	}
	return ok, nil
}

// DeleteBlob deletes blob h, exclusively: another writer may have just
// found it there and built on it.
func (t *pgTx) DeleteBlob(h dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete blob %s: %w", h.Short(), err)
	}
	if err := t.exclusive("delete blob " + h.Short()); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM tract_blobs WHERE repository = $1 AND hash = $2`, t.s.repository, h[:]); err != nil {
		return fmt.Errorf("delete blob %s: %w", h.Short(), err)
	}
	delete(t.seen.blobs, h)
	return nil
}

// forEach pages through table's rows of the repository in key order,
// selecting cols after the hash, and calls fn with each row's hash and
// what scan decoded from the row's other columns (in binary: see
// binaryQuery; scan copies what it keeps). The first page is pageSize
// rows; each next one as many as the rows of the page before would fit
// in pageBytes, between pageSize and maxPage: a walk of small rows (the
// commits of log --all's outline, counters) takes few round trips, one
// of large texts keeps its pages to a few MiB.
//
// A write transaction that walks a whole table is deciding about the
// whole repository (gc, a rebuild of the word index): it runs
// exclusively (see exclusive).
func forEach[T any](t *pgTx, table, cols string, scan func(cols [][]byte) (T, error), fn func(dag.Hash, T) error) error {
	if t.write {
		if err := t.exclusive("walk " + table); err != nil {
			return err
		}
	}
	type row struct {
		h dag.Hash
		v T
	}
	query := `SELECT hash, ` + cols + ` FROM ` + table +
		` WHERE repository = $1 AND hash > $2 ORDER BY hash LIMIT $3`
	after := []byte{} // sorts before every hash
	limit := pageSize
	for {
		var page []row
		size := 0
		err := t.binaryQuery(query, []param{textParam(t.s.repository), byteaParam(after), int8Param(int64(limit))}, func(cols [][]byte) error {
			h, err := hashOf(table, cols[0])
			if err != nil {
				return err
			}
			v, err := scan(cols[1:])
			if err != nil {
				return err
			}
			for _, c := range cols {
				size += len(c)
			}
			page = append(page, row{h, v})
			return nil
		})
		if err != nil {
			return err
		}
		for i := range page {
			h, v := page[i].h, page[i].v
			page[i] = row{} // let the value go once fn is done with it
			if err := fn(h, v); err != nil {
				return err
			}
			after = h[:]
		}
		if len(page) < limit {
			return nil
		}
		limit = min(maxPage, max(pageSize, pageBytes/max(1, size/len(page))))
	}
}

// pageBytes is about how many bytes forEach reads per page, and maxPage
// the most rows.
const (
	pageBytes = 4 << 20
	maxPage   = 8192
)

func (t *pgTx) ForEachBlob(fn func(h dag.Hash, data []byte) error) error {
	return forEach(t, "tract_blobs", "data", func(cols [][]byte) ([]byte, error) {
		return append([]byte{}, cols[0]...), nil
	}, fn)
}

func (t *pgTx) Commit(h dag.Hash) (*dag.Commit, error) {
	raw, err := t.rawCommit(h)
	if err != nil {
		return nil, err
	}
	c, err := dag.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return c, nil
}

func (t *pgTx) rawCommit(h dag.Hash) ([]byte, error) {
	if raw, ok := t.seen.commits[h]; ok {
		return bytes.Clone(raw), nil
	}
	raw, found, err := t.getBytes(`SELECT raw FROM tract_commits WHERE repository = $1 AND hash = $2`, t.s.repository, h[:])
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	if !found {
		return nil, notFound("commit", h)
	}
	return raw, nil
}

func (t *pgTx) CommitHeader(h dag.Hash) (dag.Header, error) {
	raw, err := t.rawCommit(h)
	if err != nil {
		return dag.Header{}, err
	}
	hd, err := dag.DecodeHeader(raw)
	if err != nil {
		return hd, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return hd, nil
}

func (t *pgTx) PutCommit(c *dag.Commit) (dag.Hash, error) {
	raw, err := dag.Encode(c)
	if err != nil {
		return dag.Hash{}, fmt.Errorf("put commit: %w", err)
	}
	h := dag.Sum(raw)
	return h, t.PutEncodedCommit(h, raw)
}

// PutEncodedCommit stores raw, a commit's encoding, under h.
func (t *pgTx) PutEncodedCommit(h dag.Hash, raw []byte) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put commit %s: %w", h.Short(), err)
	}
	err := t.exec(`INSERT INTO tract_commits (repository, hash, raw) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		t.s.repository, h[:], raw)
	if err != nil {
		return fmt.Errorf("put commit %s: %w", h.Short(), err)
	}
	t.seen.room()
	t.seen.commits[h] = raw
	if _, ok := t.seen.counters[h]; !ok {
		t.seen.fresh[h] = true
	}
	t.noteCommitPut(h, raw)
	return nil
}

func (t *pgTx) HasCommit(h dag.Hash) (bool, error) {
	if _, ok := t.seen.commits[h]; ok {
		return true, nil
	}
	ok, err := t.exists(`SELECT EXISTS (SELECT 1 FROM tract_commits WHERE repository = $1 AND hash = $2)`, t.s.repository, h[:])
	if err != nil {
		return false, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return ok, nil
}

// DeleteCommit deletes commit h, exclusively: another writer may have just
// found it there and built on it.
func (t *pgTx) DeleteCommit(h dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete commit %s: %w", h.Short(), err)
	}
	if err := t.exclusive("delete commit " + h.Short()); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM tract_commits WHERE repository = $1 AND hash = $2`, t.s.repository, h[:]); err != nil {
		return fmt.Errorf("delete commit %s: %w", h.Short(), err)
	}
	delete(t.seen.commits, h)
	t.noteCommitDeleted(h)
	return nil
}

func (t *pgTx) ForEachCommit(fn func(h dag.Hash, raw []byte) error) error {
	return forEach(t, "tract_commits", "raw", func(cols [][]byte) ([]byte, error) {
		return append([]byte{}, cols[0]...), nil
	}, fn)
}

// CommitsWithPrefix reads the range of keys the prefix covers: an
// odd-length prefix is padded with 0s for the low end and fs for the high
// end, so the primary key's index answers it.
func (t *pgTx) CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error) {
	p := strings.ToLower(prefix)
	if len(p) > 2*dag.HashSize || strings.Trim(p, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("hash prefix %q: not up to %d hex characters", prefix, 2*dag.HashSize)
	}
	pad := 2*dag.HashSize - len(p)
	lo, _ := hex.DecodeString(p + strings.Repeat("0", pad))
	hi, _ := hex.DecodeString(p + strings.Repeat("f", pad))
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := t.query(`SELECT hash FROM tract_commits WHERE repository = $1 AND hash BETWEEN $2 AND $3
ORDER BY hash LIMIT $4`, t.s.repository, lo, hi, lim)
	if err != nil {
		return nil, fmt.Errorf("hash prefix %s: %w", p, err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("hash prefix %s: %w", p, err)
	}
	out := make([]dag.Hash, 0, len(keys))
	for _, k := range keys {
		h, err := hashOf("commit", k)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// Ref reads ref name. In a shared transaction it locks the ref when it
// holds a commit (see sharedRefQuery); one given without its lock is
// checked again when the transaction writes it (see SetRef).
func (t *pgTx) Ref(name string) (refs.Ref, error) {
	v, known := t.seen.refs[name]
	if !known {
		if err := t.readRef(name); err != nil {
			return refs.Ref{}, fmt.Errorf("ref %s: %w", name, err)
		}
		v = t.seen.refs[name]
	}
	if t.tracked && !t.held[name] {
		if _, ok := t.observed[name]; !ok {
			t.observed[name] = v
		}
	}
	if v == nil {
		return refs.Ref{}, fmt.Errorf("ref %s: %w", name, store.ErrNotFound)
	}
	return refs.DecodeRef(name, v)
}

// refQuery reads ref $2 (and ref $3, its companion: see readRef) and,
// when $2 is symbolic ("ref: " and a name, see refs.Ref.Encode), the ref
// it names, each with the counters of the commit it holds: what a commit,
// or a status, reads next (HEAD, its branch, the branch's tip's counters,
// ORIG_HEAD), in one round trip.
const refQuery = `WITH asked AS (
	SELECT name, value FROM tract_refs WHERE repository = $1 AND (name = $2 OR name = $3)
), named AS (
	SELECT name, value FROM tract_refs WHERE repository = $1 AND name = (
		SELECT convert_from(substring(value FROM 6), 'UTF8') FROM asked
		WHERE name = $2 AND length(value) > 5 AND substring(value FROM 1 FOR 5) = '\x7265663a20'::bytea)
)
SELECT x.name, x.value, c.depth, c.messages, c.tokens FROM (SELECT * FROM asked UNION ALL SELECT * FROM named) x
LEFT JOIN LATERAL (
	SELECT depth, messages, tokens FROM tract_counters WHERE repository = $1 AND hash = x.value LIMIT 1
) c ON true`

// readRef reads ref name into the transaction's overlay (see refQuery):
// its value, nil when it is missing; the value of the ref it names, if
// symbolic; and the counters of the commits they hold. Of HEAD it reads
// ORIG_HEAD too, which status shows beside it; of any other ref, HEAD,
// which a commit on a branch reads after it, to append to HEAD's reflog
// when HEAD is on the branch (a view's commit so takes no round trip
// for it).
func (t *pgTx) readRef(name string) error {
	companion := refs.HEAD
	if name == refs.HEAD {
		companion = refs.OrigHead
	}
	if _, known := t.seen.refs[companion]; known {
		companion = name
	}
	t.seen.refs[name] = nil
	query, params, width := refQuery, []param{textParam(t.s.repository), textParam(name), textParam(companion)}, 5
	if t.shared {
		// The ref a symbolic one names is locked with it when it is the
		// first the transaction reads: HEAD's branch, which a commit
		// moves; not when HEAD is read after another (a view of a branch
		// checking where HEAD is), so that writers of other branches do
		// not queue on HEAD's.
		lockTarget := int64(0)
		if len(t.held) == 0 {
			lockTarget = 1
		}
		query, params, width = sharedRefQuery, append(params, int8Param(lockTarget)), 6
	}
	err := t.binaryQuery(query, params, func(cols [][]byte) error {
		if len(cols) != width || cols[1] == nil {
			return fmt.Errorf("tract_refs: a row of %d columns: %w", len(cols), store.ErrCorrupt)
		}
		got, v := string(cols[0]), bytes.Clone(cols[1])
		locked := width == 6 && len(cols[5]) == 8 && cols[5][7] == 1
		if got != name && !locked {
			if _, known := t.seen.refs[got]; known {
				return nil // asked before: its first answer stands
			}
		}
		t.seen.refs[got] = v
		if locked || t.tracked && !t.shared { // exclusive since: no one moves it
			t.held[got] = true
		}
		if locked {
			t.readLocked = true
		}
		if cols[2] != nil && len(v) == dag.HashSize {
			c, err := countersCols("tract_counters", cols[2:5])
			if err != nil {
				return err
			}
			if _, known := t.seen.counters[dag.Hash(v)]; !known {
				t.seen.room()
				t.seen.counters[dag.Hash(v)] = c
			}
		}
		return nil
	})
	if err != nil {
		delete(t.seen.refs, name)
		return err
	}
	if _, known := t.seen.refs[companion]; !known {
		t.seen.refs[companion] = nil // asked for, and missing
	}
	// The ref a symbolic one names was asked for too: missing if no row.
	if target, ok := strings.CutPrefix(string(t.seen.refs[name]), "ref: "); ok && target != "" {
		if _, known := t.seen.refs[target]; !known {
			t.seen.refs[target] = nil
		}
	}
	return nil
}

// SetRef stores r, so that a caller's read-compare-write of a ref is a
// compare-and-swap: no other writer moves the ref in between. An
// exclusive transaction has the repository to itself; a shared one holds
// the ref locked since it read it (see Ref), or, when it gave the ref to
// its caller without the lock, makes sure first that the ref still holds
// what it gave: one given as missing is written by a plain INSERT (which
// a writer that made it meanwhile makes fail with a unique violation),
// any other is locked and compared (see lockRef). A race lost either way
// makes Update run the transaction again.
func (t *pgTx) SetRef(r refs.Ref) error {
	if r.Name == "" {
		return errors.New("set ref: empty name")
	}
	if err := t.writable(); err != nil {
		return fmt.Errorf("set ref %s: %w", r.Name, err)
	}
	v := r.Encode()
	upsert := `INSERT INTO tract_refs (repository, name, value) VALUES ($1, $2, $3)
ON CONFLICT (repository, name) DO UPDATE SET value = EXCLUDED.value`
	if t.tracked && !t.held[r.Name] {
		if old, ok := t.observed[r.Name]; ok {
			if old == nil {
				upsert = `INSERT INTO tract_refs (repository, name, value) VALUES ($1, $2, $3)`
			} else if err := t.lockRef(r.Name, old); err != nil {
				return fmt.Errorf("set ref %s: %w", r.Name, err)
			}
		}
		t.held[r.Name] = true
	}
	if err := t.exec(upsert, t.s.repository, r.Name, v); err != nil {
		return fmt.Errorf("set ref %s: %w", r.Name, err)
	}
	t.seen.refs[r.Name] = bytes.Clone(v)
	return nil
}

// DeleteRef deletes ref name; in a shared transaction, one given to the
// caller without its lock is checked first, as SetRef does.
func (t *pgTx) DeleteRef(name string) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if t.tracked && !t.held[name] {
		if old, ok := t.observed[name]; ok {
			if old == nil {
				t.seen.refs[name] = nil
				return nil // missing, as the caller was told
			}
			if err := t.lockRef(name, old); err != nil {
				return fmt.Errorf("delete ref %s: %w", name, err)
			}
		}
		t.held[name] = true
	}
	if err := t.exec(`DELETE FROM tract_refs WHERE repository = $1 AND name = $2`, t.s.repository, name); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	t.seen.refs[name] = nil
	return nil
}

// Refs lists every ref. A write transaction that lists them is deciding
// about the whole repository (gc, a deletion of branches): it runs
// exclusively (see exclusive).
func (t *pgTx) Refs() ([]refs.Ref, error) {
	if t.write {
		if err := t.exclusive("refs"); err != nil {
			return nil, err
		}
	}
	rows, err := t.query(`SELECT name, value FROM tract_refs WHERE repository = $1 ORDER BY name`, t.s.repository)
	if err != nil {
		return nil, fmt.Errorf("refs: %w", err)
	}
	defer rows.Close()
	var out []refs.Ref
	for rows.Next() {
		var name string
		var v []byte
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("refs: %w", err)
		}
		r, err := refs.DecodeRef(name, v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("refs: %w", err)
	}
	return out, nil
}

func (t *pgTx) AppendReflog(name string, e refs.Entry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if err := t.exec(`INSERT INTO tract_reflog (repository, name, entry) VALUES ($1, $2, $3)`,
		t.s.repository, name, e.Encode()); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	return nil
}

func (t *pgTx) Reflog(name string) ([]refs.Entry, error) {
	return t.reflog(name, reflogQuery, t.s.repository, name)
}

var _ store.ReflogStreamer = (*pgTx)(nil)

// EachReflogEntry reads the reflog's rows one at a time, as the server
// sends them: a reflog grows with every move of its ref. fn must not use
// the transaction, whose connection is reading the rows meanwhile.
func (t *pgTx) EachReflogEntry(name string, fn func(refs.Entry) error) error {
	return t.eachReflog("reflog "+name, func(_ string, e refs.Entry) error { return fn(e) }, reflogQuery, t.s.repository, name)
}

var _ store.ReflogsStreamer = (*pgTx)(nil)

// EachReflog reads every reflog of the repository in one query, a row at
// a time; a write transaction that reads them runs exclusively, as one
// that lists them does (see ReflogNames).
func (t *pgTx) EachReflog(fn func(name string, e refs.Entry) error) error {
	if t.write {
		if err := t.exclusive("reflogs"); err != nil {
			return err
		}
	}
	return t.eachReflog("reflogs", fn, `SELECT name, entry FROM tract_reflog WHERE repository = $1 ORDER BY name, seq`, t.s.repository)
}

// reflogQuery selects the entries of a reflog, oldest first.
const reflogQuery = `SELECT name, entry FROM tract_reflog WHERE repository = $1 AND name = $2 ORDER BY seq`

var _ store.ReflogTailer = (*pgTx)(nil)

// ReflogTail reads the newest n entries only: a reflog grows with every
// move of its ref.
func (t *pgTx) ReflogTail(name string, n int) ([]refs.Entry, error) {
	return t.reflog(name, `SELECT name, entry FROM (SELECT seq, name, entry FROM tract_reflog
		WHERE repository = $1 AND name = $2 ORDER BY seq DESC LIMIT $3) AS tail ORDER BY seq`,
		t.s.repository, name, max(n, 0))
}

// reflog decodes the entries of reflog name that query selects, in order.
func (t *pgTx) reflog(name, query string, args ...any) ([]refs.Entry, error) {
	out := []refs.Entry{} // empty, not nil, as it always was
	err := t.eachReflog("reflog "+name, func(_ string, e refs.Entry) error {
		out = append(out, e)
		return nil
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachReflog calls fn with the reflog name and entry of each row (name,
// entry) that query selects, in order, decoding a row at a time, and
// stops at fn's first error; what names the read in its errors.
func (t *pgTx) eachReflog(what string, fn func(name string, e refs.Entry) error, query string, args ...any) error {
	rows, err := t.query(query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var name string
	for i := 1; rows.Next(); i++ {
		var b []byte
		last := name
		if err := rows.Scan(&name, &b); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if name != last {
			i = 1
		}
		e, err := refs.DecodeEntry(b)
		if err != nil {
			return fmt.Errorf("reflog %s: entry %d: %w", name, i, err)
		}
		if err := fn(name, e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// ReflogNames lists the refs with a reflog; a write transaction that
// lists them runs exclusively, as one that lists the refs does.
func (t *pgTx) ReflogNames() ([]string, error) {
	if t.write {
		if err := t.exclusive("reflog names"); err != nil {
			return nil, err
		}
	}
	rows, err := t.query(`SELECT DISTINCT name FROM tract_reflog WHERE repository = $1 ORDER BY name`, t.s.repository)
	if err != nil {
		return nil, fmt.Errorf("reflog names: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reflog names: %w", err)
	}
	return names, nil
}

// ReplaceReflog rewrites the reflog of name, exclusively: a shared
// writer could append to it between the DELETE and the INSERT.
func (t *pgTx) ReplaceReflog(name string, es []refs.Entry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if err := t.exclusive("reflog " + name); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM tract_reflog WHERE repository = $1 AND name = $2`, t.s.repository, name); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if len(es) == 0 {
		return nil
	}
	// One statement; WITH ORDINALITY and ORDER BY give the identity
	// column the entries' order.
	raws := make([][]byte, len(es))
	for i, e := range es {
		raws[i] = e.Encode()
	}
	err := t.exec(`INSERT INTO tract_reflog (repository, name, entry)
SELECT $1, $2, e FROM unnest($3::bytea[]) WITH ORDINALITY AS u(e, n) ORDER BY n`, t.s.repository, name, raws)
	if err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	return nil
}

// Counters reads the counters of commit h. Those of a commit the
// transaction put are missing unless it put them too: it does not ask.
// Should the commit have been there already, with its counters, its
// caller computes them again and puts what was there (counters are a
// function of the commits), which costs less than the round trip a
// commit would otherwise spend asking.
func (t *pgTx) Counters(h dag.Hash) (c store.Counters, ok bool, err error) {
	if c, ok := t.seen.counters[h]; ok {
		return c, true, nil
	}
	if t.seen.fresh[h] {
		return store.Counters{}, false, nil
	}
	err = t.queryRow(`SELECT depth, messages, tokens FROM tract_counters WHERE repository = $1 AND hash = $2`,
		t.s.repository, h[:]).Scan(&c.Depth, &c.Messages, &c.Tokens)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Counters{}, false, nil
	}
	if err != nil {
		return store.Counters{}, false, fmt.Errorf("counters %s: %w", h.Short(), err)
	}
	return c, true, nil
}

func (t *pgTx) PutCounters(h dag.Hash, c store.Counters) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put counters %s: %w", h.Short(), err)
	}
	err := t.exec(`INSERT INTO tract_counters (repository, hash, depth, messages, tokens) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (repository, hash) DO UPDATE SET depth = EXCLUDED.depth, messages = EXCLUDED.messages, tokens = EXCLUDED.tokens`,
		t.s.repository, h[:], c.Depth, c.Messages, c.Tokens)
	if err != nil {
		return fmt.Errorf("put counters %s: %w", h.Short(), err)
	}
	t.seen.room()
	t.seen.counters[h] = c
	delete(t.seen.fresh, h)
	return nil
}

// DeleteCounters deletes the counters of h, exclusively: another writer may have just
// found it there and built on it.
func (t *pgTx) DeleteCounters(h dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete counters %s: %w", h.Short(), err)
	}
	if err := t.exclusive("delete counters " + h.Short()); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM tract_counters WHERE repository = $1 AND hash = $2`, t.s.repository, h[:]); err != nil {
		return fmt.Errorf("delete counters %s: %w", h.Short(), err)
	}
	delete(t.seen.counters, h)
	return nil
}

func (t *pgTx) ForEachCounters(fn func(h dag.Hash, c store.Counters) error) error {
	return forEach(t, "tract_counters", "depth, messages, tokens", func(cols [][]byte) (store.Counters, error) {
		return countersCols("tract_counters", cols)
	}, fn)
}
