package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// withHosts returns rawURL with its host replaced by the list hosts
// (host:port,host:port), as a URL of a primary and its standbys names
// them.
func withHosts(t *testing.T, rawURL string, hosts ...string) string {
	t.Helper()
	return pgtest.WithAddr(t, rawURL, strings.Join(hosts, ","))
}

// No server of a URL of several hosts answers: the error names them all,
// and why each failed.
func TestSeveralHosts_NoneAnswers(t *testing.T) {
	t.Parallel()
	a, b := pgtest.RefusedAddr(t), pgtest.RefusedAddr(t)
	u := withHosts(t, "postgres://tract:hunter2-secret@127.0.0.1:5432/tract?target_session_attrs=read-write&connect_timeout=2", a, b)
	_, err := postgres.Open(context.Background(), u)
	se := requireServerError(t, err, postgres.ErrUnreachable, a+","+b, "hunter2-secret")
	assert.NotErrorIs(t, err, postgres.ErrNoPrimary)
	assert.Contains(t, se.Error(), a+": connect: connection refused; "+b+": connect: connection refused")
}

// A server that is read-only, as a standby is: with
// target_session_attrs=read-write no connection is made to it, and the
// error says no server takes writes (ErrNoPrimary, beside
// ErrUnreachable); without, the first write is refused as ErrNoPrimary,
// and reads work. default_transaction_read_only stands in for a standby:
// the server answers "show transaction_read_only" with on, as one does.
func TestSeveralHosts_ReadOnlyServer(t *testing.T) {
	t.Parallel()
	base := pgtest.URL(t)
	direct := pgtest.New(t, base)
	pu, err := url.Parse(base)
	require.NoError(t, err)
	down := pgtest.RefusedAddr(t)
	readOnly := pgtest.WithQuery(t, withHosts(t, base, down, pu.Host),
		"options", "-c default_transaction_read_only=on", "repository", direct.Repository())

	_, err = postgres.Open(context.Background(), pgtest.WithQuery(t, readOnly, "target_session_attrs", "read-write"))
	requireServerError(t, err, postgres.ErrUnreachable, down+","+pu.Host, passwordOf(t, base))
	require.ErrorIs(t, err, postgres.ErrNoPrimary)
	assert.Contains(t, err.Error(), "takes writes")
	assert.Contains(t, err.Error(), down+": connect: connection refused; "+pu.Host+": read-only (a standby)")

	s, err := postgres.Open(context.Background(), readOnly)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Refs()
		return err
	}))
	err = s.Update(context.Background(), func(tx store.Tx) error {
		return tx.SetRef(refs.Ref{Name: "refs/heads/x", Target: refs.BranchRef("main")})
	})
	require.ErrorIs(t, err, postgres.ErrNoPrimary)
	var se *postgres.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, pu.Host, se.Server, "the server of the several that was connected to")
	assert.Equal(t, "25006", se.Code)
	assert.Contains(t, err.Error(), "is read-only")
	assert.NotContains(t, err.Error(), passwordOf(t, base))
}

// When the server goes away (a crash, a failover), one transaction fails
// with ErrConnectionLost and the next connects afresh: the store does not
// keep the other connections of its pool, as dead, for a failure each.
func TestUpdate_AfterConnectionLossTheNextConnectsAfresh(t *testing.T) {
	t.Parallel()
	_, p, s := openThrough(t)
	// Fill the pool: four transactions at once, each on a connection.
	const n = 4
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	errs := make(chan error, n)
	for range n {
		go func() {
			errs <- s.View(context.Background(), func(tx store.Tx) error {
				ready.Done()
				release.Wait()
				_, err := tx.Refs()
				return err
			})
		}()
	}
	ready.Wait()
	release.Done()
	for range n {
		require.NoError(t, <-errs)
	}

	p.Cut()
	write := func(name string) error {
		return s.Update(context.Background(), func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: "refs/heads/" + name, Target: refs.BranchRef("main")})
		})
	}
	requireServerError(t, write("lost"), postgres.ErrConnectionLost, proxyAddr(t, s), "")
	for i := range n {
		require.NoError(t, write("again"), "transaction %d after the loss", i+1)
	}
}
