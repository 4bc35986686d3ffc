package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// SchemaVersion is the version of the on-disk layout this build writes and
// understands. A file with a newer version is refused.
//
// Schema 2 added the Counters of commits; a schema 1 file is read as it is
// and upgraded by its first write transaction. Schema 3 added packs (see
// PackTx); a file is marked schema 3 by the transaction that publishes its
// first pack, so until then a tract of schema 2 can still read and write
// it. Schema 4 added the journal (see bolt_journal.go); a file is marked
// schema 4 by its first journal record, which is its first write of a
// few objects. Schema 5 added refsets, the refs published with a pack
// (see PackRefTx and bolt_refsets.go); a file is marked schema 5 by the
// transaction that publishes its first. Schema 6 added compiled-context
// records (see ContextTx and bolt_contexts.go); a file is marked schema 6
// by the transaction that writes its first, so that a tract that does not
// know them never deletes a commit and leaves its texts in a record.
// Schema 7 added the word index (see WordIndexTx and bolt_words.go),
// which the first write transaction of a file builds. Schema 8 codes its
// posting blocks in fewer bytes (bolt_words_rice.go): the first write of
// a schema 7 file builds its index again, and until then its searches
// read every text, as those of a file without an index do.
// The same schema put the pending documents of small writes in the
// journal's records (see bolt_journal.go).
// Schema 9 keeps texts in stored forms, compressed with a symbol table
// trained on the file's own texts (see blobcodec.go and internal/fsst): files
// this tract creates or compacts; a schema 8 file keeps its texts as they
// are until compacted.
const SchemaVersion = 9

// schemaCounters is the schema every write brings a file up to.
const schemaCounters = 2

// Sentinel errors of package store.
var (
	// ErrNotFound is returned for a blob, commit or ref that is not stored.
	// errors.Is(err, refs.ErrNotFound) holds for it too, so code that
	// resolves revisions need not tell a missing ref from a missing object.
	ErrNotFound error = notFoundError{}
	// ErrNotRepository is returned when a file is not a tract repository.
	ErrNotRepository = errors.New("not a tract repository")
	// ErrNewerSchema is returned for a repository written by a newer tract.
	ErrNewerSchema = errors.New("repository schema is newer than this tract")
	// ErrExists is returned when creating a repository where one exists.
	ErrExists = errors.New("repository already exists")
	// ErrCorrupt is returned when the storage is damaged.
	ErrCorrupt = errors.New("repository is corrupted")
	// ErrReadOnly is returned by writes inside a read-only transaction.
	ErrReadOnly = errors.New("read-only transaction")
	// ErrPackWrittenInTx is returned by PublishPack for a pack the same
	// transaction created or appended to: publish it in a later one.
	ErrPackWrittenInTx = errors.New("pack was written in this transaction; publish it in a later one")
	// ErrNotEmpty is returned by Copy when the destination already holds
	// refs, reflogs or commits: a copy only goes into an empty repository.
	ErrNotEmpty = errors.New("destination repository is not empty")
	// ErrSameRepository is returned by Copy when the source and the
	// destination are one repository.
	ErrSameRepository = errors.New("source and destination are the same repository")
)

// Store is a repository's storage: a set of transactions over objects, refs
// and reflogs. A Store is safe for concurrent use; a Tx is not.
//
// ctx bounds a transaction's waits: for a lock (a file's, held by another
// process), and for a database server's replies. A transaction whose ctx
// is done before it starts does not start: View and Update return ctx's
// error. One whose ctx ends while it waits returns an error matching
// ctx's (errors.Is(err, context.Canceled), say), and rolls back: nothing
// of it is written. Work that must be recorded after its caller was
// interrupted (an interrupted turn) passes context.WithoutCancel(ctx).
type Store interface {
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a read-write transaction: it commits when fn returns
	// nil and rolls back everything fn wrote when fn returns an error.
	// It returns once the transaction is durable (unless the store was
	// opened without syncs).
	//
	// fn may run more than once, each time in a new transaction that sees
	// nothing of the runs before it: a database server may abort a
	// transaction that conflicted with another, and a file store that
	// grouped fn with other writes of the handle into one transaction
	// runs it again when one of them failed. Only the run whose
	// transaction commits counts, so fn must have no effect outside tx but
	// setting its results.
	Update(ctx context.Context, fn func(Tx) error) error
	// Path names the storage (the file path of a bbolt store).
	Path() string
	// Close releases the storage.
	Close() error
}

// Tx is one transaction. Byte slices it returns are the caller's to keep.
// Methods that find nothing return an error wrapping ErrNotFound; writes in a
// View return an error wrapping ErrReadOnly. A Tx must not be used after its
// closure returns.
type Tx interface {
	ObjectTx
	RefTx
	ReflogTx
	DerivedTx
}

// ObjectTx reads and writes blobs and commits.
type ObjectTx interface {
	// Blob returns the content stored under h.
	Blob(h dag.Hash) ([]byte, error)
	// PutBlob stores data (once: the same content is deduplicated) and
	// returns its hash.
	PutBlob(data []byte) (dag.Hash, error)
	// HasBlob reports whether a blob is stored.
	HasBlob(h dag.Hash) (bool, error)
	// DeleteBlob removes a blob; removing a missing one is not an error.
	DeleteBlob(h dag.Hash) error
	// ForEachBlob calls fn for every blob, in key order; data is valid only
	// during the call.
	ForEachBlob(fn func(h dag.Hash, data []byte) error) error

	// Commit returns the commit stored under h.
	Commit(h dag.Hash) (*dag.Commit, error)
	// CommitHeader returns a commit's first parent, kind, role and blob
	// without allocating: the hot path of first-parent walks.
	CommitHeader(h dag.Hash) (dag.Header, error)
	// PutCommit encodes and stores c and returns its hash. It does not check
	// that parents or blob exist; callers that build on user input do.
	PutCommit(c *dag.Commit) (dag.Hash, error)
	// HasCommit reports whether a commit is stored.
	HasCommit(h dag.Hash) (bool, error)
	// DeleteCommit removes a commit; removing a missing one is not an error.
	DeleteCommit(h dag.Hash) error
	// ForEachCommit calls fn with every commit's key and encoding, in key
	// order; raw is valid only during the call.
	ForEachCommit(fn func(h dag.Hash, raw []byte) error) error
	// CommitsWithPrefix returns up to limit commit hashes whose hex form
	// starts with prefix, in key order; limit <= 0 means no limit. The
	// prefix may have any length up to 64 and either case; anything but hex
	// digits is an error.
	CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error)
}

// RefTx reads and writes refs.
type RefTx interface {
	// Ref returns the ref stored under its full name.
	Ref(name string) (refs.Ref, error)
	// SetRef stores r under r.Name.
	SetRef(r refs.Ref) error
	// DeleteRef removes a ref; removing a missing one is not an error.
	DeleteRef(name string) error
	// Refs returns every ref, sorted by name.
	Refs() ([]refs.Ref, error)
}

// ReflogTx reads and writes reflogs.
type ReflogTx interface {
	// AppendReflog appends e to the reflog of ref name.
	AppendReflog(name string, e refs.Entry) error
	// Reflog returns the reflog of ref name, oldest first (empty if none).
	Reflog(name string) ([]refs.Entry, error)
	// ReflogNames returns the names of refs that have a reflog, sorted.
	ReflogNames() ([]string, error)
	// ReplaceReflog rewrites the reflog of name with es (used by gc and hard
	// reset to drop entries); an empty es deletes the reflog.
	ReplaceReflog(name string, es []refs.Entry) error
}

// HashedPutter is implemented by transactions that take objects their
// caller has already hashed (and, for commits, encoded), so that a bulk
// write does not hash everything twice. The caller guarantees that h is
// dag.Sum of the bytes (Fsck re-derives every hash) and does not change
// the slices before the transaction ends: the store keeps them.
type HashedPutter interface {
	// PutHashedBlob stores data under h, once. The store may keep data
	// itself: the caller must not change it afterwards.
	PutHashedBlob(h dag.Hash, data []byte) error
	// PutEncodedCommit stores raw, a dag.Encode of a commit, under h.
	PutEncodedCommit(h dag.Hash, raw []byte) error
}

// Lingerer is implemented by stores that open their file per burst of
// transactions (Bolt): Linger keeps it open between transactions until
// done is called, for work that runs many short transactions in a row.
type Lingerer interface {
	Linger() (done func())
}

var _ Lingerer = (*Bolt)(nil)

// SortedPacker is implemented by transactions that can pack storage pages
// when keys arrive in ascending order (the bbolt transaction): after
// PackSorted, the blobs and commits (and their counters) put in this
// transaction into buckets that were empty fill their pages instead of
// leaving half of each free for later inserts, which halves the space a
// first bulk load takes. Callers that sort before putting (Import,
// CommitMany) use it.
type SortedPacker interface {
	PackSorted()
}

// ReflogTailer is a Tx that reads the newest entries of a reflog without
// the rest (a Bolt store's does). See ReflogTail.
type ReflogTailer interface {
	// ReflogTail returns the newest n entries of the reflog of ref name,
	// oldest first: fewer when the reflog has fewer.
	ReflogTail(name string, n int) ([]refs.Entry, error)
}

// ReflogTail returns the newest n entries of the reflog of ref name,
// oldest first (fewer when it has fewer): through tx's own ReflogTail
// when it has one, else from the whole reflog.
func ReflogTail(tx ReflogTx, name string, n int) ([]refs.Entry, error) {
	if rt, ok := tx.(ReflogTailer); ok {
		return rt.ReflogTail(name, n)
	}
	es, err := tx.Reflog(name)
	if err != nil || n <= 0 {
		return nil, err
	}
	return es[max(len(es)-n, 0):], nil
}

// ReflogStreamer is a Tx that reads a reflog an entry at a time (a Bolt
// store's and a PostgreSQL store's do). See EachReflogEntry.
type ReflogStreamer interface {
	// EachReflogEntry calls fn with each entry of the reflog of ref name,
	// oldest first, as Reflog returns them, and stops at fn's first
	// error, which it returns. fn must not use the transaction (a
	// database's connection is reading the rows meanwhile).
	EachReflogEntry(name string, fn func(refs.Entry) error) error
}

// ReflogsStreamer is a Tx that reads every reflog in one pass (a
// PostgreSQL store's does: one query, not one a reflog). See EachReflog.
type ReflogsStreamer interface {
	// EachReflog is EachReflogEntry of every reflog, in the order of
	// ReflogNames.
	EachReflog(fn func(name string, e refs.Entry) error) error
}

// EachReflog calls fn with each entry of each reflog of tx, the reflogs
// in name order and each one's entries oldest first, stopping at fn's
// first error: in one pass where tx reads so (see ReflogsStreamer), else
// a reflog at a time (a file's reflogs are a bucket each). fn must not
// use tx.
func EachReflog(tx ReflogTx, fn func(name string, e refs.Entry) error) error {
	if rs, ok := tx.(ReflogsStreamer); ok {
		return rs.EachReflog(fn)
	}
	names, err := tx.ReflogNames()
	if err != nil {
		return err
	}
	for _, name := range names {
		err := EachReflogEntry(tx, name, func(e refs.Entry) error { return fn(name, e) })
		if err != nil {
			return err
		}
	}
	return nil
}

// EachReflogEntry calls fn with each entry of the reflog of ref name,
// oldest first, stopping at fn's first error: through tx's own
// EachReflogEntry when it has one, holding an entry at a time, else
// from the whole reflog. fn must not use tx.
func EachReflogEntry(tx ReflogTx, name string, fn func(refs.Entry) error) error {
	if rs, ok := tx.(ReflogStreamer); ok {
		return rs.EachReflogEntry(name, fn)
	}
	es, err := tx.Reflog(name)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// ResolveRef follows symbolic refs from name to a commit hash. ok is false
// when the chain ends at a ref that does not exist (an unborn branch).
func ResolveRef(tx RefTx, name string) (h dag.Hash, ok bool, err error) {
	for depth := 0; depth < 5; depth++ {
		r, err := tx.Ref(name)
		if errors.Is(err, ErrNotFound) {
			return dag.Hash{}, false, nil
		}
		if err != nil {
			return dag.Hash{}, false, err
		}
		if !r.IsSymbolic() {
			return r.Hash, true, nil
		}
		name = r.Target
	}
	return dag.Hash{}, false, fmt.Errorf("ref %s: symbolic refs nested too deep", name)
}

// Resolver adapts a transaction to refs.Resolver, one that follows long
// first-parent chains in one call (ReadChain).
func Resolver(tx Tx) refs.ChainResolver { return resolver{tx} }

type resolver struct{ tx Tx }

func (r resolver) ResolveRef(name string) (dag.Hash, bool, error) { return ResolveRef(r.tx, name) }
func (r resolver) CommitsWithPrefix(p string, limit int) ([]dag.Hash, error) {
	return r.tx.CommitsWithPrefix(p, limit)
}

// Commit reads commit h as the walks see it: a parent a salvage lost (see
// SalvageRecord), and those after it, left out, so that a revision that
// steps past it is one that goes past a root.
func (r resolver) Commit(h dag.Hash) (*dag.Commit, error) {
	c, err := r.tx.Commit(h)
	if err != nil || len(c.Parents) == 0 {
		return c, err
	}
	lost := lostOf(r.tx)
	for i, p := range c.Parents {
		if lost.commit(p) {
			c.Parents = c.Parents[:i]
			break
		}
	}
	return c, nil
}

// FirstParents reads the chain with ReadChain.
func (r resolver) FirstParents(h dag.Hash, n int) ([]dag.Hash, error) {
	links, err := ReadChain(r.tx, h, n, dag.Hash{})
	if err != nil {
		return nil, err
	}
	out := make([]dag.Hash, len(links))
	for i, l := range links {
		out[i] = l.Hash
	}
	return out, nil
}

var _ refs.ChainResolver = resolver{}

// Getter returns a dag.Getter reading commits through tx.
func Getter(tx ObjectTx) dag.Getter { return tx.Commit }

// notFoundError is ErrNotFound: it reads "not found" (not "ref not
// found", which a missing blob is not) and matches refs.ErrNotFound.
type notFoundError struct{}

func (notFoundError) Error() string { return "not found" }

func (notFoundError) Is(target error) bool { return target == refs.ErrNotFound }
