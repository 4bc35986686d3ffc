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
// A repository is named by a postgres:// or postgresql:// URL: pgx's
// connection string plus repository=NAME ([DefaultRepository] when absent),
// so one database holds many repositories. [Migrate] creates or upgrades the
// tables, [Create] makes a repository, [Open] opens one and [Drop] removes
// one:
//
//	url := "postgres://tract@db.example/tract?repository=agents"
//	_, err := postgres.Migrate(ctx, url)
//	s, err := postgres.Create(ctx, url)
//	defer s.Close()
//	err = s.Update(ctx, func(tx store.Tx) error { … })
//
// Update is a READ COMMITTED transaction that holds the repository's lock
// shared and locks each ref it reads: writers of other branches run at
// once, a read of a ref then a write of it is a compare-and-swap, and
// deletions, reflog rewrites and imports hold the repository exclusively.
// A transaction aborted (serialization failure, deadlock, a ref race)
// runs again, so its function must have no effect outside it. View is one REPEATABLE READ
// snapshot. Connecting and every statement are bounded by timeouts
// ([WithConnectTimeout], [WithReplyTimeout], or the URL's connect_timeout and
// reply_timeout) and by the context View and Update are given: a deadline
// also becomes the transaction's statement_timeout, so the server gives up
// on a statement the client no longer waits for. Failures of the server are a [*ServerError] that
// matches one sentinel ([ErrUnreachable], [ErrTimeout], [ErrConnectionLost],
// [ErrCommitUnknown], [ErrTooManyConnections], [ErrAuthFailed]).
//
// A word index (the table tract_words, schema 3) answers word searches
// (store.WordIndexTx): each transaction that writes or deletes commits
// keeps it, in the round trip that commits, and store.Fsck checks and
// rebuilds it (store.WordIndexChecker).
//
// The tables, the transaction and locking rules, timeouts and the error
// classification are documented in docs/postgres.md.
//
// # Caveats
//
//   - No error and no Path shows a password ([Redact]).
//   - Statements run in pgx.QueryExecModeExec unless the URL says otherwise:
//     nothing is prepared across transactions, so a pooler in transaction
//     mode (PgBouncer) works.
//   - The methods of a Tx take no context: its statements run with the
//     context of the View or Update that began it (and [WithContext]'s).
//     Packs are never published as packs (PublishedPacks is always 0),
//     and an import does not go through one: a Tx is a
//     store.PackStreamer, which copies it straight into the tables in the
//     transaction that lands it.
//   - Only PostgreSQL 15 is tested; CockroachDB and YugabyteDB speak the
//     protocol and abort more transactions under contention, which are
//     retried.
package postgres
