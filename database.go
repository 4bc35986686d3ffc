package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/store"
)

// ErrNoDriver is matched by the error of opening a database URL whose
// scheme no package imported by the program registered a driver for (a
// *store.NoDriverError, which names the package to import).
var ErrNoDriver = store.ErrNoDriver

// MigrateResult says what Migrate did: the schema version found (0: none)
// and the version now.
type MigrateResult = store.MigrateResult

// IsDatabaseURL reports whether dbOrPath names a repository in a database
// (a URL, such as postgres://… or postgresql://…) rather than a
// repository file. Init, Open, OpenOrInit, OpenStore and FsckFile take
// either. A URL opens through the driver its scheme registered (see
// store.Register): a program that opens postgres:// URLs imports the
// PostgreSQL backend for its side effect,
//
//	import _ "github.com/tractdag/tract/store/postgres"
//
// and one that does not gets an error matching ErrNoDriver that says so.
// A program that only opens files links no database client.
func IsDatabaseURL(dbOrPath string) bool { return store.IsURL(dbOrPath) }

// Redact returns dbOrPath as it may be shown to a user or written to a
// log: a database URL with its password replaced by "xxxxx"; a file path
// as it is. It needs no driver imported.
func Redact(dbOrPath string) string { return store.Redact(dbOrPath) }

// Migrate creates or upgrades the tract schema in the database url names,
// idempotently and under a lock (see postgres.Migrate), through the
// driver of its scheme. Open and Init fail on a database whose schema is
// missing or older, with an error matching postgres.ErrSchemaMissing or
// postgres.ErrSchemaOld.
func Migrate(ctx context.Context, url string) (*MigrateResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !IsDatabaseURL(url) {
		return nil, fmt.Errorf("migrate %s: %w: not a database URL such as postgres://… (a repository file upgrades itself)", url, errors.ErrUnsupported)
	}
	return store.MigrateURL(ctx, url)
}

// OpenStore opens the storage dbOrPath names, as Open does (or, with
// create, as Init does), without a Tract around it: a bbolt file for a
// path, a repository in a database for a URL (see IsDatabaseURL). It is
// for tools that work on the storage of either kind, such as copying a
// repository between them. Of opts, WithLockTimeout, WithNoSync,
// WithReadOnly, WithIndexProgress and WithUncompressedTexts apply to a
// file; WithContext to a database. ctx bounds
// the opening (of a file, its wait for the file's lock too).
func OpenStore(ctx context.Context, dbOrPath string, create bool, opts ...Option) (store.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	if IsDatabaseURL(dbOrPath) {
		return store.OpenURL(ctx, dbOrPath, store.OpenOptions{Create: create, Context: c.ctx})
	}
	return store.OpenBolt(dbOrPath, store.BoltOptions{
		Context:       ctx,
		Create:        create,
		LockTimeout:   c.lockTimeout,
		NoSync:        c.noSync,
		ReadOnly:      c.readOnly && !create,
		IndexProgress: c.indexProgress.report("commits"),
		Uncompressed:  c.uncompressed,
	})
}

// WithContext makes ctx bound the opening of a repository in a database
// and, besides each method's own context, every later statement to its
// server: when ctx is cancelled (Ctrl-C, say), the method waiting on the
// server returns at once with an error matching ctx's (context.Canceled),
// and its transaction rolls back. A transaction begun after ctx was
// cancelled runs without it (bounded by its method's context and the
// reply timeout), so that a program on its way out can still record what
// the interruption left. Of a file, it bounds the opening's wait for the
// file's lock; later, each method's own context, and WithLockTimeout,
// bound its waits.
func WithContext(ctx context.Context) Option {
	return func(c *config) { c.ctx = ctx }
}
