package postgres

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

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

// WithContext makes ctx interrupt the transactions of the Store: when it
// is cancelled (Ctrl-C, say), the statement waiting on the server ends at
// once, its transaction rolls back, and View or Update return an error
// matching ctx's (context.Canceled). The transaction interfaces take no
// context, so this is how a caller stops them. A transaction begun after
// ctx was cancelled runs as without it (bounded by the reply timeout), so
// that a program on its way out can still record and read what the
// interruption left (as tract chat does with an interrupted turn). Open
// and Create use the context they are given to connect.
func WithContext(ctx context.Context) Option {
	return func(s *Store) {
		if ctx != nil {
			s.ctx = ctx
		}
	}
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

// detachIfDone returns ctx, or, when it is already done, a context with
// its values that is never cancelled (see WithContext).
func detachIfDone(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}
