package postgres_test

import (
	"context"
	"errors"
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

// incrementDepth reads the counters of key and writes them back one
// deeper: a read-modify-write that loses an update unless the store
// serializes it. wait, when set, runs between the read and the write.
func incrementDepth(s store.Store, key dag.Hash, wait func()) error {
	return s.Update(func(tx store.Tx) error {
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

// Two Updates that both read a row before either writes it: PostgreSQL
// aborts one (SQLSTATE 40001), Update runs it again, and neither write is
// lost.
func TestUpdate_RetriesSerializationFailure(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base, postgres.WithBackoff(time.Millisecond))
	key := dag.Sum([]byte("counter"))
	var runs atomic.Int32
	var bothRead sync.WaitGroup
	bothRead.Add(2)
	var wg sync.WaitGroup
	for range 2 {
		var once sync.Once
		wg.Go(func() {
			err := incrementDepth(s, key, func() {
				runs.Add(1)
				once.Do(func() { bothRead.Done(); bothRead.Wait() })
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, s.View(func(tx store.Tx) error {
		c, ok, err := tx.Counters(key)
		require.True(t, ok)
		assert.Equal(t, int64(2), c.Depth, "both increments are kept")
		return err
	}))
	assert.GreaterOrEqual(t, runs.Load(), int32(3), "one transaction ran again")
}

// With one attempt allowed, the loser of the same race gets the
// serialization failure, named as such, and its write is not kept.
func TestUpdate_GivesUpAfterMaxAttempts(t *testing.T) {
	base := pgtest.URL(t)
	s := pgtest.NewUnchecked(t, base, postgres.WithMaxAttempts(1))
	key := dag.Sum([]byte("counter"))
	var bothRead sync.WaitGroup
	bothRead.Add(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			errs[i] = incrementDepth(s, key, func() { bothRead.Done(); bothRead.Wait() })
		})
	}
	wg.Wait()
	failed := errors.Join(errs...)
	require.Error(t, failed, "one of the two must lose")
	assert.True(t, errs[0] == nil || errs[1] == nil, "one of the two must win: %v", failed)
	assert.ErrorContains(t, failed, "gave up after 1 attempts")
	assert.ErrorContains(t, failed, "40001")
	require.NoError(t, s.View(func(tx store.Tx) error {
		c, _, err := tx.Counters(key)
		assert.Equal(t, int64(1), c.Depth)
		return err
	}))
}

// A compare-and-swap of a ref from two stores (two connection pools, as
// two processes have): of two writers that read the same tip, one moves
// the ref and the other, run again, sees the move and reports the
// conflict, as tract's callers do on refs.ErrReferenceChanged.
func TestRefCompareAndSwapAcrossConnections(t *testing.T) {
	base := pgtest.URL(t)
	first := pgtest.NewUnchecked(t, base)
	second, err := postgres.Open(context.Background(), urlOf(t, first))
	require.NoError(t, err)
	defer second.Close()

	start, a, b := dag.Sum([]byte("start")), dag.Sum([]byte("a")), dag.Sum([]byte("b"))
	main := refs.BranchRef("main")
	require.NoError(t, first.Update(func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: main, Hash: start}) }))

	cas := func(s store.Store, expect, next dag.Hash, wait func()) error {
		return s.Update(func(tx store.Tx) error {
			cur, _, err := store.ResolveRef(tx, main)
			if err != nil {
				return err
			}
			wait()
			if cur != expect {
				return refs.ErrReferenceChanged
			}
			return tx.SetRef(refs.Ref{Name: main, Hash: next})
		})
	}
	var bothRead sync.WaitGroup
	bothRead.Add(2)
	barrier := func() func() {
		var once sync.Once
		return func() { once.Do(func() { bothRead.Done(); bothRead.Wait() }) }
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = cas(first, start, a, barrier()) })
	wg.Go(func() { errs[1] = cas(second, start, b, barrier()) })
	wg.Wait()

	var winner dag.Hash
	switch {
	case errs[0] == nil && errors.Is(errs[1], refs.ErrReferenceChanged):
		winner = a
	case errs[1] == nil && errors.Is(errs[0], refs.ErrReferenceChanged):
		winner = b
	default:
		t.Fatalf("want one winner and one conflict, got %v and %v", errs[0], errs[1])
	}
	require.NoError(t, second.View(func(tx store.Tx) error {
		got, _, err := store.ResolveRef(tx, main)
		assert.Equal(t, winner, got)
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
	assert.ErrorContains(t, err, "tract migrate")
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
	require.NoError(t, s.Update(func(tx store.Tx) error { _, err := tx.PutBlob([]byte("kept")); return err }))
	s.Close()

	// Again: nothing changes, the repository stays.
	r, err := postgres.Migrate(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, postgres.MigrateResult{From: postgres.SchemaVersion, To: postgres.SchemaVersion}, *r)
	s, err = postgres.Open(ctx, db)
	require.NoError(t, err)
	require.NoError(t, s.View(func(tx store.Tx) error {
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
		{postgres.SchemaError{Have: 0, Want: 2}, postgres.ErrSchemaMissing, "create it with 'tract migrate'"},
		{postgres.SchemaError{Have: 1, Want: 2}, postgres.ErrSchemaOld, "version 1, this tract needs 2: upgrade it with 'tract migrate'"},
		{postgres.SchemaError{Have: 3, Want: 2}, store.ErrNewerSchema, "version 3, this tract knows up to 2"},
	} {
		assert.ErrorIs(t, &tc.err, tc.is)
		assert.ErrorContains(t, &tc.err, tc.text)
	}
}

func TestOpenAndCreate(t *testing.T) {
	ctx := context.Background()
	u := pgtest.RepositoryURL(t, pgtest.URL(t))
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

	base := pgtest.URL(t)
	for _, bad := range []string{"", "-x", "a b", strings.Repeat("a", 129)} {
		_, err := postgres.Open(ctx, base+"?repository="+url.QueryEscape(bad))
		assert.ErrorContains(t, err, "repository name", "%q", bad)
	}
	_, err = postgres.Open(ctx, u+"&repository=other")
	assert.ErrorContains(t, err, "repository parameter given 2 times")
}

// Repositories of one database are apart: what one holds, another does
// not see.
func TestRepositoriesAreSeparate(t *testing.T) {
	base := pgtest.URL(t)
	a, b := pgtest.New(t, base), pgtest.New(t, base)
	require.NoError(t, a.Update(func(tx store.Tx) error {
		if _, err := tx.PutBlob([]byte("only in a")); err != nil {
			return err
		}
		return tx.AppendReflog(refs.HEAD, refs.Entry{Time: time.Unix(0, 0).UTC(), Action: refs.ActionCommit})
	}))
	require.NoError(t, b.View(func(tx store.Tx) error {
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
		"no repository":    {base + "?repository=never-made", right},
		"bad param":        {base + "?connect_timeout=soon", right},
		"bad repository":   {base + "?repository=a%20b", right},
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
