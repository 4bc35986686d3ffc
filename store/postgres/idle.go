package postgres

import (
	"strconv"
	"time"
)

// DefaultIdleTimeout is how long the server lets a write transaction sit
// idle, waiting for its client's next statement, before it ends the
// session (see WithIdleTimeout).
const DefaultIdleTimeout = time.Minute

// WithIdleTimeout bounds how long a write transaction may wait for its
// client between statements: d, instead of DefaultIdleTimeout. A writer
// holds its repository's lock until its transaction ends, and a client
// that vanishes without closing its connection (a process stopped with
// SIGSTOP or frozen in a debugger, a machine cut off by a network
// partition) would otherwise keep every other writer of the repository
// waiting for good. Past d the server ends the session, which rolls the
// transaction back and frees the lock; the client, if it ever comes back,
// gets an error and has written nothing. A killed process needs no
// timeout: its operating system closes the connection, and the server
// rolls back at once.
//
// Each write transaction sets PostgreSQL's
// idle_in_transaction_session_timeout for itself (SET LOCAL), in the
// round trip that begins it and takes the lock, so nothing outlives
// the transaction and a pooler in transaction mode stays safe. It counts
// only time between statements: a statement that runs long, or that waits
// for a lock, is bounded by statement_timeout and lock_timeout instead.
// Set d well above the longest pause tract makes inside a transaction
// (milliseconds: no transaction spans a model call). d of 0 leaves the
// server's setting (the role's, the database's, or the URL's options) in
// force; d is rounded up to a millisecond.
func WithIdleTimeout(d time.Duration) Option {
	return func(s *Store) { s.idleTimeout = max(d, 0) }
}

// idleSetting renders d as a value of idle_in_transaction_session_timeout:
// whole milliseconds, at least 1 (0 would turn the timeout off), at most
// what the setting holds (a 32-bit count of milliseconds, about 24 days).
func idleSetting(d time.Duration) string {
	return strconv.FormatInt(timeoutMillis(d), 10)
}
