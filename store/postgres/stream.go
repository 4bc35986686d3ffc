package postgres

import (
	"fmt"
	"iter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

var _ store.PackStreamer = (*pgTx)(nil)

// StreamPack writes an import's objects once, in the transaction that
// lands it (see store.PackStreamer): each kind of entry goes by COPY
// straight into its table, a chunk of about streamChunk bytes at a time,
// where an unpublished pack went first into tract_pack_entries and then,
// as PublishPack copied it, into the object tables. The transaction holds
// the repository exclusively throughout (see exclusive), so no other writer adds rows
// meanwhile: into a table that holds none of the repository's rows yet
// (an import into a new repository), the rows go as they come; into
// another, the rows already there are looked up by hash first, a chunk
// at a time, and left out (COPY takes no ON CONFLICT), counters found
// there being updated instead, as PublishPack replaces them.
//
// The documents go the same way into tract_words, numbered in their order
// after the repository's last and each with its bound (the latest time of
// it and every document before it), their words a tsvector sent in
// binary: no text is read back, and no document goes through a statement
// of its own.
func (t *pgTx) StreamPack(entries iter.Seq2[store.PackEntry, error], docs iter.Seq2[store.WordDoc, error]) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("stream pack: %w", err)
	}
	if err := t.exclusive("stream pack"); err != nil {
		return err
	}
	// The rows below may replace counters the transaction read.
	clear(t.seen.counters)
	clear(t.seen.fresh)
	sw := &streamWriter{t: t}
	if err := sw.start(); err != nil {
		return fmt.Errorf("stream pack: %w", err)
	}
	for e, err := range entries {
		if err != nil {
			return err
		}
		if err := sw.add(e); err != nil {
			return fmt.Errorf("stream pack: %w", err)
		}
	}
	if err := sw.send(); err != nil {
		return fmt.Errorf("stream pack: %w", err)
	}
	for d, err := range docs {
		if err != nil {
			return err
		}
		if err := sw.addDoc(d); err != nil {
			return fmt.Errorf("stream pack: word index: %w", err)
		}
	}
	if err := sw.sendDocs(); err != nil {
		return fmt.Errorf("stream pack: word index: %w", err)
	}
	return nil
}

// streamChunk is about how many bytes of entries StreamPack sends a COPY,
// and streamDocs how many documents.
const (
	streamChunk = 4 << 20
	streamDocs  = 2_000
)

// The columns of StreamPack's copies.
var (
	blobColumns    = []string{"repository", "hash", "data"}
	commitColumns  = []string{"repository", "hash", "raw"}
	counterColumns = []string{"repository", "hash", "depth", "messages", "tokens"}
	wordColumns    = []string{"repository", "seq", "hash", "time_ns", "bound_ns", "words"}
)

// streamWriter is the state of one StreamPack.
type streamWriter struct {
	t *pgTx
	// had* say whether the table held rows of the repository when the
	// stream began: only then are a chunk's rows looked up first.
	hadBlobs, hadCommits, hadCounters, hadWords bool
	// seq and bound are the last document's number and bound; seqBefore
	// was seq when the stream began.
	seq, bound, seqBefore int64
	// storedCommits counts the stream's commits the repository held
	// before it began.
	storedCommits int

	blobs, commits, counters []store.PackEntry
	size                     int
	docs                     []store.WordDoc
}

// start numbers the repository's unnumbered documents (see settleDocs),
// then reads which tables hold rows of the repository, and its last
// document.
func (sw *streamWriter) start() error {
	t := sw.t
	if err := t.exec(settleDocs, t.s.repository); err != nil { // numbered first: see settleDocs
		return err
	}
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM tract_blobs WHERE repository = $1),
	EXISTS (SELECT 1 FROM tract_commits WHERE repository = $1),
	EXISTS (SELECT 1 FROM tract_counters WHERE repository = $1),
	EXISTS (SELECT 1 FROM tract_words WHERE repository = $1), coalesce(last.seq, 0), coalesce(last.bound_ns, -9223372036854775808)
FROM (SELECT NULL) one LEFT JOIN LATERAL (
	SELECT seq, bound_ns FROM tract_words WHERE repository = $1 AND seq > 0 ORDER BY seq DESC LIMIT 1) last ON true`,
		t.s.repository).Scan(&sw.hadBlobs, &sw.hadCommits, &sw.hadCounters, &sw.hadWords, &sw.seq, &sw.bound)
	sw.seqBefore = sw.seq
	return err
}

// add takes the next entry, sending the chunks when they are full.
func (sw *streamWriter) add(e store.PackEntry) error {
	switch e.Kind {
	case store.PackBlob:
		sw.blobs = append(sw.blobs, e)
	case store.PackCommit:
		sw.commits = append(sw.commits, e)
	case store.PackCounters:
		sw.counters = append(sw.counters, e)
	default:
		return fmt.Errorf("entry %s of unknown kind %d", e.Hash.Short(), e.Kind)
	}
	sw.size += len(e.Value) + 64
	if sw.size >= streamChunk {
		return sw.send()
	}
	return nil
}

// send copies the chunks gathered.
func (sw *streamWriter) send() error {
	t := sw.t
	if err := t.flush(); err != nil {
		return err
	}
	repo := t.s.repository
	if len(sw.blobs) > 0 {
		rows, _, err := sw.fresh("tract_blobs", sw.hadBlobs, sw.blobs, func(e store.PackEntry) []any {
			return []any{repo, e.Hash[:], e.Value}
		})
		if err == nil {
			err = sw.copy("tract_blobs", blobColumns, rows)
		}
		if err != nil {
			return err
		}
	}
	if len(sw.commits) > 0 {
		rows, stored, err := sw.fresh("tract_commits", sw.hadCommits, sw.commits, func(e store.PackEntry) []any {
			return []any{repo, e.Hash[:], e.Value}
		})
		sw.storedCommits += stored
		if err == nil {
			err = sw.copy("tract_commits", commitColumns, rows)
		}
		if err != nil {
			return err
		}
	}
	if len(sw.counters) > 0 {
		if err := sw.sendCounters(); err != nil {
			return err
		}
	}
	clear(sw.blobs)
	clear(sw.commits)
	clear(sw.counters)
	sw.blobs, sw.commits, sw.counters, sw.size = sw.blobs[:0], sw.commits[:0], sw.counters[:0], 0
	return nil
}

// fresh returns the rows of es, leaving out, when table held rows of the
// repository before (had), those of the hashes it holds, which it
// counts.
func (sw *streamWriter) fresh(table string, had bool, es []store.PackEntry, row func(store.PackEntry) []any) (rows [][]any, stored int, err error) {
	hs := make([]dag.Hash, len(es))
	for i, e := range es {
		hs[i] = e.Hash
	}
	there, err := sw.stored(table, had, hs)
	if err != nil {
		return nil, 0, err
	}
	rows = make([][]any, 0, len(es))
	for i, e := range es {
		if there[i] {
			stored++
			continue
		}
		rows = append(rows, row(e))
	}
	return rows, stored, nil
}

// stored reports which of hs table holds already: none, unless it held
// rows of the repository before (had).
func (sw *streamWriter) stored(table string, had bool, hs []dag.Hash) ([]bool, error) {
	there := make([]bool, len(hs))
	if !had {
		return there, nil
	}
	err := sw.t.eachMany(table, "true", hs, func(i int, _ [][]byte) error {
		there[i] = true
		return nil
	})
	return there, err
}

// sendCounters copies the counters gathered, and updates those stored
// already.
func (sw *streamWriter) sendCounters() error {
	hs := make([]dag.Hash, len(sw.counters))
	for i, e := range sw.counters {
		hs[i] = e.Hash
	}
	there, err := sw.stored("tract_counters", sw.hadCounters, hs)
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(sw.counters))
	var keys [][]byte
	var depths, messages, tokens []int64
	for i, e := range sw.counters {
		c, err := store.DecodeCounters(e.Value)
		if err != nil {
			return fmt.Errorf("counters of %s: %w", e.Hash.Short(), err)
		}
		if there[i] {
			keys = append(keys, e.Hash[:])
			depths, messages, tokens = append(depths, c.Depth), append(messages, c.Messages), append(tokens, c.Tokens)
			continue
		}
		rows = append(rows, []any{sw.t.s.repository, e.Hash[:], c.Depth, c.Messages, c.Tokens})
	}
	if len(keys) > 0 {
		err := sw.t.exec(`UPDATE tract_counters c SET depth = u.d, messages = u.m, tokens = u.t
FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u (hash, d, m, t)
WHERE c.repository = $1 AND c.hash = u.hash`, sw.t.s.repository, keys, depths, messages, tokens)
		if err == nil {
			err = sw.t.flush()
		}
		if err != nil {
			return err
		}
	}
	return sw.copy("tract_counters", counterColumns, rows)
}

// addDoc takes the next document, sending the documents when they are
// streamDocs.
func (sw *streamWriter) addDoc(d store.WordDoc) error {
	sw.docs = append(sw.docs, d)
	if len(sw.docs) >= streamDocs {
		return sw.sendDocs()
	}
	return nil
}

// sendDocs copies the documents gathered into tract_words, numbered
// after the last, leaving out those of commits indexed already.
func (sw *streamWriter) sendDocs() error {
	if len(sw.docs) == 0 {
		return nil
	}
	hs := make([]dag.Hash, len(sw.docs))
	for i, d := range sw.docs {
		hs[i] = d.Commit
	}
	there, err := sw.indexed(hs)
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(sw.docs))
	for i, d := range sw.docs {
		if there[i] {
			continue
		}
		sw.seq++
		sw.bound = max(sw.bound, d.Time)
		rows = append(rows, []any{sw.t.s.repository, sw.seq, d.Commit[:], d.Time, sw.bound, tsVector(d.Words)})
	}
	clear(sw.docs)
	sw.docs = sw.docs[:0]
	sw.t.indexed += len(rows)
	return sw.copy("tract_words", wordColumns, rows)
}

// indexed reports which of the commits hs tract_words held a document of
// when the stream began. A document is stored only beside its commit, so
// none did unless one of the stream's commits was stored already; and
// those documents are numbered seqBefore at most, which keeps each lookup
// to them whichever index the server takes. Through the documents'
// numbers, which statistics that still take the repository for one of a
// few documents make look as cheap as the hashes' index, each lookup
// would otherwise go through every document the stream has added: a
// chunk's lookups grew to seconds, the import of 40,000 messages into a
// repository of one to over 30 s.
func (sw *streamWriter) indexed(hs []dag.Hash) ([]bool, error) {
	there := make([]bool, len(hs))
	if !sw.hadWords || sw.storedCommits == 0 {
		return there, nil
	}
	err := sw.t.eachManyAnd("tract_words", "true", "seq <= $3", []param{int8Param(sw.seqBefore)}, hs, func(i int, _ [][]byte) error {
		there[i] = true
		return nil
	})
	return there, err
}

// tsVector returns the tsvector of words ws (see appendLexeme): its
// lexemes sorted, as the server keeps them, or NULL when they are too
// many for one.
func tsVector(ws []string) pgtype.TSVector {
	lx, n := lexemes(ws)
	if n > maxVectorBytes {
		return pgtype.TSVector{}
	}
	v := pgtype.TSVector{Lexemes: make([]pgtype.TSVectorLexeme, len(lx)), Valid: true}
	for i, l := range lx {
		v.Lexemes[i].Word = l
	}
	return v
}

// copy copies rows into table, bounded as a statement is.
func (sw *streamWriter) copy(table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ctx, cancel := sw.t.bound()
	defer cancel()
	if _, err := sw.t.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
		return sw.t.fail("COPY", false, err)
	}
	return nil
}
