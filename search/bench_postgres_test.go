package search_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
	"github.com/tractdag/tract/store/postgres"
)

// BenchmarkIndexPostgres is BenchmarkIndex on a repository in the
// PostgreSQL database TRACT_TEST_POSTGRES_URL names (skipped without
// one), in a schema of its own so that the sizes of its tables are the
// repository's: it logs the import's time, the word index's share of
// the tables' size, and the time Migrate takes to build the index of a
// database without one; then it measures the queries through the index
// and by reading every text. Its log needs -v:
//
//	scripts/postgres -- go test -v -run - -bench 'BenchmarkIndexPostgres/n=100000$' ./search/
func BenchmarkIndexPostgres(b *testing.B) {
	base := os.Getenv("TRACT_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("needs TRACT_TEST_POSTGRES_URL (scripts/postgres -- go test …)")
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			db, sqlURL := benchSchema(b, base)
			_, err := postgres.Migrate(ctx, db)
			require.NoError(b, err)
			tr, err := tract.Init(db)
			require.NoError(b, err)
			start := time.Now()
			_, err = tr.Import(ctx, testinput.WordMessages(n))
			require.NoError(b, err)
			took := time.Since(start)
			require.NoError(b, tr.Close())
			conn, err := pgx.Connect(ctx, sqlURL)
			require.NoError(b, err)
			defer conn.Close(ctx)
			var words, wordsGIN, total int64
			require.NoError(b, conn.QueryRow(ctx, `SELECT pg_total_relation_size('tract_words'), pg_relation_size('tract_words_words'),
	(SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace)`).
				Scan(&words, &wordsGIN, &total))
			b.Logf("import of %d messages: %s; tables %d bytes, the word index's %d (%.1f%%; its GIN index %d)",
				n, took.Round(time.Millisecond), total, words, 100*float64(words)/float64(total), wordsGIN)

			// The upgrade of a database without the index: Migrate builds it.
			_, err = conn.Exec(ctx, `DROP TABLE tract_words; UPDATE tract_schema SET version = 2`)
			require.NoError(b, err)
			start = time.Now()
			_, err = postgres.Migrate(ctx, db)
			require.NoError(b, err)
			b.Logf("Migrate's build of the index of %d commits: %s", n, time.Since(start).Round(time.Millisecond))

			s, err := postgres.Open(ctx, db)
			require.NoError(b, err)
			b.Cleanup(func() { s.Close() })
			benchQueries(b, s)
		})
	}
}

// benchSchema creates a schema of its own in the database base names,
// dropped when b ends, and returns base's URL with it as the search path,
// for tract (db) and for pgx (sqlURL, without tract's parameters).
func benchSchema(b *testing.B, base string) (db, sqlURL string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(b, err)
	defer conn.Close(ctx)
	name := fmt.Sprintf("tract_bench_%d", time.Now().UnixNano())
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+name)
	require.NoError(b, err)
	b.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		require.NoError(b, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
		require.NoError(b, err)
	})
	u, err := url.Parse(base)
	require.NoError(b, err)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	sqlURL = u.String()
	// The publication of a million messages copies millions of rows in
	// statements that outlive the default reply timeout on a busy
	// machine.
	q.Set("reply_timeout", "0")
	u.RawQuery = q.Encode()
	return u.String(), sqlURL
}
