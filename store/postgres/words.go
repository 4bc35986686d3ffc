package postgres

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// The word index (schema 3) is the table tract_words: a row, a document,
// for every commit of the repository, with its commit's hash and time and
// its words (store.CommitWords) as a tsvector built from them as they are
// (array_to_tsvector: no parser, no dictionary, so the words are exactly
// those of package store's tokeniser, each byte beyond ASCII written %XX:
// see appendLexeme), under a GIN index that intersects the
// terms of a search and answers a prefix ('valid':*) by a range of its
// keys. Documents are numbered (seq) per repository in the order they
// were indexed, one transaction's by commit time, and each keeps bound:
// the latest commit time of every document up to it, so that a search
// that walks the documents from the newest number down knows how new the
// rest can be (see WordMatches).
//
// A commit's document is written by the transaction that writes the
// commit, with the writes that transaction sends last (see finishWords):
// one INSERT of every document, their words as one array. A transaction
// that deletes commits deletes their documents in the same way.
//
// Numbering needs the repository to itself: a document's bound must cover
// every document numbered below it, which a writer beside it may be
// adding unseen. So a writer that holds the repository shared (see
// Store.Update) adds its documents unnumbered: a negative seq, unique to
// its transaction (its transaction id's, see insertPendingDocs), its bound
// its own time. A search reads the unnumbered documents first, as newer
// than any numbered one (see WordMatches). They are numbered, in the order
// of their times after the last numbered one (see settleDocs), by the
// next transaction that holds the repository exclusively and by a
// transaction of their own once a Store has added settleEvery of them
// (see Store.settle), which writers beside it do not wait for. A text
// too large for a tsvector (words of more than maxVectorBytes together)
// has a document without words, which a search reads the text of.
//
// The GIN index keeps a word that no document holds any more as a key
// without documents until it is rebuilt (VACUUM FULL, REINDEX): no query
// reaches it, but its bytes stay in the index's file, as a deleted row's
// bytes stay in its table's until VACUUM reuses the space.

// maxVectorBytes bounds the bytes of a document's words: a tsvector holds
// at most 1 MB of them (PostgreSQL's MAXSTRPOS), and a text with more has
// a document without words.
const maxVectorBytes = 1<<20 - 1

// indexChunk is how many documents one INSERT writes, and how many texts
// a transaction that indexes many reads at a time.
const indexChunk = 2000

// defaultWindows are how many document numbers the first queries of a
// search cover, from the newest down (Store.windows); the next one covers
// the rest. One window of the newest 1,024 answers the newest few of a
// frequent word; a second, read row by row as the first is while the
// table has no statistics, cost a rare word more than the GIN index's
// answer for the rest.
func defaultWindows() []int64 { return []int64{1024} }

// pendingDoc is a commit on its way into the index.
type pendingDoc struct {
	h, blob dag.Hash
	t       int64
	// diagnosis holds the words of the commit's diagnosis (nil: none).
	diagnosis []string
}

// wordsTx is what a write transaction did that the word index follows.
type wordsTx struct {
	// added holds the commits put, in order (repeats included): those
	// already indexed are left as they are.
	added []pendingDoc
	// dropped holds the commits of added deleted again in the
	// transaction (and not put again since).
	dropped map[dag.Hash]bool
	// deleted holds the commits deleted: their documents go before
	// added's come in.
	deleted map[dag.Hash]bool
}

func (w *wordsTx) empty() bool { return len(w.added) == 0 && len(w.deleted) == 0 }

// docOf returns the document of commit c, stored under h.
func docOf(h dag.Hash, c *dag.Commit) pendingDoc {
	return pendingDoc{h: h, blob: c.Blob, t: c.Time.UnixNano(),
		diagnosis: store.CommitWords(&dag.Commit{Meta: c.Meta}, "")}
}

// noteCommitPut records commit raw, put under h, for the index.
func (t *pgTx) noteCommitPut(h dag.Hash, raw []byte) {
	c, err := dag.Decode(raw)
	if err != nil {
		return // fsck reports it; a search reads it as a scan would
	}
	t.words.added = append(t.words.added, docOf(h, c))
	delete(t.words.dropped, h)
}

// noteCommitDeleted records that commit h is deleted.
func (t *pgTx) noteCommitDeleted(h dag.Hash) {
	if t.words.deleted == nil {
		t.words.deleted = map[dag.Hash]bool{}
	}
	t.words.deleted[h] = true
	if len(t.words.added) > 0 {
		if t.words.dropped == nil {
			t.words.dropped = map[dag.Hash]bool{}
		}
		t.words.dropped[h] = true
	}
}

// finishWords queues the writes that bring the index up to what the
// transaction wrote: the deleted commits' documents go, then the added
// commits', numbered by commit time, come in, a chunk of indexChunk an
// INSERT. The texts come from what the transaction put (see overlay);
// the others are read, a chunk at a time, in the round trip that sends
// the chunk before. A commit, then, costs no round trip of its own.
//
// A shared transaction adds its documents unnumbered (see
// insertPendingDocs); an exclusive one numbers the unnumbered documents
// first (see settleDocs).
func (t *pgTx) finishWords() error {
	w := t.words
	t.words = wordsTx{}
	if !t.shared {
		if err := t.exec(settleDocs, t.s.repository); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	if len(w.deleted) > 0 {
		keys := make([][]byte, 0, len(w.deleted))
		for h := range w.deleted {
			keys = append(keys, h[:])
		}
		slices.SortFunc(keys, bytes.Compare)
		if err := t.exec(`DELETE FROM tract_words WHERE repository = $1 AND hash = ANY($2)`, t.s.repository, keys); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	docs := w.added
	if len(docs) == 0 {
		return nil
	}
	slices.SortFunc(docs, func(a, b pendingDoc) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return bytes.Compare(a.h[:], b.h[:])
	})
	docs = slices.CompactFunc(docs, func(a, b pendingDoc) bool { return a.h == b.h })
	if len(w.dropped) > 0 {
		docs = slices.DeleteFunc(docs, func(d pendingDoc) bool { return w.dropped[d.h] })
	}
	if t.shared && len(docs) >= maxPendingDocs {
		return t.exclusive("word index")
	}
	t.indexed += len(docs)
	for start := 0; start < len(docs); start += indexChunk {
		if err := t.indexDocs(docs[start:min(start+indexChunk, len(docs))], start); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	if t.shared {
		t.pendingDocs += len(docs)
	}
	if len(docs) > directDocs {
		// A bulk write sends its documents before COMMIT: the server
		// runs the round trip of COMMIT to its end even when the client
		// that sent it is gone, and a long one kept a killed copy's
		// repository looking untouched for a while before its commit
		// showed (a retried copy then found it not empty).
		if err := t.flush(); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	return nil
}

// directDocs is the most documents a transaction sends with its COMMIT:
// a commit's, or a few.
const directDocs = 256

// insertDocs is the INSERT of a chunk of documents, in the order of
// their numbers: $2 their hashes, $3 their times, $4 their words joined
// by spaces (a word holds none; NULL: too many words). Each is numbered
// after the repository's last document, and its bound is the latest time
// of it, the documents before it in the chunk and the last one's bound.
// A commit indexed already keeps its document.
const insertDocs = `INSERT INTO tract_words (repository, seq, hash, time_ns, bound_ns, words)
SELECT $1, last.seq + d.n, d.hash, d.t, greatest(last.bound, max(d.t) OVER (ORDER BY d.n)),
	CASE WHEN d.w IS NULL THEN NULL ELSE array_to_tsvector(string_to_array(d.w, ' ')) END
FROM unnest($2::bytea[], $3::bigint[], $4::text[]) WITH ORDINALITY AS d (hash, t, w, n),
	(SELECT coalesce(max(seq), 0) AS seq, coalesce(max(bound_ns), -9223372036854775808) AS bound FROM (
		SELECT seq, bound_ns FROM tract_words WHERE repository = $1 AND seq > 0 ORDER BY seq DESC LIMIT 1) x) last
ON CONFLICT (repository, hash) DO NOTHING`

// insertPendingDocs is insertDocs for a shared transaction: the documents
// go unnumbered, each with a negative seq that no other transaction's
// document has, made of the transaction's id (which it holds while it
// writes, and which no other transaction of the server ever has) times
// maxPendingDocs plus $5 + the document's place in the chunk, and a
// bound of its own time.
const insertPendingDocs = `INSERT INTO tract_words (repository, seq, hash, time_ns, bound_ns, words)
SELECT $1, -(txid_current() * 16777216 + $5::bigint + d.n), d.hash, d.t, d.t,
	CASE WHEN d.w IS NULL THEN NULL ELSE array_to_tsvector(string_to_array(d.w, ' ')) END
FROM unnest($2::bytea[], $3::bigint[], $4::text[]) WITH ORDINALITY AS d (hash, t, w, n)
ON CONFLICT (repository, hash) DO NOTHING`

// maxPendingDocs is how many documents a shared transaction may add (see
// insertPendingDocs: 1 << 24); one that adds more runs exclusively.
const maxPendingDocs = 16777216

// settleDocs numbers the repository's unnumbered documents, in the order
// of their times (equal times by hash), after the last numbered one, each
// bound the latest time of it, the ones before it and the last numbered
// one's bound. It sees the documents of the transactions committed when
// it starts; those of writers still at work stay unnumbered until the
// next time. The documents are deleted and inserted again, numbered, in
// one statement, rather than updated: an UPDATE joins its numbers to the
// rows, which the planner, taking a new repository for one of a row or
// two, did by running the numbering once per row (1.4 s for 1,200
// documents; 9.5 s for a few thousand). Numbers are given by one transaction at a time (see Store.settle
// and finishWords), each seeing the numbers of the one before, so every
// bound covers every document numbered below it.
const settleDocs = `WITH last AS (
	SELECT coalesce(max(seq), 0) AS seq, coalesce(max(bound_ns), -9223372036854775808) AS bound FROM (
		SELECT seq, bound_ns FROM tract_words WHERE repository = $1 AND seq > 0 ORDER BY seq DESC LIMIT 1) x
), moved AS (
	DELETE FROM tract_words WHERE repository = $1 AND seq < 0 RETURNING hash, time_ns, words
)
INSERT INTO tract_words (repository, seq, hash, time_ns, bound_ns, words)
SELECT $1, last.seq + row_number() OVER o, m.hash, m.time_ns, greatest(last.bound, max(m.time_ns) OVER o), m.words
FROM moved m, last
WINDOW o AS (ORDER BY m.time_ns, m.hash)`

// indexDocs queues the INSERT of docs, in their order, reading the texts
// the transaction's overlay does not hold; from is the place of docs'
// first among the transaction's.
func (t *pgTx) indexDocs(docs []pendingDoc, from int) error {
	var missing []dag.Hash
	for _, d := range docs {
		if _, ok := t.seen.blobs[d.blob]; !ok {
			missing = append(missing, d.blob)
		}
	}
	var texts map[dag.Hash][]byte
	if len(missing) > 0 {
		slices.SortFunc(missing, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		missing = slices.Compact(missing)
		texts = make(map[dag.Hash][]byte, len(missing))
		err := t.eachMany("tract_blobs", "data", missing, func(i int, cols [][]byte) error {
			texts[missing[i]] = bytes.Clone(cols[0])
			return nil
		})
		if err != nil {
			return err
		}
	}
	hashes := make([][]byte, len(docs))
	times := make([]int64, len(docs))
	vectors := make([]*string, len(docs))
	var sb strings.Builder
	for i, d := range docs {
		text, ok := t.seen.blobs[d.blob]
		if !ok {
			text = texts[d.blob] // nil: a commit without its text is found by its diagnosis
		}
		ws := docWords(text, d.diagnosis)
		hashes[i], times[i] = d.h[:], d.t
		sb.Reset()
		for j, w := range ws {
			if j > 0 {
				sb.WriteByte(' ')
			}
			appendLexeme(&sb, w)
		}
		if sb.Len()-len(ws)+1 <= maxVectorBytes {
			s := sb.String()
			vectors[i] = &s
		}
	}
	if t.shared {
		return t.exec(insertPendingDocs, t.s.repository, hashes, times, vectors, int64(from))
	}
	return t.exec(insertDocs, t.s.repository, hashes, times, vectors)
}

// docWords returns the distinct words of text and diagnosis (already
// words), sorted: store.CommitWords, from a commit's parts.
func docWords(text []byte, diagnosis []string) []string {
	ws := store.CommitWords(&dag.Commit{}, string(text))
	if len(diagnosis) == 0 {
		return ws
	}
	ws = append(ws, diagnosis...)
	slices.Sort(ws)
	return slices.Compact(ws)
}

// appendLexeme appends the lexeme of word w to b: w with every byte but
// an ASCII letter or digit written %XX (two upper-case hex digits), so
// that a tsvector holds ASCII alone, which a database of any encoding
// takes as it is (a word beyond ASCII, in a LATIN1 database, would not
// convert). The encoding keeps prefixes: a word's prefix's lexeme is a
// prefix of the word's, and two words never share a lexeme ('%' is in no
// word).
func appendLexeme(b *strings.Builder, w string) {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
}

// lexemes returns the lexemes of ws (see appendLexeme), sorted, and the
// bytes they take together.
func lexemes(ws []string) ([]string, int) {
	out := make([]string, len(ws))
	n := 0
	var b strings.Builder
	for i, w := range ws {
		b.Reset()
		appendLexeme(&b, w)
		out[i] = b.String()
		n += len(out[i])
	}
	slices.Sort(out)
	return out, n
}

var _ store.WordIndexTx = (*pgTx)(nil)

// tsQuery returns the tsquery of terms, ANDed: each word's lexeme (see
// appendLexeme) quoted, a prefix with :*. ok is false for a term without
// a word.
func tsQuery(terms []store.WordTerm) (q string, ok bool) {
	var b strings.Builder
	for i, term := range terms {
		if term.Word == "" {
			return "", false
		}
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('\'')
		appendLexeme(&b, term.Word)
		b.WriteByte('\'')
		if term.Prefix {
			b.WriteString(":*")
		}
	}
	return b.String(), true
}

// wordWindowQuery reads the documents numbered $2 to $3 - 1 whose words
// match the tsquery $4, newest first (equal times by hash), with the
// bound of the document before $2 (the latest time of every document
// numbered lower; NULL when there is none). The words are matched by
// ts_match_vq, the function of the operator @@, which no index serves:
// the planner reads the window's rows by their numbers and checks each,
// where with @@ and no statistics of the words (a table just filled)
// it intersected the window with the GIN index's list of a frequent
// word, every document holding it (246 ms for the ten newest of the most
// common word at a million messages).
const wordWindowQuery = `SELECT w.hash, w.time_ns, (SELECT bound_ns FROM tract_words
	WHERE repository = $1 AND seq > 0 AND seq < $2 ORDER BY seq DESC LIMIT 1)
FROM tract_words w
WHERE w.repository = $1 AND w.seq >= $2 AND w.seq < $3 AND ts_match_vq(w.words, $4::tsquery)
ORDER BY w.time_ns DESC, w.hash`

// wordRestQuery reads the documents numbered below $3 (and above 0: not
// the unnumbered) whose words match $4, as wordWindowQuery does ($2 is
// unused). The number is compared as
// seq + 0 and the repository as repository || ”, which no index
// orders: the planner can neither read the documents by their numbers,
// as it would with no statistics (a repository just imported, the table
// not yet analysed) however many there are, nor intersect the GIN
// index's matches with every row of the repository; it reads the GIN
// index (or, for a word it knows most documents hold, every row).
const wordRestQuery = `SELECT w.hash, w.time_ns, NULL::bigint
FROM tract_words w
WHERE w.repository || '' = $1 AND $2::bigint IS NOT NULL AND w.seq + 0 > 0 AND w.seq + 0 < $3 AND w.words @@ $4::tsquery
ORDER BY w.time_ns DESC, w.hash`

// unindexedQuery reads the repository's last document number and its
// bound (in a row without a hash), the documents without words (texts
// with too many for a tsvector), with their numbers, and the unnumbered
// documents (see finishWords) whose words match the tsquery $2; the
// fourth column tells them apart (0, 1, 2).
const unindexedQuery = `SELECT coalesce((SELECT max(seq) FROM tract_words WHERE repository = $1 AND seq > 0), 0), NULL::bytea,
	(SELECT bound_ns FROM tract_words WHERE repository = $1 AND seq > 0 ORDER BY seq DESC LIMIT 1), 0::bigint
UNION ALL
SELECT seq, hash, time_ns, 1 FROM tract_words WHERE repository = $1 AND words IS NULL
UNION ALL
SELECT seq, hash, time_ns, 2 FROM tract_words
WHERE repository = $1 AND seq < 0 AND words IS NOT NULL AND ts_match_vq(words, $2::tsquery)`

// wordHit is a document a search matched.
type wordHit struct {
	seq int64
	h   dag.Hash
	t   int64
}

// WordMatches walks the unnumbered documents first (see finishWords),
// newest first, each with the bound of the documents after it: its own
// time, or the last numbered document's bound, whichever is later. Then
// it walks the numbered documents from the newest number down, a window
// of numbers at a time (see defaultWindows), each window's matches newest
// first, each with the bound of the
// documents after it: its own time, or the latest of the documents
// numbered below the window, whichever is later. The commits of the
// matches it yields are read a few at a time ahead of fn into the
// transaction's overlay, where search.Scan's reads of them find them. In
// a transaction that has written commits it reports no index: the index
// follows them only as the transaction ends.
func (t *pgTx) WordMatches(terms []store.WordTerm, fn func(h dag.Hash, bound time.Time) (bool, error)) (bool, error) {
	if len(terms) == 0 || !t.words.empty() {
		return false, nil
	}
	query, ok := tsQuery(terms)
	if !ok {
		return false, nil
	}
	top, topBound, unindexed, unnumbered, err := t.unindexedMatches(terms, query)
	if err != nil {
		return true, fmt.Errorf("word index: %w", err)
	}
	if len(unnumbered) > 0 {
		slices.SortFunc(unnumbered, wordHit.newerFirst)
		more, err := t.yieldHits(unnumbered, topBound, fn)
		if err != nil || !more {
			return true, err
		}
	}
	hi := top + 1
	for i := 0; hi > 1; i++ {
		lo, sql := int64(1), wordRestQuery
		if i < len(t.s.windows) {
			lo, sql = max(hi-t.s.windows[i], 1), wordWindowQuery
		}
		var hits []wordHit
		below := int64(math.MinInt64)
		err := t.binaryQuery(sql, []param{textParam(t.s.repository), int8Param(lo), int8Param(hi), textParam(query)},
			func(cols [][]byte) error {
				h, err := hashOf("tract_words", cols[0])
				if err != nil {
					return err
				}
				tm, err := int8Col("tract_words", cols[1])
				if err != nil {
					return err
				}
				if cols[2] != nil {
					if below, err = int8Col("tract_words", cols[2]); err != nil {
						return err
					}
				}
				hits = append(hits, wordHit{h: h, t: tm})
				return nil
			})
		if err != nil {
			return true, fmt.Errorf("word index: %w", err)
		}
		if len(hits) == 0 && len(unindexed) > 0 {
			// The bound below the window, for the unindexed documents in it.
			if err := t.queryRow(`SELECT coalesce((SELECT bound_ns FROM tract_words WHERE repository = $1 AND seq > 0 AND seq < $2
				ORDER BY seq DESC LIMIT 1), -9223372036854775808)`, t.s.repository, lo).Scan(&below); err != nil {
				return true, fmt.Errorf("word index: %w", err)
			}
		}
		for len(unindexed) > 0 && unindexed[0].seq >= lo {
			hits = append(hits, unindexed[0])
			unindexed = unindexed[1:]
		}
		slices.SortFunc(hits, wordHit.newerFirst)
		more, err := t.yieldHits(hits, below, fn)
		if err != nil || !more {
			return true, err
		}
		hi = lo
	}
	return true, nil
}

// newerFirst orders hits as a search yields them: the newest first, then
// by hash.
func (a wordHit) newerFirst(b wordHit) int {
	if c := cmp.Compare(b.t, a.t); c != 0 {
		return c
	}
	return bytes.Compare(a.h[:], b.h[:])
}

// yieldHits calls fn with each of hits, in order, until it returns false,
// reading their commits ahead into the overlay, a few first and more
// each time fn asks for more.
func (t *pgTx) yieldHits(hits []wordHit, below int64, fn func(dag.Hash, time.Time) (bool, error)) (bool, error) {
	ahead := 16
	for i := 0; i < len(hits); {
		n := min(ahead, len(hits)-i)
		ahead = min(ahead*2, maxBatch)
		if len(t.seen.commits)+n >= maxOverlay {
			clear(t.seen.commits)
		}
		var want []dag.Hash
		for _, x := range hits[i : i+n] {
			if _, ok := t.seen.commits[x.h]; !ok {
				want = append(want, x.h)
			}
		}
		if len(want) > 0 {
			err := t.eachMany("tract_commits", "raw", want, func(j int, cols [][]byte) error {
				t.seen.commits[want[j]] = bytes.Clone(cols[0])
				return nil
			})
			if err != nil {
				return false, err
			}
		}
		for _, x := range hits[i : i+n] {
			if _, ok := t.seen.commits[x.h]; !ok {
				continue // a document without its commit: fsck reports it
			}
			more, err := fn(x.h, time.Unix(0, max(x.t, below)))
			if err != nil || !more {
				return false, err
			}
		}
		i += n
	}
	return true, nil
}

// unindexedMatches returns the repository's last document number and its
// bound (math.MinInt64 when there is none), the numbered documents without
// words whose commits' words hold every term, newest number first, and
// the unnumbered documents that match, those without words among them
// (see unindexedQuery): the texts of the documents without words are
// read.
func (t *pgTx) unindexedMatches(terms []store.WordTerm, query string) (top, topBound int64, numbered, unnumbered []wordHit, _ error) {
	var docs []wordHit
	topBound = math.MinInt64
	err := t.binaryQuery(unindexedQuery, []param{textParam(t.s.repository), textParam(query)}, func(cols [][]byte) error {
		if len(cols) != 4 {
			return fmt.Errorf("tract_words: a row of %d columns: %w", len(cols), store.ErrCorrupt)
		}
		seq, err := int8Col("tract_words", cols[0])
		if err != nil {
			return err
		}
		if cols[1] == nil {
			top = seq
			if cols[2] != nil {
				topBound, err = int8Col("tract_words", cols[2])
			}
			return err
		}
		h, err := hashOf("tract_words", cols[1])
		if err != nil {
			return err
		}
		tm, err := int8Col("tract_words", cols[2])
		if err != nil {
			return err
		}
		kind, err := int8Col("tract_words", cols[3])
		if err != nil {
			return err
		}
		if kind == 2 {
			unnumbered = append(unnumbered, wordHit{seq: seq, h: h, t: tm})
			return nil
		}
		docs = append(docs, wordHit{seq: seq, h: h, t: tm})
		return nil
	})
	if err != nil || len(docs) == 0 {
		return top, topBound, nil, unnumbered, err
	}
	slices.SortFunc(docs, func(a, b wordHit) int { return cmp.Compare(b.seq, a.seq) })
	out := docs[:0]
	for _, d := range docs {
		c, err := t.Commit(d.h)
		if err != nil {
			continue // a document without its commit: fsck reports it
		}
		text, err := t.Blob(c.Blob)
		if err != nil {
			text = nil
		}
		ws := docWords(text, store.CommitWords(&dag.Commit{Meta: c.Meta}, ""))
		if !allTermsIn(terms, ws) {
			continue
		}
		if d.seq < 0 {
			unnumbered = append(unnumbered, d)
		} else {
			out = append(out, d)
		}
	}
	return top, topBound, out, unnumbered, nil
}

// allTermsIn reports whether the sorted, distinct ws hold a word each
// term matches.
func allTermsIn(terms []store.WordTerm, ws []string) bool {
	for _, term := range terms {
		i, found := slices.BinarySearch(ws, term.Word)
		if !found && !(term.Prefix && i < len(ws) && strings.HasPrefix(ws[i], term.Word)) {
			return false
		}
	}
	return true
}

// settleEvery is how many unnumbered documents a Store adds before it
// numbers them (see settle).
const settleEvery = 256

// settleDue numbers the repository's unnumbered documents (see settle),
// in the background, once the Store's transactions have added settleEvery
// of them since it last did (counting from a random point at first: see
// newStore): the writer whose commit made them due does
// not wait for it (about 15 ms for 256 documents here).
func (s *Store) settleDue() {
	n := s.pendingDocs.Load()
	if n >= settleEvery && s.pendingDocs.CompareAndSwap(n, 0) {
		s.settling.Go(func() { s.settle(context.Background()) })
	}
}

// settleLock is the first key of the advisory lock of settle, the second
// being the hash of the repository's name ("twds" in ASCII).
const settleLock = 0x74776473

// settle numbers the repository's unnumbered documents (settleDocs) in a
// transaction of its own: it holds the repository's lock shared, as a
// writer does, so that an exclusive writer (which numbers them too) does
// not run beside it; a transaction-scoped advisory lock, of the
// repository's name, keeps a second Store from numbering at the same
// time, and one that finds it taken does nothing (the other is at it).
// Its commit waits for no flush of the log (synchronous_commit off): a
// numbering lost in a crash leaves the documents unnumbered, which a
// search reads as such. It is an optimisation of searches only, so a
// failure is not reported, and it spends one round trip when the lock is
// free and two more (the numbering, COMMIT) when it is not taken.
func (s *Store) settle(ctx context.Context) {
	_ = s.update(ctx, lockShared, func(tx store.Tx) error {
		t := tx.(*pgTx)
		var got bool
		err := t.queryRow(`SELECT pg_try_advisory_xact_lock($1::int, hashtext($2))`, int32(settleLock), s.repository).Scan(&got)
		if err != nil || !got {
			return err
		}
		if err := t.exec(`SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		return t.exec(settleDocs, s.repository)
	})
}
