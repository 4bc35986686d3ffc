package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

func TestConformance(t *testing.T) {
	base := pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.NewUnchecked(t, base) })
}

// With default_query_exec_mode=cache_statement in the URL, the store's
// own reads (the binary ones) run as statements prepared once per
// connection: the suite passes the same.
func TestConformance_PreparedStatements(t *testing.T) {
	base := pgtest.WithParam(t, pgtest.URL(t), "default_query_exec_mode", "cache_statement")
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.NewUnchecked(t, base) })
}

// incrementDepth reads the counters of key and writes them back one
// deeper: a read-modify-write that loses an update unless the store
// serializes it. wait, when set, runs between the read and the write.
func incrementDepth(s store.Store, key dag.Hash, wait func()) error {
	return s.Update(context.Background(), func(tx store.Tx) error {
		c, _, err := tx.Counters(key)
		if err != nil {
			return err
		}
		if wait != nil {
			wait()
		}
		c.Depth++
		return tx.PutCounters(key, c)
	})
}

// lockWaiters returns how many sessions of the test database wait for a
// lock.
func lockWaiters(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	var n int
	require.NoError(t, conn.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
	return n
}

// waitForLockWaiter polls until a session waits for a lock (a writer
// queued behind another), failing after ten seconds.
func waitForLockWaiter(t *testing.T, base string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), base)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for lockWaiters(t, conn) == 0 {
		require.True(t, time.Now().Before(deadline), "no writer ever waited for the repository's lock")
		time.Sleep(2 * time.Millisecond)
	}
}

// Writers of one ref take turns: while one is inside its transaction,
// between reading a ref and writing it, a second writer of the ref (on
// another connection pool, as another process has) waits at its read
// instead of reading the same tip, then sees the move and reports the
// conflict, as tract's callers do on refs.ErrReferenceChanged. Neither
// transaction is aborted and run again, and a writer of another
// repository in the same database does not wait.
func TestUpdate_WritersOfOneRefTakeTurns(t *testing.T) {
	base := pgtest.URL(t)
	first := pgtest.NewUnchecked(t, base)
	second, err := postgres.Open(context.Background(), urlOf(t, first))
	require.NoError(t, err)
	defer second.Close()
	elsewhere := pgtest.NewUnchecked(t, base)

	start, a, b := dag.Sum([]byte("start")), dag.Sum([]byte("a")), dag.Sum([]byte("b"))
	main := refs.BranchRef("main")
	require.NoError(t, first.Update(context.Background(), func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: main, Hash: start}) }))

	var runs [2]atomic.Int32
	cas := func(s store.Store, i int, expect, next dag.Hash, wait func()) error {
		return s.Update(context.Background(), func(tx store.Tx) error {
			cur, _, err := store.ResolveRef(tx, main)
			if err != nil {
				return err
			}
			runs[i].Add(1)
			wait()
			if cur != expect {
				return refs.ErrReferenceChanged
			}
			return tx.SetRef(refs.Ref{Name: main, Hash: next})
		})
	}
	inside, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo() // a failed check below must not leave the first writer waiting
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = cas(first, 0, start, a, func() { close(inside); <-release }) })
	<-inside
	wg.Go(func() { errs[1] = cas(second, 1, start, b, func() {}) })
	waitForLockWaiter(t, base)
	assert.Zero(t, runs[1].Load(), "the second writer read the ref while the first held it")
	require.NoError(t, elsewhere.Update(context.Background(), func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: main, Hash: b}) }),
		"a writer of another repository does not wait")
	letGo()
	wg.Wait()

	require.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], refs.ErrReferenceChanged, "the second writer saw the first one's move")
	assert.Equal(t, int32(1), runs[0].Load(), "no transaction ran twice")
	assert.Equal(t, int32(1), runs[1].Load(), "no transaction ran twice")
	require.NoError(t, second.View(context.Background(), func(tx store.Tx) error {
		got, _, err := store.ResolveRef(tx, main)
		assert.Equal(t, a, got)
		return err
	}))
}

// Many writers moving one ref at once, each a read-modify-write (the ref
// goes to the hash of what it held): none is lost and none is run twice,
// as writers of one ref take turns on its lock.
func TestUpdate_ConcurrentReadModifyWriteLosesNothing(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base)
	const name = "refs/heads/counter"
	start := dag.Sum([]byte("counter"))
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: name, Hash: start}) }))
	const writers, each = 8, 10
	var runs atomic.Int32
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				assert.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
					runs.Add(1)
					r, err := tx.Ref(name)
					if err != nil {
						return err
					}
					return tx.SetRef(refs.Ref{Name: name, Hash: dag.Sum(r.Hash[:])})
				}))
			}
		})
	}
	wg.Wait()
	want := start
	for range writers * each {
		want = dag.Sum(want[:])
	}
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		r, err := tx.Ref(name)
		assert.Equal(t, want, r.Hash, "every move is kept")
		return err
	}))
	assert.Equal(t, int32(writers*each), runs.Load(), "no transaction ran twice")
}

// A transaction the server aborts for a serialization failure (as
// CockroachDB does under contention) is run again, and its write kept.
func TestUpdate_RetriesSerializationFailure(t *testing.T) {
	s := pgtest.NewUnchecked(t, pgtest.URL(t), postgres.WithBackoff(time.Millisecond))
	key := dag.Sum([]byte("counter"))
	var runs atomic.Int32
	err := incrementDepth(s, key, nil)
	require.NoError(t, err)
	err = s.Update(context.Background(), func(tx store.Tx) error {
		if runs.Add(1) == 1 {
			return postgres.Abort(tx, "40001")
		}
		c, _, err := tx.Counters(key)
		if err != nil {
			return err
		}
		c.Depth++
		return tx.PutCounters(key, c)
	})
	require.NoError(t, err)
	assert.Equal(t, int32(2), runs.Load(), "the aborted transaction ran again")
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		c, _, err := tx.Counters(key)
		assert.Equal(t, int64(2), c.Depth)
		return err
	}))
}

// With one attempt allowed, an aborted transaction's error names the
// attempts and the SQLSTATE, and its write is not kept.
func TestUpdate_GivesUpAfterMaxAttempts(t *testing.T) {
	s := pgtest.NewUnchecked(t, pgtest.URL(t), postgres.WithMaxAttempts(1))
	key := dag.Sum([]byte("counter"))
	for _, code := range []string{"40001", "40P01"} {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.PutCounters(key, store.Counters{Depth: 7}); err != nil {
				return err
			}
			return postgres.Abort(tx, code)
		})
		assert.ErrorContains(t, err, "gave up after 1 attempts")
		assert.ErrorContains(t, err, code)
	}
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		_, ok, err := tx.Counters(key)
		assert.False(t, ok, "the aborted write is not kept")
		return err
	}))
}

// urlOf returns the URL of an open store, with the password that Path
// leaves out.
func urlOf(t *testing.T, s *postgres.Store) string {
	t.Helper()
	u, err := url.Parse(pgtest.URL(t))
	require.NoError(t, err)
	q := u.Query()
	q.Set("repository", s.Repository())
	u.RawQuery = q.Encode()
	return u.String()
}

// inSchema returns base with a search_path naming a new, empty schema (a
// PostgreSQL namespace) that is dropped when the test ends: a database
// of its own, as far as tract can tell.
func inSchema(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(ctx)
	name := fmt.Sprintf("tract_test_%d", time.Now().UnixNano())
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
		assert.NoError(t, err)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db := inSchema(t, pgtest.URL(t))

	_, err := postgres.Open(ctx, db)
	require.ErrorIs(t, err, postgres.ErrSchemaMissing)
	var se *postgres.SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, postgres.SchemaError{Have: 0, Want: postgres.SchemaVersion}, *se)
	_, err = postgres.Create(ctx, db)
	require.ErrorIs(t, err, postgres.ErrSchemaMissing, "creating a repository needs the schema too")

	// Several migrations at once: one creates, the others find it done.
	results := make([]*postgres.MigrateResult, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			var err error
			results[i], err = postgres.Migrate(ctx, db)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	created := 0
	for _, r := range results {
		require.NotNil(t, r)
		assert.Equal(t, postgres.SchemaVersion, r.To)
		if r.From == 0 {
			created++
		}
	}
	assert.Equal(t, 1, created, "exactly one migration created the schema")

	s, err := postgres.Create(ctx, db)
	require.NoError(t, err)
	require.NoError(t, s.Update(ctx, func(tx store.Tx) error { _, err := tx.PutBlob([]byte("kept")); return err }))
	s.Close()

	// Again: nothing changes, the repository stays.
	r, err := postgres.Migrate(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, postgres.MigrateResult{From: postgres.SchemaVersion, To: postgres.SchemaVersion}, *r)
	s, err = postgres.Open(ctx, db)
	require.NoError(t, err)
	require.NoError(t, s.View(ctx, func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("kept")))
		assert.True(t, ok)
		return err
	}))
	s.Close()

	// A schema from a newer tract is refused, by Open and by Migrate.
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "UPDATE tract_schema SET version = 99")
	require.NoError(t, err)
	conn.Close(ctx)
	_, err = postgres.Open(ctx, db)
	assert.ErrorIs(t, err, store.ErrNewerSchema)
	_, err = postgres.Migrate(ctx, db)
	assert.ErrorIs(t, err, store.ErrNewerSchema)
}

func TestSchemaError(t *testing.T) {
	for _, tc := range []struct {
		err  postgres.SchemaError
		is   error
		text string
	}{
		{postgres.SchemaError{Have: 0, Want: 2}, postgres.ErrSchemaMissing, "database has no tract schema (it needs version 2)"},
		{postgres.SchemaError{Have: 1, Want: 2}, postgres.ErrSchemaOld, "database schema is older than this tract: version 1, this tract needs 2"},
		{postgres.SchemaError{Have: 3, Want: 2}, store.ErrNewerSchema, "version 3, this tract knows up to 2"},
	} {
		assert.ErrorIs(t, &tc.err, tc.is)
		assert.ErrorContains(t, &tc.err, tc.text)
	}
}

// Open and Create on the test database's URL as given and with a query
// parameter of pgx's added (so one of them has a query besides tract's
// repository parameter, whatever TRACT_TEST_POSTGRES_URL holds).
func TestOpenAndCreate(t *testing.T) {
	ctx := context.Background()
	given := pgtest.URL(t)
	for name, base := range map[string]string{
		"URL as given":   given,
		"URL with query": pgtest.WithQuery(t, given, "application_name", "tract-test"),
	} {
		t.Run(name, func(t *testing.T) {
			u := pgtest.RepositoryURL(t, base)
			_, err := postgres.Open(ctx, u)
			assert.ErrorIs(t, err, store.ErrNotRepository)
			s, err := postgres.Create(ctx, u)
			require.NoError(t, err)
			assert.NotContains(t, s.Path(), passwordOf(t, u))
			assert.Contains(t, s.Path(), "repository="+s.Repository())
			s.Close()
			_, err = postgres.Create(ctx, u)
			assert.ErrorIs(t, err, store.ErrExists)
			s, err = postgres.Open(ctx, u)
			require.NoError(t, err)
			s.Close()

			for _, bad := range []string{"", "-x", "a b", strings.Repeat("a", 129)} {
				_, err := postgres.Open(ctx, pgtest.WithQuery(t, base, "repository", bad))
				assert.ErrorContains(t, err, "repository name", "%q", bad)
			}
			_, err = postgres.Open(ctx, pgtest.WithQuery(t, u, "repository", "other"))
			assert.ErrorContains(t, err, "repository parameter given 2 times")
		})
	}
}

// WithQuery adds parameters to a URL with a query and to one without,
// escaped; a parameter the URL has already is then given twice.
func TestWithQuery(t *testing.T) {
	tests := []struct {
		base  string
		pairs []string
		want  string
	}{
		{"postgres://u:pw@h:5432/db", []string{"repository", "a b"}, "postgres://u:pw@h:5432/db?repository=a%20b"},
		{"postgres://u:pw@h:5432/db?sslmode=disable", []string{"repository", "team/x"}, "postgres://u:pw@h:5432/db?repository=team%2Fx&sslmode=disable"},
		{"postgres://u:pw@h:5432/db?repository=a", []string{"repository", "b", "connect_timeout", "3"}, "postgres://u:pw@h:5432/db?connect_timeout=3&repository=a&repository=b"},
	}
	for _, tt := range tests {
		got := pgtest.WithQuery(t, tt.base, tt.pairs...)
		assert.Equal(t, tt.want, got)
		_, err := url.Parse(got)
		assert.NoError(t, err)
	}
}

// Repositories of one database are apart: what one holds, another does
// not see.
func TestRepositoriesAreSeparate(t *testing.T) {
	base := pgtest.URL(t)
	a, b := pgtest.New(t, base), pgtest.New(t, base)
	require.NoError(t, a.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.PutBlob([]byte("only in a")); err != nil {
			return err
		}
		return tx.AppendReflog(refs.HEAD, refs.Entry{Time: time.Unix(0, 0).UTC(), Action: refs.ActionCommit})
	}))
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("only in a")))
		assert.False(t, ok)
		names, _ := tx.ReflogNames()
		assert.Empty(t, names)
		return err
	}))
}

func passwordOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	pw, ok := u.User.Password()
	require.True(t, ok && pw != "", "the test database URL has a password")
	return pw
}

// No error shows the password: not a wrong one, not one that got in, for
// a server that refuses it, a host that is not there, a malformed URL or
// a database without the schema.
func TestErrorsNeverShowThePassword(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	good, err := url.Parse(base)
	require.NoError(t, err)
	const wrong = "not-the-Pa55word"
	right := passwordOf(t, base)
	withPassword := func(u url.URL, pw string) *url.URL {
		u.User = url.UserPassword(u.User.Username(), pw)
		return &u
	}
	wrongPassword := withPassword(*good, wrong).String()
	noHost := withPassword(*good, wrong)
	noHost.Host = "127.0.0.1:1"
	malformed := "postgres://tract:" + wrong + "@127.0.0.1:port/tract"
	noSchema := inSchema(t, base)

	for name, tc := range map[string]struct {
		url    string
		secret string
	}{
		"wrong password":   {wrongPassword, wrong},
		"no server":        {noHost.String(), wrong},
		"malformed URL":    {malformed, wrong},
		"schema missing":   {noSchema, right},
		"no repository":    {pgtest.WithQuery(t, base, "repository", "never-made"), right},
		"bad param":        {pgtest.WithQuery(t, base, "connect_timeout", "soon"), right},
		"bad repository":   {pgtest.WithQuery(t, base, "repository", "a b"), right},
		"unknown database": {strings.Replace(base, "/tract", "/nodb", 1), right},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := postgres.Open(ctx, tc.url)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), tc.secret)
			assert.NotContains(t, fmt.Sprintf("%+v", err), tc.secret)
			_, err = postgres.Migrate(ctx, tc.url)
			if err != nil {
				assert.NotContains(t, err.Error(), tc.secret)
			}
			assert.NotContains(t, postgres.Redact(tc.url), tc.secret)
		})
	}
	t.Run("wrong password is a connect error", func(t *testing.T) {
		_, err := postgres.Open(ctx, wrongPassword)
		assert.True(t, postgres.IsConnectError(err), "%v", err)
		assert.ErrorContains(t, err, "password authentication failed")
	})
}

// The server's URL is the repository's without tract's own parameters,
// the rest kept; a malformed one is an error without its password.
func TestServerURL(t *testing.T) {
	got, err := postgres.ServerURL("postgres://u:pw@127.0.0.1:5432/db?repository=team/a&reply_timeout=2s&sslmode=disable")
	require.NoError(t, err)
	assert.Equal(t, "postgres://u:pw@127.0.0.1:5432/db?sslmode=disable", got)
	_, err = postgres.ServerURL("postgres://u:secret@host:port/db")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret")
}

// A walk reads pages that grow while its rows are small and stay a few
// MiB when they are large: every row comes once, in key order, however
// the pages are cut.
func TestForEach_PagesOfSmallAndLargeRows(t *testing.T) {
	s := pgtest.New(t, pgtest.URL(t))
	var want []dag.Hash
	big := strings.Repeat("x", 40<<10)
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		for i := range 3000 {
			text := fmt.Sprint("small ", i)
			if i%10 == 0 {
				text = big + text // 300 texts of 40 KiB: 12 MiB of pages of blobs
			}
			h, err := tx.PutBlob([]byte(text))
			if err != nil {
				return err
			}
			c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: h, Time: time.Unix(int64(i), 0)}
			ch, err := tx.PutCommit(c)
			if err != nil {
				return err
			}
			want = append(want, ch)
		}
		return nil
	}))
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		var commits []dag.Hash
		require.NoError(t, tx.ForEachCommit(func(h dag.Hash, _ []byte) error {
			commits = append(commits, h)
			return nil
		}))
		assert.ElementsMatch(t, want, commits)
		assert.IsIncreasing(t, hexes(commits))
		var blobs []dag.Hash
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, data []byte) error {
			blobs = append(blobs, h)
			assert.Equal(t, h, dag.Sum(data))
			return nil
		}))
		assert.Len(t, blobs, 3000)
		assert.IsIncreasing(t, hexes(blobs))
		return nil
	}))
}

func hexes(hs []dag.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}
