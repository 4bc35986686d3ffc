package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// benchBackend is where a benchmark keeps its repositories: a bbolt file
// in a temporary directory, or a repository in the PostgreSQL database
// that TRACT_TEST_POSTGRES_URL names.
type benchBackend struct {
	// base is the database's URL; empty for the file.
	base string
}

// onBackends runs fn as two sub-benchmarks, "file" and "postgres", so
// that one run measures both side by side. The postgres one skips
// without TRACT_TEST_POSTGRES_URL; with durable set it also skips when
// the server does not make a commit durable (fsync and synchronous_commit
// on), as the throwaway cluster of scripts/postgres does not unless
// started with TRACT_PG_DURABLE=1.
func onBackends(b *testing.B, durable bool, fn func(b *testing.B, be benchBackend)) {
	b.Run("file", func(b *testing.B) { fn(b, benchBackend{}) })
	b.Run("postgres", func(b *testing.B) {
		base := pgtest.URL(b)
		if durable {
			requireDurable(b, base)
		}
		fn(b, benchBackend{base: base})
	})
}

// requireDurable skips b unless the server at url syncs every commit.
func requireDurable(b *testing.B, url string) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(b, err)
	defer conn.Close(ctx)
	var fsync, syncCommit string
	require.NoError(b, conn.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&fsync, &syncCommit))
	if fsync != "on" || syncCommit != "on" {
		b.Skipf("the server runs with fsync=%s, synchronous_commit=%s: durable commits need both on "+
			"(TRACT_PG_DURABLE=1 scripts/postgres -- go test -bench ...)", fsync, syncCommit)
	}
}

// location returns where a new repository goes, not yet created: a file
// path, or a database URL naming a repository no other benchmark uses
// (dropped when b ends).
func (be benchBackend) location(b *testing.B) string {
	b.Helper()
	if be.base == "" {
		return filepath.Join(b.TempDir(), "tract.db")
	}
	return pgtest.RepositoryURL(b, be.base)
}

// init creates a repository and opens it, closed when b ends. durable
// selects fsync after each transaction of a file (the default) instead of
// the no-sync mode of tests; a database is as durable as its server.
func (be benchBackend) init(b *testing.B, durable bool) *tract.Tract {
	b.Helper()
	var opts []tract.Option
	if !durable {
		opts = append(opts, tract.WithNoSync())
	}
	tr, err := tract.Init(be.location(b), opts...)
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	return tr
}

// isFile reports whether be keeps repositories in files.
func (be benchBackend) isFile() bool { return be.base == "" }

// BenchmarkPostgresCommitBound measures the server's own bound on a
// durable commit, beside BenchmarkCommitDurable/postgres: a transaction
// that inserts one row and commits, all in one round trip (a pipeline:
// BEGIN, INSERT, COMMIT, one Sync), each waiting for the server's WAL
// flush. rows=6 inserts six rows of about a commit's size, as many as a
// tract commit writes (its text, commit, counters, branch ref and two
// reflog entries). Over loopback its rate is what the disk's flushes
// allow; a tract commit adds its reads (the refs, the parent's counters)
// and the round trips that carry them.
func BenchmarkPostgresCommitBound(b *testing.B) {
	base := pgtest.URL(b)
	requireDurable(b, base)
	ctx := context.Background()
	for _, rows := range []int{1, 6} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			conn, err := pgx.Connect(ctx, base)
			require.NoError(b, err)
			defer conn.Close(ctx)
			table := pgx.Identifier{fmt.Sprintf("bench_bound_%d_%d", rows, time.Now().UnixNano())}.Sanitize()
			_, err = conn.Exec(ctx, `CREATE TABLE `+table+` (k bigint PRIMARY KEY, v bytea NOT NULL)`)
			require.NoError(b, err)
			defer conn.Exec(ctx, `DROP TABLE `+table)
			value := make([]byte, 100)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var batch pgx.Batch
				batch.Queue("BEGIN")
				for r := range rows {
					batch.Queue(`INSERT INTO `+table+` VALUES ($1, $2)`, int64(i*rows+r), value)
				}
				batch.Queue("COMMIT")
				if err := conn.SendBatch(ctx, &batch).Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}
