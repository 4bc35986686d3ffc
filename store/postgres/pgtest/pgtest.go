// Package pgtest gives tests a fresh PostgreSQL repository each, in the
// database that TRACT_TEST_POSTGRES_URL names (scripts/postgres starts a
// throwaway one and sets it). Without the variable the tests skip, saying
// how to run them; under CI=true a missing database fails the test
// instead, so a CI that lost its database does not pass by skipping.
//
// Each repository has a random name, so tests that use one may run in
// parallel, and is dropped when its test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/storetest"
)

// EnvURL is the variable that names the test database.
const EnvURL = "TRACT_TEST_POSTGRES_URL"

// URL returns the test database's URL, with the schema migrated, or skips
// t when there is none (fails it under CI=true).
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		msg := "PostgreSQL tests need a database: run them with 'scripts/postgres -- go test ./...' " +
			"(it starts a throwaway cluster), or set " + EnvURL + " to a postgres:// URL"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	_, err := postgres.Migrate(context.Background(), u)
	require.NoError(t, err)
	return u
}

// RepositoryURL returns base (a URL from URL) naming a repository no other
// test uses. It is not created (postgres.Create or tract.Init does that);
// it is dropped when the test ends.
func RepositoryURL(t testing.TB, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("repository", "test-"+randomName())
	u.RawQuery = encode(q)
	s := u.String()
	t.Cleanup(func() {
		if err := postgres.Drop(context.Background(), s); err != nil {
			t.Errorf("drop test repository: %v", err)
		}
	})
	return s
}

// WithQuery returns the database URL base with the query parameters
// pairs (name, value, name, value, …) added to the ones it has, each
// escaped: a name it has already is then given twice. Build test URLs
// with it rather than by appending "?name=value", which breaks a base
// that has a query of its own (?sslmode=disable).
func WithQuery(t testing.TB, base string, pairs ...string) string {
	t.Helper()
	require.True(t, len(pairs)%2 == 0, "WithQuery takes name, value pairs")
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	for i := 0; i < len(pairs); i += 2 {
		q.Add(pairs[i], pairs[i+1])
	}
	u.RawQuery = encode(q)
	return u.String()
}

// New creates a fresh repository in the database base names and returns
// it open. When the test ends it is checked with store.Fsck (failing the
// test on any problem, as storetest.NewBolt does for a file), dropped and
// closed.
func New(t testing.TB, base string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	return create(t, base, true, opts)
}

// NewUnchecked is New without the check, for the conformance suite, whose
// tests leave deliberate damage behind.
func NewUnchecked(t testing.TB, base string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	return create(t, base, false, opts)
}

func create(t testing.TB, base string, check bool, opts []postgres.Option) *postgres.Store {
	t.Helper()
	s, err := postgres.Create(context.Background(), RepositoryURL(t, base), opts...)
	require.NoError(t, err)
	if check {
		storetest.CheckOnCleanup(t, s)
	} else {
		t.Cleanup(func() { s.Close() })
	}
	return s
}

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// encode is q.Encode with a space written %20, not '+': pgx, as libpq,
// reads '+' in a URL's query as a plus sign. (Encode writes a plus sign
// as %2B, so every '+' it writes is a space.)
func encode(q url.Values) string { return strings.ReplaceAll(q.Encode(), "+", "%20") }

// WaitForQuery waits, up to a minute, until a server process serving a
// connection whose application_name is app runs a statement that starts
// with prefix (pg_stat_activity's query, compared case-insensitively),
// and fails t when none does. base is the URL of URL.
func WaitForQuery(t testing.TB, base, app, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND state = 'active' AND lower(query) LIKE lower($2) || '%'`, app, prefix).Scan(&n)
		if ctx.Err() != nil {
			t.Fatalf("no statement starting %q of application %q within a minute", prefix, app)
		}
		require.NoError(t, err)
		if n > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
