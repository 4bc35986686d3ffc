package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// tiny is the timeout of the tests that wait for one to run out.
const tiny = 200 * time.Millisecond

// commitMessage is the COMMIT that ends a transaction's last batch of
// writes on the wire: the statement of a Parse message.
var commitMessage = []byte("\x00COMMIT\x00")

func TestTimeouts_DefaultsOptionsAndURL(t *testing.T) {
	const base = "postgres://u:pw@127.0.0.1:5432/db"
	for name, tc := range map[string]struct {
		url            string
		opts           []postgres.Option
		env            string
		connect, reply time.Duration
	}{
		"defaults":               {url: base, connect: postgres.DefaultConnectTimeout, reply: postgres.DefaultReplyTimeout},
		"options":                {url: base, opts: []postgres.Option{postgres.WithConnectTimeout(time.Second), postgres.WithReplyTimeout(time.Minute)}, connect: time.Second, reply: time.Minute},
		"zero options":           {url: base, opts: []postgres.Option{postgres.WithConnectTimeout(0), postgres.WithReplyTimeout(0)}, connect: 0, reply: 0},
		"URL wins over options":  {url: base + "?connect_timeout=3&reply_timeout=250ms", opts: []postgres.Option{postgres.WithConnectTimeout(time.Hour), postgres.WithReplyTimeout(time.Hour)}, connect: 3 * time.Second, reply: 250 * time.Millisecond},
		"reply in seconds":       {url: base + "?reply_timeout=7", connect: postgres.DefaultConnectTimeout, reply: 7 * time.Second},
		"URL zero means no wait": {url: base + "?connect_timeout=0&reply_timeout=0", opts: []postgres.Option{postgres.WithConnectTimeout(time.Hour)}, connect: 0, reply: 0},
		"PGCONNECT_TIMEOUT":      {url: base, env: "4", opts: []postgres.Option{postgres.WithConnectTimeout(time.Hour)}, connect: 4 * time.Second, reply: postgres.DefaultReplyTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PGCONNECT_TIMEOUT", tc.env)
			connect, reply, err := postgres.Timeouts(tc.url, tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, tc.connect, connect, "connect timeout")
			assert.Equal(t, tc.reply, reply, "reply timeout")
		})
	}
	t.Run("bad reply_timeout", func(t *testing.T) {
		_, _, err := postgres.Timeouts(base + "?reply_timeout=soon")
		assert.ErrorContains(t, err, `reply_timeout="soon"`)
		assert.NotContains(t, err.Error(), "pw")
	})
}

// requireServerError checks that err is a *ServerError of kind naming the
// server at addr and the database, and not the password.
func requireServerError(t *testing.T, err error, kind error, addr, password string) *postgres.ServerError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, kind, "%v", err)
	var se *postgres.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, addr, se.Server)
	assert.Contains(t, err.Error(), addr)
	assert.Contains(t, err.Error(), "(database tract)")
	if len(password) >= 3 {
		assert.NotContains(t, err.Error(), password)
	}
	for _, other := range []error{postgres.ErrUnreachable, postgres.ErrTimeout, postgres.ErrConnectionLost,
		postgres.ErrCommitUnknown, postgres.ErrTooManyConnections, postgres.ErrAuthFailed} {
		if other != kind {
			assert.NotErrorIs(t, err, other)
		}
	}
	return se
}

// Open and Migrate of a server that cannot be reached, or that refuses
// the login, fail with the kind of error that says so, bounded by the
// connect timeout.
func TestOpen_ServerUnreachableOrRefusing(t *testing.T) {
	t.Parallel()
	const base = "postgres://tract:s3cret-pw@127.0.0.1:5432/tract"
	for name, tc := range map[string]struct {
		addr string
		kind error
		says string
	}{
		"refused":              {pgtest.RefusedAddr(t), postgres.ErrUnreachable, "connection refused"},
		"closes at once":       {pgtest.ClosingServer(t), postgres.ErrUnreachable, "cannot reach"},
		"never answers":        {pgtest.HangServer(t), postgres.ErrUnreachable, "no reply within 200ms"},
		"too many connections": {pgtest.RefusingServer(t, "53300", "sorry, too many clients already"), postgres.ErrTooManyConnections, "sorry, too many clients already (SQLSTATE 53300)"},
		"wrong password":       {pgtest.RefusingServer(t, "28P01", `password authentication failed for user "tract"`), postgres.ErrAuthFailed, `refused user "tract"`},
		"no pg_hba entry":      {pgtest.RefusingServer(t, "28000", `no pg_hba.conf entry for host "127.0.0.1"`), postgres.ErrAuthFailed, "pg_hba.conf"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u := pgtest.WithAddr(t, base, tc.addr)
			_, err := postgres.Open(context.Background(), u, postgres.WithConnectTimeout(tiny))
			requireServerError(t, err, tc.kind, tc.addr, "s3cret-pw")
			assert.ErrorContains(t, err, tc.says)
			_, err = postgres.Migrate(context.Background(), u, postgres.WithConnectTimeout(tiny))
			requireServerError(t, err, tc.kind, tc.addr, "s3cret-pw")
		})
	}
}

func TestOpen_ConnectTimeoutOfURLWins(t *testing.T) {
	t.Parallel()
	addr := pgtest.HangServer(t)
	u := pgtest.WithAddr(t, "postgres://tract:s3cret-pw@127.0.0.1:5432/tract?connect_timeout=1", addr)
	_, err := postgres.Open(context.Background(), u, postgres.WithConnectTimeout(time.Hour))
	se := requireServerError(t, err, postgres.ErrUnreachable, addr, "s3cret-pw")
	assert.Equal(t, time.Second, se.Wait)
}

// openThrough creates a repository, and opens it again through a proxy
// with a tiny reply timeout.
func openThrough(t *testing.T, opts ...postgres.Option) (*postgres.Store, *pgtest.Proxy, *postgres.Store) {
	t.Helper()
	base := pgtest.URL(t)
	direct := pgtest.New(t, base)
	p := pgtest.NewProxy(t, base)
	u := pgtest.WithParam(t, p.URL(t, base), "repository", direct.Repository())
	s, err := postgres.Open(context.Background(), u, append([]postgres.Option{postgres.WithReplyTimeout(tiny)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return direct, p, s
}

func proxyAddr(t *testing.T, s *postgres.Store) string {
	t.Helper()
	u, err := url.Parse(s.Path())
	require.NoError(t, err)
	return u.Host
}

// A server that stops answering in the middle of a transaction ends it
// with ErrTimeout after the reply timeout; nothing of it is written, and
// the store works again once the server answers.
func TestUpdate_ServerHangsMidTransaction(t *testing.T) {
	t.Parallel()
	direct, p, s := openThrough(t)
	pw := passwordOf(t, pgtest.URL(t))
	var h dag.Hash
	err := s.Update(context.Background(), func(tx store.Tx) error {
		var err error
		if h, err = tx.PutBlob([]byte("never written")); err != nil {
			return err
		}
		// A read of what the transaction has not written goes to the
		// server (what it wrote, it answers itself), the write ahead of it.
		if _, err := tx.HasCommit(h); err != nil {
			return err
		}
		p.Freeze()
		_, err = tx.HasCommit(h)
		return err
	})
	se := requireServerError(t, err, postgres.ErrTimeout, proxyAddr(t, s), pw)
	assert.Equal(t, tiny, se.Wait)
	assert.ErrorContains(t, err, "no reply from the database server")
	assert.ErrorContains(t, err, "nothing of it was written")

	p.Thaw()
	require.NoError(t, direct.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(h)
		assert.False(t, ok, "a write of the transaction that timed out")
		return err
	}))
	require.NoError(t, s.Update(context.Background(), func(tx store.Tx) error { _, err := tx.PutBlob([]byte("later")); return err }))
}

// Every kind of statement is bounded: the writer lock, a batch of writes,
// a read, a View.
func TestReplyTimeout_EveryStatement(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		op string
		fn func(s *postgres.Store, p *pgtest.Proxy) error
	}{
		"begin": {"BEGIN", func(s *postgres.Store, p *pgtest.Proxy) error {
			p.Freeze()
			return s.View(context.Background(), func(store.Tx) error { return nil })
		}},
		"writer lock": {"waiting for the repository's writer lock", func(s *postgres.Store, p *pgtest.Proxy) error {
			p.FreezeAt([]byte("pg_advisory_xact_lock_shared"))
			return s.Update(context.Background(), func(store.Tx) error { return nil })
		}},
		"writes sent before a read": {"sending writes", func(s *postgres.Store, p *pgtest.Proxy) error {
			return s.Update(context.Background(), func(tx store.Tx) error {
				p.Freeze()
				if _, err := tx.PutBlob([]byte("queued")); err != nil {
					return err
				}
				_, err := tx.HasCommit(dag.Sum(nil))
				return err
			})
		}},
		"read in a view": {"a query", func(s *postgres.Store, p *pgtest.Proxy) error {
			return s.View(context.Background(), func(tx store.Tx) error {
				p.Freeze()
				_, err := tx.Refs()
				return err
			})
		}},
		"walk": {"a query", func(s *postgres.Store, p *pgtest.Proxy) error {
			return s.View(context.Background(), func(tx store.Tx) error {
				p.Freeze()
				return tx.ForEachCommit(func(dag.Hash, []byte) error { return nil })
			})
		}},
		"one row": {"a query", func(s *postgres.Store, p *pgtest.Proxy) error {
			return s.View(context.Background(), func(tx store.Tx) error {
				p.Freeze()
				_, err := tx.HasCommit(dag.Sum(nil))
				return err
			})
		}},
		"pack copy": {"COPY", func(s *postgres.Store, p *pgtest.Proxy) error {
			return s.Update(context.Background(), func(tx store.Tx) error {
				ptx := tx.(store.PackTx)
				id, err := ptx.CreatePack(time.Now())
				if err != nil {
					return err
				}
				p.FreezeAt([]byte("tract_pack_entries")) // the COPY
				return ptx.AppendPack(id, time.Now(), []store.PackEntry{{Kind: store.PackBlob, Hash: dag.Sum([]byte("x")), Value: []byte("x")}})
			})
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, p, s := openThrough(t)
			err := tc.fn(s, p)
			se := requireServerError(t, err, postgres.ErrTimeout, proxyAddr(t, s), "")
			assert.Equal(t, tc.op, se.Op)
		})
	}
}

// When the reply to COMMIT never comes, the outcome is unknown: here the
// server did commit, and the error says to look before doing it again.
func TestUpdate_CommitReplyLost(t *testing.T) {
	t.Parallel()
	direct, p, s := openThrough(t)
	p.FreezeAt(commitMessage)
	err := s.Update(context.Background(), func(tx store.Tx) error {
		return tx.SetRef(refs.Ref{Name: "refs/heads/landed", Target: refs.BranchRef("main")})
	})
	se := requireServerError(t, err, postgres.ErrCommitUnknown, proxyAddr(t, s), "")
	assert.Equal(t, tiny, se.Wait)
	assert.ErrorContains(t, err, "the commit may or may not have been written")

	p.Thaw()
	require.NoError(t, direct.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Ref("refs/heads/landed")
		return err
	}), "the server committed; only its reply was lost")
}

// A connection that breaks mid-transaction (a crashed server, a cut
// network) ends it with ErrConnectionLost, and nothing is written.
func TestUpdate_ConnectionCutMidTransaction(t *testing.T) {
	t.Parallel()
	direct, p, s := openThrough(t, postgres.WithReplyTimeout(time.Minute))
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.SetRef(refs.Ref{Name: "refs/heads/cut", Target: refs.BranchRef("main")}); err != nil {
			return err
		}
		if _, err := tx.Refs(); err != nil {
			return err
		}
		p.Cut()
		_, err := tx.Refs()
		return err
	})
	requireServerError(t, err, postgres.ErrConnectionLost, proxyAddr(t, s), "")
	require.NoError(t, direct.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Ref("refs/heads/cut")
		assert.ErrorIs(t, err, store.ErrNotFound)
		return nil
	}))
}

// WithContext stops a transaction waiting on a server that does not
// answer, with no reply timeout, when the context is cancelled: the error
// is the context's, not a server error.
func TestWithContext_CancelStopsAWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	_, p, s := openThrough(t, postgres.WithReplyTimeout(0), postgres.WithContext(ctx))
	err := s.View(context.Background(), func(tx store.Tx) error {
		p.Freeze()
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := tx.Refs()
		return err
	})
	require.ErrorIs(t, err, context.Canceled)
	var se *postgres.ServerError
	assert.False(t, errors.As(err, &se), "%v", err)

	// A program on its way out may still read and write.
	p.Thaw()
	assert.NoError(t, s.Update(context.Background(), func(tx store.Tx) error {
		return tx.SetRef(refs.Ref{Name: "refs/heads/after", Target: refs.BranchRef("main")})
	}))
}

// SQL errors are not server errors: a serialization failure still
// retries, a missing row is still store.ErrNotFound.
func TestClassify_LeavesSQLErrorsAlone(t *testing.T) {
	t.Parallel()
	_, _, s := openThrough(t, postgres.WithMaxAttempts(2), postgres.WithBackoff(time.Microsecond))
	err := s.Update(context.Background(), func(tx store.Tx) error { return postgres.Abort(tx, "40001") })
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "gave up after 2 attempts"), "%v", err)
	var se *postgres.ServerError
	assert.False(t, errors.As(err, &se), "%v", err)
	err = s.View(context.Background(), func(tx store.Tx) error { _, err := tx.Blob(dag.Sum([]byte("absent"))); return err })
	assert.ErrorIs(t, err, store.ErrNotFound)
}
