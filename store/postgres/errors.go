package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Sentinel errors of a database server that is unreachable, slow, gone or
// refusing. A *ServerError matches one of them with errors.Is.
var (
	// ErrUnreachable is returned when no connection to the server could
	// be made: the connection was refused, the host name did not resolve,
	// the server did not answer within the connect timeout, or it closed
	// the connection before it was ready.
	ErrUnreachable = errors.New("database server unreachable")
	// ErrTimeout is returned when the server sent no reply to a statement
	// within the reply timeout (WithReplyTimeout, reply_timeout), or
	// before the deadline of the transaction's context (the error then
	// matches context.DeadlineExceeded too), or cancelled it for the
	// statement_timeout either set. The statement was abandoned and its
	// transaction rolled back.
	ErrTimeout = errors.New("no reply from the database server in time")
	// ErrConnectionLost is returned when the connection broke in the
	// middle of a transaction, before its COMMIT was sent: the server
	// rolls the transaction back, so nothing of it was written.
	ErrConnectionLost = errors.New("connection to the database server lost")
	// ErrCommitUnknown is returned when the connection broke, or the
	// reply timeout ran out, while COMMIT was in flight: the transaction
	// may or may not have been committed. Look (at the branch's log)
	// before doing the work again.
	ErrCommitUnknown = errors.New("outcome of the commit unknown")
	// ErrTooManyConnections is returned when the server refused a
	// connection because it has as many as it allows (SQLSTATE 53300).
	ErrTooManyConnections = errors.New("database server has too many connections")
	// ErrAuthFailed is returned when the server refused the user or the
	// password (SQLSTATE 28P01 or 28000).
	ErrAuthFailed = errors.New("database authentication failed")
	// ErrNoPrimary is returned when the server connected to refused a
	// write as read-only (SQLSTATE 25006: a standby). It is also matched,
	// beside ErrUnreachable, when no connection could be made because
	// every server reached was read-only, where the URL's
	// target_session_attrs (read-write, primary) asks for the one that
	// takes writes: with a URL of a primary and its standbys, what a
	// command meets after the primary failed and before a standby is
	// promoted; run it again once one is.
	ErrNoPrimary = errors.New("no database server that takes writes")
)

// ServerError is a failure to reach or to talk to the database server,
// of one of the kinds the sentinels above name. Its message names the
// server (host:port) and the database, never the password, and says what
// to do.
type ServerError struct {
	// Kind is the sentinel of the failure: ErrUnreachable, ErrTimeout,
	// ErrConnectionLost, ErrCommitUnknown, ErrTooManyConnections,
	// ErrAuthFailed or ErrNoPrimary. errors.Is(err, Kind) holds.
	Kind error
	// Server is the server's host:port (or a Unix socket's path). Of a
	// URL that names several hosts, it is the one connected to when a
	// connection broke, and all of them, comma-separated, when none
	// could be connected to.
	Server string
	// Database is the database's name.
	Database string
	// User is the user tract connected as.
	User string
	// Op says what tract was doing: "connect", "BEGIN", "COMMIT", "a
	// query", "sending writes", "COPY", "waiting for the repository's
	// writer lock".
	Op string
	// Wait is the timeout that ran out, when one did (ErrTimeout; an
	// ErrUnreachable or ErrCommitUnknown a timeout caused); else 0. An
	// ErrTimeout with Wait 0 is the caller's context reaching its
	// deadline (errors.Is(err, context.DeadlineExceeded) holds then).
	Wait time.Duration
	// Code is the SQLSTATE the server sent, when it sent one.
	Code string
	// Err is the driver's error, or the context's.
	Err error
}

// Error names the server and database, and what went wrong there.
func (e *ServerError) Error() string {
	where := fmt.Sprintf("the database server %s (database %s)", e.Server, e.Database)
	switch e.Kind {
	case ErrUnreachable:
		if readOnly(e.Err) {
			return fmt.Sprintf("no database server of %s (database %s) takes writes, as the URL's target_session_attrs asks: %s; "+
				"if the primary failed, a standby must be promoted (by hand or by a failover manager): run it again once one is",
				e.Server, e.Database, e.cause())
		}
		return fmt.Sprintf("cannot reach %s: %s; check that the server is running and reachable from here, "+
			"and the host and port of the URL", where, e.cause())
	case ErrTimeout:
		within := "within " + e.Wait.String()
		if e.Wait <= 0 {
			within = "before the deadline"
		}
		return fmt.Sprintf("no reply from %s %s (%s); the transaction was rolled back, nothing of it was written: "+
			"check the server's load and the network, then run it again", where, within, e.Op)
	case ErrConnectionLost:
		return fmt.Sprintf("lost the connection to %s (%s): %s; the transaction was rolled back, nothing of it was written: "+
			"run it again once the server is back", where, e.Op, e.cause())
	case ErrCommitUnknown:
		return fmt.Sprintf("lost the connection to %s while committing: %s; the commit may or may not have been written: "+
			"look at the log before doing it again", where, e.cause())
	case ErrTooManyConnections:
		return fmt.Sprintf("%s refused the connection: %s (SQLSTATE %s); "+
			"run it again later, or have its max_connections raised or a pooler put in front of it", where, e.cause(), e.Code)
	case ErrNoPrimary:
		return fmt.Sprintf("%s is read-only (a standby, or default_transaction_read_only is on): %s (SQLSTATE %s); "+
			"nothing was written: name the primary in the URL, or every host of the cluster with target_session_attrs=read-write",
			where, e.cause(), e.Code)
	case ErrAuthFailed:
		return fmt.Sprintf("%s refused user %q: %s (SQLSTATE %s); check the user and password (in the URL, "+
			"PGPASSWORD or ~/.pgpass), and that the server's pg_hba.conf lets the user in from here", where, e.User, e.cause(), e.Code)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Op, e.cause())
}

// cause says briefly what went wrong underneath.
func (e *ServerError) cause() string {
	if e.Wait > 0 {
		return fmt.Sprintf("no reply within %s", e.Wait)
	}
	return describe(e.Err)
}

// describe says briefly what err, a driver's error, is.
func describe(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	// pgx's ConnectError repeats the user and database, and a dial error
	// the host: keep the innermost words that say why.
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Unwrap() != nil {
		err = ce.Unwrap()
		if each, ok := describeEach(err); ok {
			return each
		}
	}
	if readOnly(err) {
		return "read-only (a standby)"
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the server closed the connection"
	}
	if errors.Is(err, pgconn.ErrConnClosed) {
		return "the connection closed" // pgx's "conn closed"
	}
	if err == nil {
		return "unknown cause"
	}
	return err.Error()
}

// describeEach says why each server of a connection attempt to several
// (a URL of several hosts) failed: "h1:5432: connection refused; h2:5432:
// the server is read-only …". ok is false when err is not such a list.
// Of a server tried twice (sslmode=prefer tries it with TLS, then
// without; on loopback, without, then with: see plainFirstOnLoopback), the
// last attempt's reason is kept, unless that is a refusal of TLS; when one server is left, its
// reason is given without its address, which the message names already.
func describeEach(err error) (each string, ok bool) {
	j, isList := err.(interface{ Unwrap() []error })
	if !isList || len(j.Unwrap()) < 2 {
		return "", false
	}
	var addrs []string
	why := map[string]string{}
	for _, e := range j.Unwrap() {
		// pgx's error of one server reads "ADDRESS (HOST NAME): WHY".
		text := e.Error()
		addr := ""
		if i, k := strings.Index(text, " ("), strings.Index(text, "): "); i > 0 && k > i {
			addr = text[:i]
		}
		inner := errors.Unwrap(e)
		if inner == nil || addr == "" {
			inner = e
		}
		_, seen := why[addr]
		if !seen {
			addrs = append(addrs, addr)
		} else if strings.Contains(text, "server refused TLS connection") {
			continue // the second try of a server on loopback, after its real answer
		}
		why[addr] = describe(inner)
	}
	if len(addrs) == 1 {
		return why[addrs[0]], true
	}
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = why[a]
		if a != "" {
			parts[i] = a + ": " + why[a]
		}
	}
	return strings.Join(parts, "; "), true
}

// readOnly reports whether err is a server refused for being read-only
// or a standby, by the URL's target_session_attrs.
func readOnly(err error) bool {
	return errors.Is(err, pgconn.ErrReadOnlyConnection) || errors.Is(err, pgconn.ErrStandbyConnection)
}

// Is matches e's Kind, and ErrNoPrimary when e is ErrUnreachable because
// a server that was reached is read-only.
func (e *ServerError) Is(target error) bool {
	return target == e.Kind || target == ErrNoPrimary && e.Kind == ErrUnreachable && readOnly(e.Err)
}

// Unwrap returns the driver's error.
func (e *ServerError) Unwrap() error { return e.Err }

// server is what a ServerError says of the server, and the timeouts in
// force.
type server struct {
	addr, database, user string
	// several says the URL names several hosts: addr lists them all.
	several        bool
	connectTimeout time.Duration
	replyTimeout   time.Duration
}

// bound returns ctx limited to one reply: it ends replyTimeout from now
// (never, when replyTimeout is 0).
func (sv *server) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if sv.replyTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, sv.replyTimeout)
}

// classify turns err, the error of op, into a *ServerError when it is
// one of the failures the sentinels name, and returns it unchanged
// otherwise: an SQL error (a serialization failure still retries, a
// missing row is still pgx.ErrNoRows), or parent being cancelled
// (context.Canceled, which the CLI reports as an interruption). conn is
// the connection op ran on (nil when none); committing says op was COMMIT.
func (sv *server) classify(parent context.Context, op string, conn *pgconn.PgConn, committing bool, err error) error {
	if err == nil {
		return nil
	}
	var se *ServerError
	if errors.As(err, &se) {
		return err
	}
	mk := func(kind error) *ServerError {
		addr := sv.addr
		if sv.several && conn != nil && conn.Conn() != nil {
			addr = conn.Conn().RemoteAddr().String() // the one of them it was
		}
		return &ServerError{Kind: kind, Server: addr, Database: sv.database, User: sv.user, Op: op, Err: err}
	}
	var pgErr *pgconn.PgError
	isPg := errors.As(err, &pgErr)
	if isPg {
		switch {
		case pgErr.Code == "53300":
			e := mk(ErrTooManyConnections)
			e.Code = pgErr.Code
			return e
		case pgErr.Code == "28P01" || pgErr.Code == "28000":
			e := mk(ErrAuthFailed)
			e.Code = pgErr.Code
			return e
		case pgErr.Code == "25006": // read_only_sql_transaction: a standby
			e := mk(ErrNoPrimary)
			e.Code = pgErr.Code
			return e
		case pgErr.Code == "57P03": // cannot_connect_now: starting up or shutting down
			e := mk(ErrUnreachable)
			e.Code = pgErr.Code
			return e
		case pgErr.Code == "57014" && !errors.Is(parent.Err(), context.Canceled) && (sv.replyTimeout > 0 || deadlineSet(parent)):
			// query_canceled by the statement_timeout that the reply
			// timeout or the deadline set (see beginQuery): the server
			// gave up on the statement as the client was about to.
			e := mk(ErrTimeout)
			e.Code = pgErr.Code
			if deadlineSet(parent) {
				e.Err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
			} else {
				e.Wait = sv.replyTimeout
			}
			return e
		case strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "25P03":
			// connection_exception, or the server ended the session
			// (admin_shutdown, crash_shutdown, or a transaction idle
			// longer than WithIdleTimeout allows: a writer that froze
			// while holding the repository's lock): lost.
		default:
			return err
		}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if parent.Err() != nil {
			return err
		}
		e := mk(ErrUnreachable)
		if errors.Is(err, context.DeadlineExceeded) && sv.connectTimeout > 0 {
			e.Wait = sv.connectTimeout
		}
		if !isPg && !isNetwork(err) && !errors.Is(err, context.DeadlineExceeded) && !readOnly(err) {
			return err // TLS refused, a bad option: not a matter of reaching the server
		}
		return e
	}
	if errors.Is(err, pgx.ErrTxCommitRollback) || errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	timedOut := errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil
	broken := isPg || timedOut || isNetwork(err) || (conn != nil && conn.IsClosed())
	switch {
	case committing && isPg && pgErr.Code == "25P03":
		// The server ended the transaction for idling before COMMIT
		// came: it was rolled back, not an unknown outcome.
		e := mk(ErrConnectionLost)
		e.Code = pgErr.Code
		return e
	case committing && (broken || parent.Err() != nil):
		e := mk(ErrCommitUnknown)
		if timedOut {
			e.Wait = sv.replyTimeout
		}
		return e
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		// The caller's deadline passed while op waited for its reply.
		return mk(ErrTimeout)
	case parent.Err() != nil:
		return err
	case timedOut:
		e := mk(ErrTimeout)
		e.Wait = sv.replyTimeout
		return e
	case broken:
		e := mk(ErrConnectionLost)
		if isPg {
			e.Code = pgErr.Code
		}
		return e
	}
	return err
}

// deadlineSet reports whether ctx has a deadline (and with it the
// transaction a statement_timeout: see beginQuery).
func deadlineSet(ctx context.Context) bool {
	_, ok := ctx.Deadline()
	return ok
}

// isNetwork reports an error of the connection itself: the network, or
// the server closing it.
func isNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed)
}
