package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

var _ store.WordIndexChecker = (*Store)(nil)

// indexAll records every commit of the repository for the word index:
// finishWords indexes them, numbered by commit time.
func (t *pgTx) indexAll() error {
	return forEach(t, "tract_commits", "raw", func(cols [][]byte) (*dag.Commit, error) {
		c, err := dag.Decode(cols[0])
		if err != nil {
			return nil, nil // fsck reports it
		}
		return c, nil
	}, func(h dag.Hash, c *dag.Commit) error {
		if c != nil {
			t.words.added = append(t.words.added, docOf(h, c))
		}
		return nil
	})
}

// indexAllRepositories indexes the commits of every repository of the
// database in tx, then builds the GIN index over their words (at once,
// which is faster than growing it a document at a time): the migration
// to schema 3.
func indexAllRepositories(ctx context.Context, tx pgx.Tx, s *Store) error {
	rows, err := tx.Query(ctx, `SELECT name FROM tract_repositories ORDER BY name`)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		rs := &Store{repository: name, display: s.display, secrets: s.secrets, server: s.server}
		rs.server.replyTimeout = 0 // a migration may take long
		t := &pgTx{s: rs, tx: tx, ctx: ctx, write: true, seen: newOverlay()}
		if err := t.indexAll(); err != nil {
			return fmt.Errorf("index the words of repository %q: %w", name, err)
		}
		if err := t.finishWords(); err != nil {
			return fmt.Errorf("index the words of repository %q: %w", name, err)
		}
		if err := t.flush(); err != nil {
			return fmt.Errorf("index the words of repository %q: %w", name, err)
		}
	}
	_, err = tx.Exec(ctx, createWordsGIN)
	return err
}

// createWordsGIN creates the GIN index of the documents' words. With
// fastupdate, a document's words go into a pending list, which the
// insert that takes it past gin_pending_list_limit (here 1 MB, a
// thousand documents or so; the default is 4 MB) merges into the index
// in key order, as VACUUM does: 100,000 documents went in 6 times as
// fast as one key at a time (15 s against 92, on a loaded machine). A
// search reads the pending list whole: a full one cost a rare word's
// query 0.6 ms more (0.9 ms against 0.3).
const createWordsGIN = `CREATE INDEX tract_words_words ON tract_words USING gin (words)
WITH (fastupdate = on, gin_pending_list_limit = 1024)`

// RebuildWordIndex builds the repository's word index afresh from its
// commits, in one transaction (store.WordIndexChecker). A database the
// store may not write to fails with an error that wraps
// store.ErrReadOnly. It holds the repository exclusively.
func (s *Store) RebuildWordIndex(ctx context.Context) error {
	err := s.update(ctx, lockExclusive, func(tx store.Tx) error {
		t := tx.(*pgTx)
		if err := t.exec(`DELETE FROM tract_words WHERE repository = $1`, s.repository); err != nil {
			return err
		}
		return t.indexAll()
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "25006" || pgErr.Code == "42501") { // read_only_sql_transaction, insufficient_privilege
		return fmt.Errorf("rebuild the word index: %w (%w)", store.ErrReadOnly, err)
	}
	if err != nil {
		return fmt.Errorf("rebuild the word index: %w", err)
	}
	return nil
}

// checkPage is how many commits CheckWordIndex compares a query.
const checkPage = 1000

// CheckWordIndex compares the repository's word index with its commits
// (store.WordIndexChecker), in one snapshot: every commit has one
// document, of its time, holding its words (store.CommitWords: those of
// its text and diagnosis; none, for a text with too many for a
// tsvector), every document a commit, and each document's bound is no
// earlier than the time of every document numbered up to it (of an
// unnumbered one, than its own: see finishWords). It says
// what is wrong ("" for nothing); a database has the index whenever it
// has this tract's schema.
func (s *Store) CheckWordIndex(ctx context.Context) (problem string, present bool, err error) {
	err = s.View(ctx, func(tx store.Tx) error {
		problem, err = tx.(*pgTx).checkWords()
		return err
	})
	return problem, true, err
}

func (t *pgTx) checkWords() (string, error) {
	var orphans, unbound int64
	err := t.queryRow(`SELECT
	(SELECT count(*) FROM tract_words w LEFT JOIN LATERAL (
		SELECT 1 AS found FROM tract_commits c WHERE c.repository = $1 AND c.hash = w.hash LIMIT 1) c ON true
	WHERE w.repository = $1 AND c.found IS NULL),
	(SELECT count(*) FROM (SELECT bound_ns, max(time_ns) OVER (ORDER BY seq) AS latest
		FROM tract_words WHERE repository = $1 AND seq > 0) b WHERE bound_ns < latest) +
	(SELECT count(*) FROM tract_words WHERE repository = $1 AND seq < 0 AND bound_ns < time_ns)`, t.s.repository).Scan(&orphans, &unbound)
	if err != nil {
		return "", fmt.Errorf("word index: %w", err)
	}
	if orphans > 0 {
		return fmt.Sprintf("%d documents are of no commit the repository holds", orphans), nil
	}
	if unbound > 0 {
		return fmt.Sprintf("%d documents have a bound earlier than a document before them", unbound), nil
	}
	type row struct {
		h       dag.Hash
		c       *dag.Commit
		indexed bool
		t       int64
		whole   bool
		words   []string
	}
	// Each lookup is a LATERAL one with LIMIT 1, which the planner can
	// only run as an index lookup (see manyQuery): as a plain join, with
	// the statistics of a table before an import, it scanned every
	// document for each commit.
	const query = `SELECT c.hash, c.raw, w.time_ns, w.whole, w.words
FROM tract_commits c LEFT JOIN LATERAL (
	SELECT time_ns, words IS NOT NULL AS whole, array_to_string(tsvector_to_array(words), ' ') AS words
	FROM tract_words WHERE repository = $1 AND hash = c.hash LIMIT 1) w ON true
WHERE c.repository = $1 AND c.hash > $2 ORDER BY c.hash LIMIT $3`
	wrong, first := 0, ""
	after := []byte{}
	for {
		var page []row
		err := t.binaryQuery(query, []param{textParam(t.s.repository), byteaParam(after), int8Param(checkPage)}, func(cols [][]byte) error {
			h, err := hashOf("tract_commits", cols[0])
			if err != nil {
				return err
			}
			r := row{h: h}
			if r.c, err = dag.Decode(cols[1]); err != nil {
				r.c = nil // fsck reports it
			}
			if cols[2] != nil {
				r.indexed = true
				if r.t, err = int8Col("tract_words", cols[2]); err != nil {
					return err
				}
				r.whole = len(cols[3]) == 1 && cols[3][0] == 1
				if len(cols[4]) > 0 {
					r.words = strings.Split(string(cols[4]), " ")
				}
			}
			page = append(page, r)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("word index: %w", err)
		}
		var blobs []dag.Hash
		for _, r := range page {
			if r.c != nil {
				blobs = append(blobs, r.c.Blob)
			}
		}
		texts := make([][]byte, len(blobs))
		if err := t.eachMany("tract_blobs", "data", blobs, func(i int, cols [][]byte) error {
			texts[i] = append([]byte{}, cols[0]...)
			return nil
		}); err != nil {
			return "", fmt.Errorf("word index: %w", err)
		}
		at := 0
		for _, r := range page {
			if r.c == nil {
				continue
			}
			text := texts[at]
			at++
			msg := ""
			want, size := lexemes(docWords(text, store.CommitWords(&dag.Commit{Meta: r.c.Meta}, "")))
			switch {
			case !r.indexed:
				msg = "has no document"
			case r.t != r.c.Time.UnixNano():
				msg = "has a document of another time"
			case !r.whole && size <= maxVectorBytes:
				msg = "has a document without words"
			case r.whole:
				slices.Sort(r.words)
				if !slices.Equal(r.words, want) {
					msg = fmt.Sprintf("has a document of %d words, where its text and diagnosis have %d", len(r.words), len(want))
				}
			}
			if msg != "" {
				if wrong == 0 {
					first = "commit " + r.h.Short() + " " + msg
				}
				wrong++
			}
		}
		if len(page) > 0 {
			after = page[len(page)-1].h[:]
		}
		if len(page) < checkPage {
			break
		}
	}
	switch wrong {
	case 0:
		return "", nil
	case 1:
		return first, nil
	}
	return fmt.Sprintf("%s (and %d more commits' documents are wrong)", first, wrong-1), nil
}
