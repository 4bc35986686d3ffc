package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tractdag/tract/store"
)

// SchemaVersion is the version of the database schema this build creates
// and needs. Migrate brings a database up to it.
const SchemaVersion = 3

// migrateLock is the key of the transaction-scoped advisory lock that
// Migrate holds, so that two migrations never run at once ("tract" in
// ASCII).
const migrateLock = 0x7472616374

// migrations[v] brings a schema from version v to v+1. A released entry
// never changes: a change of schema is a new entry.
var migrations = [...]string{
	// 0 → 1: the tables of a repository's objects, refs, reflogs, derived
	// counters and unpublished packs, every row keyed by its repository.
	`
CREATE TABLE tract_repositories (
	name       text COLLATE "C" PRIMARY KEY,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE tract_blobs (
	repository text COLLATE "C" NOT NULL,
	hash       bytea NOT NULL,
	data       bytea NOT NULL,
	PRIMARY KEY (repository, hash)
);
CREATE TABLE tract_commits (
	repository text COLLATE "C" NOT NULL,
	hash       bytea NOT NULL,
	raw        bytea NOT NULL,
	PRIMARY KEY (repository, hash)
);
CREATE TABLE tract_counters (
	repository text COLLATE "C" NOT NULL,
	hash       bytea NOT NULL,
	depth      bigint NOT NULL,
	messages   bigint NOT NULL,
	tokens     bigint NOT NULL,
	PRIMARY KEY (repository, hash)
);
CREATE TABLE tract_refs (
	repository text COLLATE "C" NOT NULL,
	name       text COLLATE "C" NOT NULL,
	value      bytea NOT NULL,
	PRIMARY KEY (repository, name)
);
CREATE TABLE tract_reflog (
	repository text COLLATE "C" NOT NULL,
	name       text COLLATE "C" NOT NULL,
	seq        bigint GENERATED ALWAYS AS IDENTITY,
	entry      bytea NOT NULL,
	PRIMARY KEY (repository, name, seq)
);
CREATE TABLE tract_packs (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	repository text COLLATE "C" NOT NULL,
	updated_ns bigint NOT NULL,
	entries    bigint NOT NULL,
	last_kind  smallint,
	last_hash  bytea
);
CREATE INDEX tract_packs_repository ON tract_packs (repository, id);
CREATE TABLE tract_pack_entries (
	pack  bigint NOT NULL REFERENCES tract_packs (id) ON DELETE CASCADE,
	ord   bigint NOT NULL,
	kind  smallint NOT NULL,
	hash  bytea NOT NULL,
	value bytea NOT NULL,
	PRIMARY KEY (pack, ord)
);
`,
	// 1 → 2: compiled-context records (see store.ContextTx), derived from
	// the commits like the counters.
	`
CREATE TABLE tract_contexts (
	repository text COLLATE "C" NOT NULL,
	hash       bytea NOT NULL,
	record     bytea NOT NULL,
	PRIMARY KEY (repository, hash)
);
`,
	// 2 → 3: the word index (see words.go), a document a commit; the
	// migration then indexes every repository's commits and builds the
	// GIN index over them (see afterMigration).
	`
CREATE TABLE tract_words (
	repository text COLLATE "C" NOT NULL,
	seq        bigint NOT NULL,
	hash       bytea NOT NULL,
	time_ns    bigint NOT NULL,
	bound_ns   bigint NOT NULL,
	words      tsvector,
	PRIMARY KEY (repository, seq)
);
CREATE UNIQUE INDEX tract_words_hash ON tract_words (repository, hash);
CREATE INDEX tract_words_unindexed ON tract_words (repository, seq) WHERE words IS NULL;
`,
}

// afterMigration returns what brings the data up to schema version v+1
// once migrations[v] has changed the tables (nil: nothing): it runs in
// the migration's transaction, and the repository and reply timeout of
// s play no part.
func afterMigration(v int) func(ctx context.Context, tx pgx.Tx, s *Store) error {
	if v == 2 {
		return indexAllRepositories
	}
	return nil
}

// Sentinel errors of package postgres.
var (
	// ErrSchemaMissing is returned when a database has no tract schema:
	// Migrate creates it.
	ErrSchemaMissing = errors.New("database has no tract schema")
	// ErrSchemaOld is returned when a database's schema is older than
	// this tract: Migrate upgrades it.
	ErrSchemaOld = errors.New("database schema is older than this tract")
)

// SchemaError says why a database's schema cannot be used. It matches
// ErrSchemaMissing, ErrSchemaOld or store.ErrNewerSchema with errors.Is.
type SchemaError struct {
	// Have is the database's schema version (0: none).
	Have int
	// Want is SchemaVersion.
	Want int
}

// Error says how the database's schema differs from this version's
// (Migrate creates or upgrades it).
func (e *SchemaError) Error() string {
	switch {
	case e.Have == 0:
		return fmt.Sprintf("%v (it needs version %d)", ErrSchemaMissing, e.Want)
	case e.Have < e.Want:
		return fmt.Sprintf("%v: version %d, this tract needs %d", ErrSchemaOld, e.Have, e.Want)
	}
	return fmt.Sprintf("%v: version %d, this tract knows up to %d", store.ErrNewerSchema, e.Have, e.Want)
}

// Is matches the sentinel of e's case.
func (e *SchemaError) Is(target error) bool {
	switch {
	case e.Have == 0:
		return target == ErrSchemaMissing
	case e.Have < e.Want:
		return target == ErrSchemaOld
	}
	return target == store.ErrNewerSchema
}

// MigrateResult says what Migrate did: the schema version found (From,
// 0 for none) and the version now (To, SchemaVersion).
type MigrateResult = store.MigrateResult

// Migrate creates or upgrades the tract schema in the database url names,
// in one transaction under an advisory lock: running it again, or from
// several processes at once, is harmless. The repository parameter of
// url plays no part (the schema serves every repository of the database).
// A schema newer than this tract is left alone, with a *SchemaError.
//
// Of opts, WithConnectTimeout applies, and WithReplyTimeout to the check
// of the version, not to the migration, which may wait for another one.
func Migrate(ctx context.Context, url string, opts ...Option) (*MigrateResult, error) {
	loc, err := parseLocation(url)
	if err != nil {
		return nil, err
	}
	st := newStore(loc, opts)
	sv := &st.server
	pool, err := pgxpool.NewWithConfig(ctx, loc.pool)
	if err != nil {
		return nil, redact(fmt.Errorf("connect to %s: %w", loc.display, err), loc.secrets)
	}
	defer pool.Close()
	res := &MigrateResult{To: SchemaVersion}
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS tract_schema (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	version   integer NOT NULL
)`); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT version FROM tract_schema`).Scan(&res.From)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if res.From > SchemaVersion {
			return &SchemaError{Have: res.From, Want: SchemaVersion}
		}
		for v := res.From; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema version %d to %d: %w", v, v+1, err)
			}
			if after := afterMigration(v); after != nil {
				if err := after(ctx, tx, st); err != nil {
					return fmt.Errorf("schema version %d to %d: %w", v, v+1, err)
				}
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO tract_schema (version) VALUES ($1)
ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version`, SchemaVersion)
		return err
	})
	if err = sv.classify(ctx, "migrate", nil, false, err); err != nil {
		var srv *ServerError
		if errors.As(err, &srv) {
			return nil, redact(err, loc.secrets)
		}
		return nil, redact(fmt.Errorf("migrate %s: %w", loc.display, err), loc.secrets)
	}
	return res, nil
}

// openCheck is checkSchema and whether the database holds repository, in
// one query: a command that opens a repository pays one round trip for
// both. When the query fails for a missing table, checkSchema says which
// schema the database has.
func openCheck(ctx context.Context, pool *pgxpool.Pool, sv *server, repository string) (found bool, err error) {
	var have *int
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, sv.classify(ctx, "connect", nil, false, err)
	}
	bctx, cancel := sv.bound(ctx)
	err = conn.QueryRow(bctx, `SELECT (SELECT version FROM tract_schema),
	EXISTS (SELECT 1 FROM tract_repositories WHERE name = $1)`, repository).Scan(&have, &found)
	cancel()
	conn.Release()
	err = sv.classify(ctx, "reading the schema version", nil, false, err)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return false, checkSchema(ctx, pool, sv)
	case err != nil:
		return false, err
	case have == nil || *have != SchemaVersion:
		return false, checkSchema(ctx, pool, sv)
	}
	return found, nil
}

// checkSchema fails with a *SchemaError unless the database's schema is
// SchemaVersion, and with a *ServerError when sv's server cannot be
// reached or does not reply within its reply timeout.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, sv *server) error {
	var have int
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return sv.classify(ctx, "connect", nil, false, err)
	}
	defer conn.Release()
	bctx, cancel := sv.bound(ctx)
	defer cancel()
	err = conn.QueryRow(bctx, `SELECT version FROM tract_schema`).Scan(&have)
	err = sv.classify(ctx, "reading the schema version", nil, false, err)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01", errors.Is(err, pgx.ErrNoRows): // undefined_table, or no row
		have = 0
	case err != nil:
		return err
	}
	if have != SchemaVersion {
		return &SchemaError{Have: have, Want: SchemaVersion}
	}
	return nil
}
