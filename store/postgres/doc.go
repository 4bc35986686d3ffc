// Package postgres keeps tract repositories in a PostgreSQL database: a
// store.Store for teams and fleets of agents that outgrow one file on one
// machine. It passes the same conformance suite (store/storetest) as the
// bbolt file and the in-memory store.
//
// Importing the package registers its driver for postgres:// and
// postgresql:// URLs with store.Register, as database/sql drivers do; a
// program that only needs them through package tract imports it blank:
//
//	import _ "github.com/tractdag/tract/store/postgres"
//
// # Locations
//
// A repository is named by a postgres:// or postgresql:// URL, pgx's
// connection string plus one parameter of tract's own, repository=NAME
// (DefaultRepository when absent): one database holds many repositories,
// every row keyed by its repository's name. Credentials come from the URL,
// PGPASSWORD or ~/.pgpass (pgx reads them). No error, and no Path, shows the
// password: they print the URL as url.URL.Redacted does, and an error from
// pgx has every password it could contain replaced by "xxxxx".
//
// # Schema
//
// Migrate creates the tables or upgrades them to SchemaVersion, in one
// transaction holding a transaction-scoped advisory lock, and records the
// version in the one row of tract_schema. Open and Create refuse a
// database whose version differs, with a *SchemaError. The tables:
//
//	tract_repositories  name, created_at
//	tract_blobs         (repository, hash) → data
//	tract_commits       (repository, hash) → raw (dag.Encode of the commit)
//	tract_counters      (repository, hash) → depth, messages, tokens
//	tract_refs          (repository, name) → value (refs.Ref.Encode)
//	tract_reflog        (repository, name, seq) → entry (refs.Entry.Encode)
//	tract_packs         id → repository, updated_ns, entries, last entry
//	tract_pack_entries  (pack, ord) → kind, hash, value
//
// Every key is a primary key, so a lookup, a hash-prefix search (a range of
// the key), a walk of every commit in key order (log --all, gc, fsck) and
// a reflog in order are index scans. Names sort in byte order (COLLATE
// "C"), as the file's keys do. Objects are immutable: a put of an object
// that is there is INSERT … ON CONFLICT DO NOTHING.
//
// A transaction is a store.BatchReader and a store.ChainReader: a page of
// blobs, commits or counters is one query (a LATERAL index lookup per
// hash over unnest of an array, maxBatch hashes a query), and a
// first-parent chain is one recursive query that finds each parent at a
// fixed offset of its child's encoding. Both are written so that the
// planner can only run them as index lookups: a repository just imported
// has no statistics yet, and a hash join or a scan per step would make a
// walk quadratic.
//
// # Transactions
//
// Update runs its function in a READ COMMITTED transaction whose first
// statement locks the repository's row in tract_repositories (FOR NO KEY
// UPDATE): writers of one repository take turns, as on a file, and each
// sees everything committed before it, so a read of a ref followed by a
// write of it is a compare-and-swap, and writers on one branch never
// starve each other with aborts. Writers of other repositories do not
// wait. (REPEATABLE READ or SERIALIZABLE would take the transaction's
// snapshot before the lock is granted, so a writer that waited for the
// lock could not see its predecessor's commit and would abort with 40001
// when it touched the same ref: eight processes committing on one branch
// ran out of ten attempts that way.) When the server aborts a transaction all the same (SQLSTATE 40001
// or 40P01: a deadlock, or CockroachDB, which runs every transaction
// SERIALIZABLE), Update runs its function again after a randomised
// backoff, up to WithMaxAttempts times. The function must therefore have
// no effect outside the transaction that a second run would repeat
// wrongly; tract's own functions only compute and write. View runs a
// read-only REPEATABLE READ transaction: one snapshot, and no lock.
// The reflog's order comes from an identity column, so concurrent appends
// to one reflog never conflict.
//
// A writer that vanishes inside its transaction frees the lock when the
// server notices: at once for a killed process (its connection closes),
// and after the idle timeout (WithIdleTimeout, DefaultIdleTimeout) for one
// whose connection stays open but silent (a stopped process, a network
// partition). Each write transaction sets that timeout for itself, in the
// round trip that takes the lock.
//
// Statements run in pgx.QueryExecModeExec unless the URL sets
// default_query_exec_mode: no statement is prepared across transactions
// and no session state is kept between them, so a connection pooler in
// transaction mode (PgBouncer) may hand each transaction another server
// connection.
//
// # Timeouts and server errors
//
// Making a connection (dial, TLS, login) waits at most the connect
// timeout: the URL's connect_timeout (whole seconds; or PGCONNECT_TIMEOUT),
// else WithConnectTimeout, else DefaultConnectTimeout. Every statement of
// a transaction, BEGIN, the writer lock, each batch of writes, each query
// until its rows are closed, a COPY and COMMIT, waits at most the reply
// timeout for its reply: the URL's reply_timeout (a duration, or whole
// seconds; tract removes it before pgx parses the URL), else
// WithReplyTimeout, else DefaultReplyTimeout; 0 means no bound. A
// statement past it ends the transaction by closing its connection (the
// server then rolls back). TCP keepalives are on, so a peer that vanished
// is noticed on an idle connection within about a minute.
//
// Failures of the server, rather than of SQL, are a *ServerError that
// names the server (host:port) and database, never the password, says
// what to do, and matches one sentinel with errors.Is:
//
//	ErrUnreachable         refused, no such host, no answer within the connect timeout, closed at login
//	ErrTimeout             no reply within the reply timeout; nothing of the transaction was written
//	ErrConnectionLost      the connection broke mid-transaction; nothing of it was written
//	ErrCommitUnknown       the connection broke or timed out during COMMIT: it may have been written
//	ErrTooManyConnections  SQLSTATE 53300 at login
//	ErrAuthFailed          SQLSTATE 28P01 or 28000 at login
//
// A cancelled WithContext context is not a ServerError: the error matches
// context.Canceled (except during COMMIT, where it is ErrCommitUnknown and
// matches both). No ServerError is retried by Update.
//
// # Caveats
//
// An unpublished pack (store.PackTx) lives in tract_pack_entries until
// PublishPack copies it into the object tables, so PublishedPacks is
// always 0 and there is nothing to compact. The transaction interfaces
// take no context: a Store runs its statements with the context of
// WithContext (context.Background without it). store.Lingerer and
// store.SortedPacker are not implemented: the pool keeps connections open
// between transactions, and page fill is PostgreSQL's business.
//
// Only PostgreSQL 15 is tested. CockroachDB and YugabyteDB speak the
// protocol, and abort more transactions under contention; those are
// retried as serialization failures are.
package postgres
