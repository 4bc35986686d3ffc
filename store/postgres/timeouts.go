package postgres

import (
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultConnectTimeout bounds the making of a connection (the dial, TLS
// and login) when neither the URL's connect_timeout (nor PGCONNECT_TIMEOUT)
// nor WithConnectTimeout sets it.
const DefaultConnectTimeout = 10 * time.Second

// DefaultReplyTimeout bounds the wait for the server's reply to each
// statement when neither the URL's reply_timeout nor WithReplyTimeout
// sets it.
const DefaultReplyTimeout = 30 * time.Second

// closeWait bounds Store.Close's wait for connections that broke.
const closeWait = time.Second

// keepAlive is the TCP keepalive of every connection: a peer that went
// away without a word (a crashed host, a dropped route) is noticed on an
// idle connection within about a minute, not the kernel's two hours.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}

// WithConnectTimeout bounds the making of each connection: the dial, TLS
// and login (default DefaultConnectTimeout; 0 waits as long as the
// network does). The URL's connect_timeout parameter (whole seconds, as
// libpq reads it), or PGCONNECT_TIMEOUT, wins when given.
func WithConnectTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d >= 0 {
			s.server.connectTimeout = d
		}
	}
}

// WithReplyTimeout bounds the wait for the server's reply to each
// statement of a transaction, its BEGIN and COMMIT included (default
// DefaultReplyTimeout; 0: no bound). A statement whose reply does not come
// in time ends the transaction, and the connection, with a *ServerError
// matching ErrTimeout (ErrCommitUnknown for a COMMIT). The URL's
// reply_timeout parameter (a duration such as 500ms or 2m, or whole
// seconds), which tract removes before pgx sees the URL, wins when given.
//
// The wait includes the server's work, and the wait for another writer of
// the repository to finish: set it above the longest transaction a
// repository sees (a gc or import of a large repository, say).
func WithReplyTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d >= 0 {
			s.server.replyTimeout = d
		}
	}
}

// WithContext makes ctx interrupt the transactions of the Store, as well
// as each call's own context: when it is cancelled (Ctrl-C, say), the
// statement waiting on the server ends at once, its transaction rolls
// back, and View or Update return an error matching ctx's
// (context.Canceled). A transaction begun after ctx was cancelled runs as
// without it (bounded by the reply timeout and its own context), so that a
// program on its way out can still record and read what the interruption
// left. Open and Create use the context they are given to connect.
func WithContext(ctx context.Context) Option {
	return func(s *Store) {
		if ctx != nil {
			s.ctx = ctx
		}
	}
}

// txContext returns the context of a transaction begun with ctx: ctx,
// ended too by the store's context (WithContext) unless that was done
// already. stop releases it.
func (s *Store) txContext(ctx context.Context) (_ context.Context, stop func()) {
	if s.ctx.Done() == nil || s.ctx.Err() != nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })
	return ctx, func() {
		unhook()
		cancel(nil)
	}
}

// beginQuery is the statement that begins a transaction of opts: BEGIN
// with its isolation level and access mode and, when a statement's wait
// has a bound (the reply timeout, ctx's deadline), SET LOCAL
// statement_timeout to the nearer one, in the same round trip (the simple
// query protocol runs both). The server then gives up on a statement that
// outlives the wait too, instead of running on (and holding its locks)
// for a client that has gone.
func (sv *server) beginQuery(ctx context.Context, opts pgx.TxOptions) string {
	q := "BEGIN ISOLATION LEVEL " + string(opts.IsoLevel)
	if opts.AccessMode != "" {
		q += " " + string(opts.AccessMode)
	}
	if d, ok := sv.statementTimeout(ctx); ok {
		q += "; SET LOCAL statement_timeout = " + strconv.FormatInt(timeoutMillis(d), 10)
	}
	return q
}

// statementTimeout is the bound of a statement of a transaction begun
// now with ctx: the reply timeout, or the time left before ctx's
// deadline when that is nearer; ok is false when neither bounds it.
func (sv *server) statementTimeout(ctx context.Context) (d time.Duration, ok bool) {
	d, ok = sv.replyTimeout, sv.replyTimeout > 0
	if deadline, has := ctx.Deadline(); has && (!ok || time.Until(deadline) < d) {
		d, ok = time.Until(deadline), true
	}
	return d, ok
}

// timeoutMillis renders d as a PostgreSQL timeout: whole milliseconds, at
// least 1 (0 would turn the timeout off), at most what the setting holds
// (a 32-bit count of milliseconds, about 24 days).
func timeoutMillis(d time.Duration) int64 {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return int64(min(max(ms, 1), math.MaxInt32))
}

// parseReplyTimeout reads the reply_timeout parameter: a Go duration, or
// whole seconds as connect_timeout is given.
func parseReplyTimeout(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("reply_timeout=%q: give a duration such as 500ms, 30s or 2m, or whole seconds (0: no bound)", v)
	}
	return d, nil
}

// dialer returns the function that dials the server: TCP keepalives on,
// and the connect timeout bounding the dial (pgx bounds the rest of the
// connection's making with it too).
func dialer(connectTimeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: connectTimeout, KeepAliveConfig: keepAlive}
	return d.DialContext
}

// serversAddr is how a message names the servers of cc: its host and
// those it falls back to (a URL of several hosts), comma-separated; several
// says there is more than one.
func serversAddr(cc *pgconn.Config) (addr string, several bool) {
	addrs := []string{serverAddr(cc.Host, cc.Port)}
	for _, fb := range cc.Fallbacks {
		// pgx falls back to TLS off for sslmode=prefer: the same server.
		if a := serverAddr(fb.Host, fb.Port); !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	return strings.Join(addrs, ","), len(addrs) > 1
}

// serverAddr is how a message names the server of host and port: host:port,
// or the path of a Unix socket.
func serverAddr(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", strings.TrimSuffix(host, "/"), port)
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
