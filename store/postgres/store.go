package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Store is a repository in a PostgreSQL database. It is safe for
// concurrent use, by goroutines and by processes on any machine.
type Store struct {
	pool       *pgxpool.Pool
	repository string
	display    string
	secrets    []string
	attempts   int
	backoff    time.Duration
	sleep      func(time.Duration)
	// idleTimeout bounds a write transaction's idle time (WithIdleTimeout).
	idleTimeout time.Duration
	// server names the server in errors and holds the timeouts.
	server server
	// ctx bounds every transaction (WithContext).
	ctx context.Context
	// broken is set when a transaction's connection broke (see Close).
	broken atomic.Bool
	// windows are the numbers of documents the first queries of a word
	// search cover (see WordMatches).
	windows []int64
	// pendingDocs counts the unnumbered documents the Store's
	// transactions added since it last numbered them (see settle);
	// settling counts the numberings running in the background.
	pendingDocs atomic.Int64
	settling    sync.WaitGroup
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.Tx           = (*pgTx)(nil)
	_ store.HashedPutter = (*pgTx)(nil)
	_ store.PackTx       = (*pgTx)(nil)
)

// Option configures Open and Create.
type Option func(*Store)

// WithMaxAttempts bounds how many times Update runs a transaction that
// PostgreSQL aborted for a serialization failure or a deadlock (SQLSTATE
// 40001, 40P01) before it gives up with the last error; the default is 10.
func WithMaxAttempts(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.attempts = n
		}
	}
}

// WithBackoff sets the wait before the first retry of an aborted
// transaction (default 5ms); each later wait doubles, up to 64 times it,
// and is drawn at random below that bound so that writers that collided
// do not collide again.
func WithBackoff(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.backoff = d
		}
	}
}

// Open opens the existing repository url names. It fails with a
// *SchemaError when the database's schema is missing or not this tract's
// (Migrate fixes the first two), and with store.ErrNotRepository when the
// database has no repository of that name (Create makes one).
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	return open(ctx, url, false, opts)
}

// Create makes the repository url names, with HEAD attached to the
// unborn branch main, and opens it. It fails with store.ErrExists when the
// database has one of that name already, and with a *SchemaError as Open.
func Create(ctx context.Context, url string, opts ...Option) (*Store, error) {
	return open(ctx, url, true, opts)
}

func open(ctx context.Context, url string, create bool, opts []Option) (*Store, error) {
	loc, err := parseLocation(url)
	if err != nil {
		return nil, err
	}
	s := newStore(loc, opts)
	if s.pool, err = pgxpool.NewWithConfig(ctx, loc.pool); err != nil {
		return nil, s.redact(fmt.Errorf("connect to %s: %w", s.display, err))
	}
	if err := s.prepare(ctx, create); err != nil {
		s.pool.Close()
		return nil, s.redact(err)
	}
	return s, nil
}

// newStore returns the Store of loc with opts applied, its connections
// configured (timeouts, keepalives) but not yet made.
func newStore(loc *location, opts []Option) *Store {
	cc := loc.pool.ConnConfig
	addr, several := serversAddr(&cc.Config)
	s := &Store{repository: loc.repository, display: loc.display, secrets: loc.secrets,
		attempts: 10, backoff: 5 * time.Millisecond, sleep: time.Sleep, ctx: context.Background(),
		idleTimeout: DefaultIdleTimeout, windows: defaultWindows(),
		server: server{addr: addr, several: several, database: cc.Database, user: cc.User,
			connectTimeout: DefaultConnectTimeout, replyTimeout: DefaultReplyTimeout}}
	// A Store counts its unnumbered documents from a random point, so
	// that processes that make a few commits each (tract commit) number
	// them in turn, about once per settleEvery documents (see settleDue).
	s.pendingDocs.Store(rand.Int64N(settleEvery))
	for _, o := range opts {
		o(s)
	}
	if loc.connectSet {
		s.server.connectTimeout = cc.ConnectTimeout
	}
	if loc.replySet {
		s.server.replyTimeout = loc.replyTimeout
	}
	cc.ConnectTimeout = s.server.connectTimeout
	cc.DialFunc = dialer(s.server.connectTimeout)
	return s
}

// prepare checks the schema and that the repository exists, or creates it.
// Opening asks both in one round trip (see openCheck).
func (s *Store) prepare(ctx context.Context, create bool) error {
	var err error
	found := false
	if create {
		err = checkSchema(ctx, s.pool, &s.server)
	} else {
		found, err = openCheck(ctx, s.pool, &s.server, s.repository)
	}
	if err != nil {
		var se *SchemaError
		var srv *ServerError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s: %w", s.display, err)
		case errors.As(err, &srv):
			return err // it names the server and database itself
		}
		if !create {
			return fmt.Errorf("open %s: %w", s.display, err)
		}
		return fmt.Errorf("connect to %s: %w", s.display, err)
	}
	if !create {
		if !found {
			return fmt.Errorf("%s: no repository %q in the database: %w", s.display, s.repository, store.ErrNotRepository)
		}
		return nil
	}
	err = s.Update(ctx, func(t store.Tx) error {
		tx := t.(*pgTx)
		var made bool
		err := tx.queryRow(`INSERT INTO tract_repositories (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING true`, s.repository).Scan(&made)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%s: repository %q: %w", s.display, s.repository, store.ErrExists)
		}
		if err != nil {
			return err
		}
		return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: refs.BranchRef("main")})
	})
	var srv *ServerError
	if err != nil && !errors.Is(err, store.ErrExists) && !errors.As(err, &srv) {
		return fmt.Errorf("create %s: %w", s.display, err)
	}
	return err
}

// Path returns the database URL without its password, with the
// repository parameter.
func (s *Store) Path() string { return s.display }

// Repository returns the repository's name in the database.
func (s *Store) Repository() string { return s.repository }

// Close closes the store's connections, waiting for transactions that run
// (a numbering of the word index's documents in the background included:
// see settle).
// When a connection broke (a server that stopped answering, a cancelled
// context), it waits at most closeWait: pgx's goodbye to such a server (a
// cancel request, then a wait for it to hang up) may take 15 seconds, and
// goes on in the background.
func (s *Store) Close() error {
	if !s.broken.Load() {
		s.settling.Wait()
		s.pool.Close()
		return nil
	}
	done := make(chan struct{})
	go func() {
		s.settling.Wait()
		s.pool.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	return nil
}

// View runs fn in a read-only REPEATABLE READ transaction: fn sees one
// snapshot of the repository. ctx bounds every statement (see once).
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.redact(s.once(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, lockNone, fn))
}

// Update runs fn in a read-write transaction. Writers of one repository
// overlap: the transaction begins holding the repository's lock in share
// mode (see lockMode), which other writers hold too, and each ref
// it reads for a compare-and-swap is locked on its own (see pgTx.Ref):
// writers of one ref take turns, and each sees every write committed
// before it, so a compare-and-swap that fn does (read a ref, compare,
// write) is atomic, while writers of other refs go on at once (and their
// commits' flushes of the log are grouped by the server). What deletes or
// rewrites state that every writer shares (deleting objects, rewriting a
// reflog, publishing a pack, an import's COPY, reading every commit, blob,
// ref or reflog name to decide a write) takes the repository exclusively,
// as every writer did before: at that call, or, when fn has locked a ref
// it read by then, by running fn again from the start (see
// pgTx.exclusive). Writers of other repositories in the database do not
// wait. When the server aborts the transaction for a serialization
// failure or a deadlock (SQLSTATE 40001, 40P01: CockroachDB runs every
// transaction SERIALIZABLE and aborts where PostgreSQL would wait), or
// another writer moved a ref fn was given without its lock (see
// refRaceError), Update rolls back and runs fn again, after a backoff, up
// to the bound of WithMaxAttempts: fn must not have effects outside the
// transaction that a second run would repeat wrongly. ctx bounds every
// statement, the waits for locks included (see once), and the backoffs.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.update(ctx, lockShared, fn)
}

// update is Update, beginning in lock mode mode.
func (s *Store) update(ctx context.Context, mode lockMode, fn func(store.Tx) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	var err error
	for attempt := 1; ; {
		err = s.once(ctx, opts, mode, fn)
		if err == nil {
			s.settleDue()
			return nil
		}
		if mode == lockShared && errors.Is(err, errExclusive) {
			mode = lockExclusive // not an attempt: run fn again at once
			continue
		}
		if !retryable(err) {
			return s.redact(err)
		}
		if attempt >= s.attempts {
			return s.redact(fmt.Errorf("%s: gave up after %d attempts: %w", s.display, attempt, err))
		}
		if cerr := ctx.Err(); cerr != nil {
			return s.redact(fmt.Errorf("%s: %w (retrying after: %w)", s.display, cerr, err))
		}
		s.sleep(s.wait(attempt))
		attempt++
	}
}

// wait returns the backoff before retry number attempt (from 1).
func (s *Store) wait(attempt int) time.Duration {
	bound := s.backoff << min(attempt-1, 6)
	return bound/2 + rand.N(bound/2+1)
}

// retryable reports whether err is PostgreSQL aborting a transaction that
// may succeed when run again, or a writer that lost the race for a ref it
// read without its lock (see refRaceError).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01" ||
			pgErr.Code == "23505" && pgErr.ConstraintName == refsKey
	}
	var race *refRaceError
	return errors.As(err, &race)
}

// once runs fn in one transaction and commits it when fn returns nil (and
// the transaction writes). A panic in fn rolls back and goes on. Every
// statement, BEGIN and COMMIT included, waits for its reply at most the
// reply timeout (see pgTx.bound), and no longer than ctx lasts; connecting
// waits the connect timeout. The transaction's statement_timeout is set
// to the same bound (see server.beginQuery), so that the server too gives
// up on a statement that outlives it. A ctx done before the transaction
// begins ends it at once with ctx's error.
func (s *Store) once(ctx context.Context, opts pgx.TxOptions, mode lockMode, fn func(store.Tx) error) (err error) {
	write := mode != lockNone
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, stop := s.txContext(ctx)
	defer stop()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.server.classify(ctx, "connect", nil, false, err)
	}
	defer func() {
		if conn.Conn().IsClosed() {
			// The server went away, restarted or failed over, or the
			// network broke: the pool's idle connections are most likely
			// as dead as this one, and each would fail a transaction of
			// its own. Close them all; the next transaction connects
			// afresh (to the new primary, of a URL of several hosts).
			s.broken.Store(true)
			s.pool.Reset()
		}
		conn.Release()
	}()
	opts.BeginQuery = s.server.beginQuery(ctx, opts)
	if write {
		// The writer lock and the idle timeout come in BEGIN's round trip.
		opts.BeginQuery += s.writerLockQuery(mode)
	}
	bctx, cancel := s.server.bound(ctx)
	tx, err := conn.BeginTx(bctx, opts)
	cancel()
	if err != nil {
		if write {
			return fmt.Errorf("%s: take the repository's writer lock: %w", s.display,
				s.server.classify(ctx, "waiting for the repository's writer lock", conn.Conn().PgConn(), false, err))
		}
		return fmt.Errorf("%s: begin transaction: %w", s.display, s.server.classify(ctx, "BEGIN", conn.Conn().PgConn(), false, err))
	}
	ptx := &pgTx{s: s, tx: tx, ctx: ctx, write: write, shared: mode == lockShared, tracked: mode == lockShared, seen: newOverlay(),
		held: map[string]bool{}, observed: map[string][]byte{}}
	done := false
	defer func() {
		if !done {
			_ = ptx.rollback()
		}
	}()
	if err := fn(ptx); err != nil {
		return ptx.verdict(err)
	}
	if !write {
		done = true
		return ptx.rollback()
	}
	if err := ptx.finishWords(); err != nil {
		return ptx.verdict(fmt.Errorf("%s: %w", s.display, err))
	}
	if err := ptx.verdict(nil); err != nil {
		return err
	}
	done = true
	if err := ptx.commit(); err != nil {
		return fmt.Errorf("%s: %w", s.display, err)
	}
	if ptx.indexed >= analyzeRows {
		s.analyze(ctx, conn.Conn())
	}
	s.pendingDocs.Add(int64(ptx.pendingDocs))
	return nil
}

// analyzeRows is how many commits a transaction must have added for the
// planner's statistics to be refreshed after it (see analyze): a bulk
// write of thousands, such as an import, not a turn's few.
const analyzeRows = 2_000

// analyzeTables are the tables a bulk write fills, commit by commit.
const analyzeTables = "tract_blobs, tract_commits, tract_counters, tract_words"

// analyze refreshes the planner's statistics of the tables after a
// transaction that committed many commits (an import). The tables hold
// every repository of the database, and until autovacuum gets to them
// the planner takes a repository it has no statistics of for one of a
// few rows: fsck's lookups of an imported repository's word documents
// then went through the documents' numbers instead of their hashes, a
// scan of the repository's documents per commit (fsck of a fresh import
// of 24,000 messages took 32 s instead of 0.7). The write has committed:
// a failure here costs only plans, so it is not reported.
func (s *Store) analyze(ctx context.Context, conn *pgx.Conn) {
	bctx, cancel := s.server.bound(ctx)
	defer cancel()
	_, _ = conn.Exec(bctx, "ANALYZE "+analyzeTables)
}

// lockMode is how a transaction holds its repository's lock: a
// transaction-scoped advisory lock of two keys, repositoryLock and the
// hash of the repository's name (hashtext). Repositories whose names hash
// alike share it, which costs them waits only. An advisory lock rather
// than the repository's row: the server's lock manager queues a request
// behind a waiting one it conflicts with, so a writer that asks for the
// repository exclusively gets it once the shared holders before it end,
// where the row's lock would let shared lockers join it without end
// while the exclusive writer waits.
type lockMode int

const (
	// lockNone is a View's: no lock.
	lockNone lockMode = iota
	// lockShared is an ordinary writer's: the lock in share mode
	// (pg_advisory_xact_lock_shared), which writers in this mode hold
	// together, and which keeps out a writer in lockExclusive (and Drop).
	// Each such writer locks the refs it moves (see pgTx.Ref).
	lockShared
	// lockExclusive is a writer's that rewrites or deletes what every
	// writer shares (see pgTx.exclusive): the lock in exclusive mode
	// (pg_advisory_xact_lock), which no other writer of the repository
	// holds meanwhile in either mode.
	lockExclusive
)

// repositoryLock is the first key of a repository's lock ("trep" in
// ASCII; see lockMode).
const repositoryLock = 0x74726570

// lockRepository takes the repository's lock for the rest of tx in
// lockExclusive, which a writer of the repository in either mode waits
// for until tx ends. It must be tx's first statement. In a READ
// COMMITTED transaction every later statement then sees what the writers
// before it committed, so a writer never works on a stale snapshot that
// the server would have to abort. (A REPEATABLE READ or SERIALIZABLE
// snapshot is taken when the first statement starts, before the lock is
// granted, so under those levels the lock would not spare the abort.)
// Readers take no lock and are never kept waiting. Update takes its lock
// in BEGIN's own round trip instead (see writerLockQuery).
func lockRepository(ctx context.Context, tx pgx.Tx, repository string) error {
	_, err := tx.Exec(ctx, lockRepositorySQL, repository, int32(repositoryLock))
	return err
}

// lockRepositorySQL is the statement of lockRepository.
const lockRepositorySQL = `SELECT 1 FROM pg_advisory_xact_lock($2::int, hashtext($1))`

// writerLockQuery is what a write transaction's BEGIN carries after it,
// in the same simple query: the idle timeout (see WithIdleTimeout), then
// the repository's lock taken in mode, so that a write transaction
// begins, bounds itself and takes its place in one round trip. The name
// is a literal here (a simple query has no parameters): a valid
// repository name holds no quote, and any quote is doubled all the same.
func (s *Store) writerLockQuery(mode lockMode) string {
	q := ""
	if s.idleTimeout > 0 {
		q = "; SET LOCAL idle_in_transaction_session_timeout = " + idleSetting(s.idleTimeout)
	}
	lock := "pg_advisory_xact_lock_shared"
	if mode == lockExclusive {
		lock = "pg_advisory_xact_lock"
	}
	return q + "; SELECT " + lock + "(" + strconv.Itoa(repositoryLock) + ", hashtext('" +
		strings.ReplaceAll(s.repository, "'", "''") + "'))"
}

func (s *Store) redact(err error) error { return redact(err, s.secrets) }
