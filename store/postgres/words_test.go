package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

// putTexts stores a commit of each text, the i-th made i seconds after
// base, in one transaction.
func putTexts(t *testing.T, s store.Store, base time.Time, texts ...string) []dag.Hash {
	t.Helper()
	var hs []dag.Hash
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		for i, text := range texts {
			blob, err := tx.PutBlob([]byte(text))
			if err != nil {
				return err
			}
			h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob,
				Time: base.Add(time.Duration(i) * time.Second)})
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
		return nil
	}))
	return hs
}

// searchIndex returns the commits query matches in s, newest first, and
// whether the word index answered (rather than a read of every text).
func searchIndex(t *testing.T, s store.Store, query string) (hs []dag.Hash, indexed bool) {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		var terms []store.WordTerm
		for _, term := range q.Terms() {
			w, prefix := strings.CutSuffix(term, "*")
			terms = append(terms, store.WordTerm{Word: w, Prefix: prefix})
		}
		var err error
		if indexed, err = tx.(store.WordIndexTx).WordMatches(terms, func(dag.Hash, time.Time) (bool, error) { return false, nil }); err != nil {
			return err
		}
		hits, err := search.Scan(context.Background(), tx, q, 0)
		for _, h := range hits {
			hs = append(hs, h.Hash)
		}
		return err
	}))
	return hs, indexed
}

// A database that today's schema 2 wrote (no word index) is upgraded by
// Migrate, which indexes every repository's commits: searches then go
// through the index, and fsck finds it right.
func TestMigrate_BuildsTheWordIndex(t *testing.T) {
	ctx := context.Background()
	db := inSchema(t, pgtest.URL(t))
	_, err := postgres.Migrate(ctx, db)
	require.NoError(t, err)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	urls := []string{db, pgtest.WithParam(t, db, "repository", "second")}
	var made [][]dag.Hash
	for i, u := range urls {
		s, err := postgres.Create(ctx, u)
		require.NoError(t, err)
		made = append(made, putTexts(t, s, base, fmt.Sprintf("the fox of repository %d", i), "a Quick fox", "nothing here", "Foxes quickly"))
		s.Close()
	}
	// Back to schema 2: the same tables but the index.
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `DROP TABLE tract_words; UPDATE tract_schema SET version = 2`)
	require.NoError(t, err)
	conn.Close(ctx)
	_, err = postgres.Open(ctx, db)
	require.ErrorIs(t, err, postgres.ErrSchemaOld)

	r, err := postgres.Migrate(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, postgres.MigrateResult{From: 2, To: postgres.SchemaVersion}, *r)
	for i, u := range urls {
		s, err := postgres.Open(ctx, u)
		require.NoError(t, err)
		hs := made[i]
		got, indexed := searchIndex(t, s, "fox")
		assert.True(t, indexed, "the upgraded database searches through its index")
		assert.Equal(t, []dag.Hash{hs[1], hs[0]}, got)
		got, _ = searchIndex(t, s, "qu* fox*")
		assert.Equal(t, []dag.Hash{hs[3], hs[1]}, got)
		got, _ = searchIndex(t, s, fmt.Sprintf("repository %d", i))
		assert.Equal(t, []dag.Hash{hs[0]}, got, "each repository's index holds its own commits")
		rep, err := store.Fsck(ctx, s)
		require.NoError(t, err)
		assert.Empty(t, rep.Problems)
		assert.Equal(t, store.WordIndexOK, rep.WordIndex)

		// New commits join the built index.
		more := putTexts(t, s, base.Add(time.Hour), "another fox")
		got, _ = searchIndex(t, s, "fox")
		assert.Equal(t, []dag.Hash{more[0], hs[1], hs[0]}, got)
		s.Close()
	}
}

// Fsck finds a word index that does not match the commits, says what is
// wrong, and rebuilds it; the searches after find what the commits hold.
func TestFsck_RebuildsAWrongWordIndex(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	for _, tc := range []struct {
		name, damage, problem string
	}{
		{"other words", `UPDATE tract_words SET words = array_to_tsvector('{bogus,fox}') WHERE repository = $1 AND seq = 1`, "has a document of 2 words, where its text and diagnosis have 3"},
		{"no document", `DELETE FROM tract_words WHERE repository = $1 AND seq = 2`, "has no document"},
		{"no words", `UPDATE tract_words SET words = NULL WHERE repository = $1 AND seq = 2`, "has a document without words"},
		{"another time", `UPDATE tract_words SET time_ns = time_ns - 1 WHERE repository = $1 AND seq = 3`, "has a document of another time"},
		{"a bound too early", `UPDATE tract_words SET bound_ns = 0 WHERE repository = $1 AND seq = 3`, "1 documents have a bound earlier"},
		{"a document of no commit", `INSERT INTO tract_words (repository, seq, hash, time_ns, bound_ns, words)
			SELECT $1, 99, '\x00', 0, bound_ns, array_to_tsvector('{bogus}') FROM tract_words WHERE repository = $1 AND seq = 3`, "1 documents are of no commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pgtest.New(t, base)
			hs := putTexts(t, s, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "the red fox", "a red sky", "foxes run")
			postgres.SettleWords(s) // numbered 1 to 3
			conn, err := pgx.Connect(ctx, base)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, tc.damage, s.Repository())
			require.NoError(t, err)
			conn.Close(ctx)

			r, err := store.Fsck(ctx, s)
			require.NoError(t, err)
			assert.Empty(t, r.Problems)
			assert.Equal(t, store.WordIndexRebuilt, r.WordIndex)
			assert.Contains(t, r.WordIndexProblem, tc.problem)

			got, indexed := searchIndex(t, s, "red")
			assert.True(t, indexed)
			assert.Equal(t, []dag.Hash{hs[1], hs[0]}, got)
			got, _ = searchIndex(t, s, "bogus")
			assert.Empty(t, got)
			got, _ = searchIndex(t, s, "fox*")
			assert.Equal(t, []dag.Hash{hs[2], hs[0]}, got)
			r, err = store.Fsck(ctx, s)
			require.NoError(t, err)
			assert.Equal(t, store.WordIndexOK, r.WordIndex)
		})
	}
}

// Erasing a commit (gc, reset --hard --force) deletes its document in the
// same transaction: no row of the index holds its words.
func TestWordIndex_ErasedCommitsLeaveNoWords(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	s := pgtest.New(t, base)
	hs := putTexts(t, s, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "kept words", "secret zanzibar words")
	require.NoError(t, s.Update(ctx, func(tx store.Tx) error {
		c, err := tx.Commit(hs[1])
		if err != nil {
			return err
		}
		if err := tx.DeleteCommit(hs[1]); err != nil {
			return err
		}
		return tx.DeleteBlob(c.Blob)
	}))
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var rows, holding int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE words @@ 'zanzibar'::tsquery)
		FROM tract_words WHERE repository = $1`, s.Repository()).Scan(&rows, &holding))
	assert.Equal(t, 1, rows)
	assert.Equal(t, 0, holding)
	got, _ := searchIndex(t, s, "words")
	assert.Equal(t, []dag.Hash{hs[0]}, got)
}

// The suite's searches with windows of a few documents: a search reads
// most documents through the query of the rest, and crosses the bounds
// of several windows.
func TestConformance_SearchInSmallWindows(t *testing.T) {
	base := pgtest.URL(t)
	for _, ws := range [][]int64{{2, 5}, {1}, {}} {
		t.Run(fmt.Sprint(ws), func(t *testing.T) {
			storetest.RunSearch(t, func(t *testing.T) store.Store {
				return pgtest.NewUnchecked(t, base, postgres.WithSearchWindows(ws...))
			})
		})
	}
}

// Dropping a repository drops its word index with the rest.
func TestDrop_DropsTheWordIndex(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	u := pgtest.RepositoryURL(t, base)
	s, err := postgres.Create(ctx, u)
	require.NoError(t, err)
	putTexts(t, s, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "gone soon", "also gone")
	name := s.Repository()
	s.Close()
	require.NoError(t, postgres.Drop(ctx, u))
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM tract_words WHERE repository = $1`, name).Scan(&n))
	assert.Zero(t, n)
}

// A bulk write (thousands of commits in one transaction, as an import
// makes) refreshes the planner's statistics once it committed: until
// then the planner took the new repository for one of a few rows, and
// fsck's lookups of its word documents scanned them all per commit. A
// turn's few commits leave the statistics to autovacuum.
func TestBulkWrite_RefreshesTheStatistics(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	s := pgtest.New(t, base)
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(ctx)
	analyzed := func() time.Time {
		var at *time.Time
		require.NoError(t, conn.QueryRow(ctx, `SELECT pg_stat_get_last_analyze_time('tract_words'::regclass)`).Scan(&at))
		if at == nil {
			return time.Time{}
		}
		return *at
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	before := analyzed()
	putTexts(t, s, at, "a few words", "of a turn")
	assert.Equal(t, before, analyzed(), "a few commits leave the statistics as they were")

	texts := make([]string, 2500)
	for i := range texts {
		texts[i] = fmt.Sprintf("imported message %d", i)
	}
	putTexts(t, s, at, texts...)
	assert.True(t, analyzed().After(before), "a bulk write refreshed the statistics")
}
