package tract

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/internal/compiled"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Names re-exported from the plumbing packages so that most programs import
// only package tract.
type (
	// Hash names a commit or blob: the BLAKE3-256 of its encoding.
	Hash = dag.Hash
	// Kind says what a commit is for.
	Kind = dag.Kind
	// Role is the speaker of a commit.
	Role = dag.Role
	// Message is one compiled message, in the OpenAI chat format.
	Message = llm.Message
	// LockedError is returned when another process (or handle) held the
	// file for longer than the lock timeout (see WithLockTimeout).
	LockedError = store.LockedError
	// ReadOnlyError is returned by a write to a file this process may only
	// read; errors.Is(err, ErrReadOnly) holds for it.
	ReadOnlyError = store.ReadOnlyError
	// CreateError is returned by Init when the repository file cannot be
	// created: its directory does not let this process add files.
	CreateError = store.CreateError
	// AmbiguousError is returned for an abbreviated hash with several matches.
	AmbiguousError = refs.AmbiguousError
	// ReflogPositionError is returned for a revision whose "@{…}" is not
	// a reflog position REF@{N}; errors.Is(err, ErrBadRevision) holds for
	// it.
	ReflogPositionError = refs.ReflogPositionError
	// ErasureError is returned by an operation that deleted text (a hard
	// reset, GC) and committed, when wiping the deleted bytes from the
	// file failed afterwards: the deletion stands, its result is returned
	// with the error, and the next open of the repository wipes them.
	ErasureError = store.ErasureError
	// DamagedError is returned by writes to a repository that Fsck found
	// damaged; errors.Is(err, ErrDamaged) holds for it.
	DamagedError = store.DamagedError
)

// Commit kinds and roles.
const (
	KindMessage  = dag.KindMessage
	KindSteering = dag.KindSteering
	KindSummary  = dag.KindSummary
	KindNote     = dag.KindNote
	KindError    = dag.KindError

	RoleSystem    = dag.RoleSystem
	RoleUser      = dag.RoleUser
	RoleAssistant = dag.RoleAssistant
	RoleTool      = dag.RoleTool
)

// DefaultDir and DefaultFile make up the repository path that Init creates
// and FindRepository looks for: .tract/tract.db.
const (
	DefaultDir  = ".tract"
	DefaultFile = "tract.db"
)

// Sentinel errors of package tract. Errors from lower layers are wrapped, so
// errors.Is works with these and with the plumbing packages' sentinels.
var (
	// ErrNotRepository is returned when a path is not a tract repository.
	ErrNotRepository = store.ErrNotRepository
	// ErrNewerSchema is returned for a repository written by a newer tract.
	ErrNewerSchema = store.ErrNewerSchema
	// ErrExists is returned by Init where a repository already exists.
	ErrExists = store.ErrExists
	// ErrDestinationBusy is returned by Copy and Salvage when another copy
	// or salvage into the same destination file is running.
	ErrDestinationBusy = store.ErrDestinationBusy
	// ErrCorrupt is returned when the file is damaged; run Fsck.
	ErrCorrupt = store.ErrCorrupt
	// ErrDamaged is returned by writes to a repository Fsck found damaged:
	// they are refused until it is salvaged or checked clean again.
	ErrDamaged = store.ErrDamaged
	// ErrDetachedHead is returned when committing with HEAD detached:
	// Switch(ctx, name, true) makes a branch at HEAD to commit on.
	ErrDetachedHead = errors.New("HEAD is detached")
	// ErrUnbornBranch is returned where a commit is needed but the current
	// branch has none yet.
	ErrUnbornBranch = errors.New("the current branch has no commits yet")
	// ErrEmptyContext is returned by Generate when the branch compiles to
	// no message to send (notes only, say; a branch with no commits at
	// all is ErrUnbornBranch): the model is not called and nothing is
	// written.
	ErrEmptyContext = errors.New("nothing to send to the model")
	// ErrCurrentBranch is returned when deleting the branch HEAD is on.
	ErrCurrentBranch = errors.New("cannot delete the branch HEAD is on")
	// ErrBranchExists is returned when creating a branch that exists.
	ErrBranchExists = errors.New("branch already exists")
	// ErrBranchNotFound is returned for a branch that does not exist.
	ErrBranchNotFound = errors.New("no such branch")
	// ErrUnknownRevision is returned for a revision that names nothing.
	ErrUnknownRevision = refs.ErrUnknownRevision
	// ErrUnknownGraphFormat is returned by WriteGraph for a format it
	// does not know.
	ErrUnknownGraphFormat = export.ErrUnknownGraphFormat
	// ErrInvalidBranchName is returned for a branch name that breaks the rules.
	ErrInvalidBranchName = refs.ErrInvalidName
	// ErrConflict is matched by every *ConflictError: the branch (or HEAD)
	// moved while an operation ran, because another writer got there first.
	ErrConflict = refs.ErrReferenceChanged
	// ErrInvalidText is returned for empty text or text that is not UTF-8.
	ErrInvalidText = dag.ErrInvalidText
	// ErrInvalidMeta is returned for metadata that is not a JSON object.
	ErrInvalidMeta = dag.ErrInvalidMeta
	// ErrInvalidKind is returned for a kind that is not one of the Kind constants.
	ErrInvalidKind = dag.ErrInvalidKind
	// ErrInvalidRole is returned for a role that is not one of the Role constants.
	ErrInvalidRole = dag.ErrInvalidRole
	// ErrBadRevision is returned for a revision whose syntax cannot be parsed.
	ErrBadRevision = refs.ErrBadRevision
	// ErrReadOnly is returned by writes to a repository opened WithReadOnly
	// or to a file this process may only read.
	ErrReadOnly = store.ErrReadOnly
	// ErrClosed is returned by methods called after Close.
	ErrClosed = errors.New("tract is closed")
)

// Tract is an open repository: a conversation DAG with refs and reflogs in
// one bbolt file. It is safe for concurrent use by goroutines, and the file
// may be shared with other processes (and other Tract handles): the file is
// locked only while one of its transactions runs, each method that changes
// the repository is one transaction (or, for a validated turn, a short
// transaction per step), and a branch that moved under an operation is a
// *ConflictError, never a lost commit.
//
// A Tract acts on HEAD; OnBranch returns a view that acts on one branch
// instead.
type Tract struct {
	*repo
	// branch is the full name of the branch this view acts on; "" acts on
	// HEAD.
	branch string
	// cache holds the last compiled first-parent chain of this view's
	// branch (shared by the views of one branch).
	cache *compiled.Cache
	// viewClosed is set when a view (not the handle) is closed.
	viewClosed atomic.Bool
	// side is set on a view made by SideChain: branch is then the
	// chain's temporary ref.
	side *sideChain
}

// repo is what every view of one opened repository shares.
type repo struct {
	st     store.Store
	client llm.Client
	clock  func() time.Time
	path   string
	limits Limits // with defaults filled in
	// recordsMin is compiled.Cache.MinBytes for the views' caches.
	recordsMin int

	// cachesMu guards caches, the compile caches by view branch.
	cachesMu sync.Mutex
	caches   map[string]*compiled.Cache

	// mu guards closed.
	mu     sync.RWMutex
	closed bool
}

// Option configures Open and Init.
type Option func(*config)

type config struct {
	clock       func() time.Time
	lockTimeout time.Duration
	noSync      bool
	readOnly    bool
	// uncompressed is WithUncompressedTexts'.
	uncompressed bool
	store        store.Store
	client       llm.Client
	limits       Limits
	// recordsMin is WithContextRecords' (compiled.Cache.MinBytes).
	recordsMin int
	// fsckProgress is FsckFile's WithFsckProgress.
	fsckProgress ProgressFunc
	// indexProgress is WithIndexProgress's.
	indexProgress ProgressFunc
	// ctx is WithContext's (nil: none).
	ctx context.Context
}

// WithClock makes the repository take commit and reflog times from clock
// instead of time.Now, so tests get reproducible hashes. A Tract used
// from several goroutines may call clock from them at once.
func WithClock(clock func() time.Time) Option {
	return func(c *config) { c.clock = clock }
}

// WithLockTimeout bounds how long each transaction waits while another
// process (or handle) holds the file (default 5s); after that the call
// returns a *LockedError. d <= 0 means not to wait at all.
func WithLockTimeout(d time.Duration) Option {
	return func(c *config) {
		c.lockTimeout = d
		if d <= 0 {
			c.lockTimeout = -1
		}
	}
}

// WithNoSync skips the fsync after each transaction. It is for throwaway
// repositories (tests, benchmarks): a crash can lose committed data.
func WithNoSync() Option {
	return func(c *config) { c.noSync = true }
}

// WithUncompressedTexts keeps the texts this handle writes to a
// repository file (and a Compact through it) as they are, instead of
// compressing them: for a file whose texts must be found by a search of
// its raw bytes. Texts written compressed read as ever; a database keeps
// its own.
func WithUncompressedTexts() Option {
	return func(c *config) { c.uncompressed = true }
}

// WithReadOnly makes every writing method fail with an error wrapping
// store.ErrReadOnly. (Reads take a shared lock with or without it, and a
// file this process may not write can be opened and read without it.) The
// handle still completes an erasure a crash interrupted, if it may write
// the file: see "Erasure" in docs/tract.md.
func WithReadOnly() Option {
	return func(c *config) { c.readOnly = true }
}

// WithStore uses st instead of opening a bbolt file; path is then only a
// label. It lets programs and tests run tract over another Store.
func WithStore(st store.Store) Option {
	return func(c *config) { c.store = st }
}

// DefaultContextRecords is the size of a branch's compiled context from
// which a validated turn keeps it as records (WithContextRecords).
const DefaultContextRecords = 256 << 10

// WithContextRecords sets the size, in bytes of compiled messages, from
// which a validated turn keeps its branch's compiled context in the
// repository as records, so that a new process reads a long context in a
// few records instead of every commit and text (default
// DefaultContextRecords). The records store the messages' texts a second
// time: below the size, compiling from the commits costs a few
// milliseconds and no record is written. 0 keeps records for every
// branch; a negative size keeps none.
func WithContextRecords(minBytes int) Option {
	return func(c *config) { c.recordsMin = minBytes }
}

// WithClient sets the model client Chat and Generate use by default.
func WithClient(c llm.Client) Option {
	return func(cfg *config) { cfg.client = c }
}

func newConfig(opts []Option) config {
	c := config{clock: time.Now, lockTimeout: store.DefaultLockTimeout, recordsMin: DefaultContextRecords}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Init creates a new repository at path (creating parent directories; the
// file gets mode 0600) with HEAD on the unborn branch main. It fails with
// ErrExists if path already is a repository. A postgres:// URL instead of
// a path creates the repository it names in that database (see
// IsDatabaseURL and docs/sharing.md's "Sharing across machines").
func Init(path string, opts ...Option) (*Tract, error) {
	return open(path, true, opts)
}

// Open opens the existing repository at path. It fails with ErrNotRepository
// when there is none, with ErrNewerSchema for a file written by a newer
// tract, and with a *LockedError when another process holds it. A
// postgres:// URL opens a repository in a database; it fails with a
// *postgres.SchemaError when the schema is missing or older (Migrate).
func Open(path string, opts ...Option) (*Tract, error) {
	return open(path, false, opts)
}

// OpenOrInit opens the repository at path, creating it first when there is
// no file there (or an empty one, as Init would): an agent's first run
// needs no separate init. When another process creates it at the same
// moment, OpenOrInit opens theirs. A file that is not a tract repository
// is an error, as with Open.
func OpenOrInit(path string, opts ...Option) (*Tract, error) {
	// An empty file may be another process's repository being created:
	// Init waits for its lock and then finds it made.
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode().IsRegular() && st.Size() == 0) {
		t, err := Init(path, opts...)
		if !errors.Is(err, ErrExists) {
			return t, err
		}
	}
	return Open(path, opts...)
}

func open(path string, create bool, opts []Option) (*Tract, error) {
	c := newConfig(opts)
	st := c.store
	if st == nil {
		var err error
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		if st, err = OpenStore(ctx, path, create, opts...); err != nil {
			return nil, err
		}
	}
	r := &repo{st: st, clock: c.clock, path: Redact(path), client: c.client, limits: c.limits.WithDefaults(), recordsMin: c.recordsMin}
	return r.viewOf(""), nil
}

// viewOf returns a Tract acting on branch (a full ref name), or on HEAD.
func (r *repo) viewOf(branch string) *Tract {
	r.cachesMu.Lock()
	defer r.cachesMu.Unlock()
	if r.caches == nil {
		r.caches = make(map[string]*compiled.Cache)
	}
	c := r.caches[branch]
	if c == nil {
		c = &compiled.Cache{MinBytes: r.recordsMin}
		r.caches[branch] = c
	}
	return &Tract{repo: r, branch: branch, cache: c}
}

// headView returns the Tract of t's handle that acts on HEAD.
func (t *Tract) headView() *Tract {
	if t.branch == "" {
		return t
	}
	return t.repo.viewOf("")
}

// OnBranch returns a view of the repository that acts on branch name
// instead of HEAD: its Commit (and System, User, Assistant, Note), Import,
// Chat, Generate, Compile, Log, Status, Head, Reset, PlanCompress and
// CompressRange read and move that branch and never HEAD, and "HEAD" in the
// revisions given to any of the view's methods means the branch's tip (so
// CreateBranch with no start point starts at it). So several agents
// (goroutines or processes) can extend their own branches of one
// repository without moving the shared HEAD. Checkout and Switch move HEAD
// as on t; Branches, DeleteBranch, LogAll, GC and Fsck are repository-wide.
//
// The branch must exist (see CreateBranch), unless it is the unborn branch
// HEAD is on; an invalid or missing name makes the view's methods fail
// with ErrInvalidBranchName or ErrBranchNotFound. A view shares t's file
// and model client; closing the view only ends the view, closing t ends
// every view of it.
func (t *Tract) OnBranch(name string) *Tract {
	name = strings.TrimPrefix(name, refs.BranchPrefix)
	return t.repo.viewOf(refs.BranchRef(name))
}

// Branch returns the short name of the branch a view made by OnBranch acts
// on, or "" for a Tract that acts on HEAD.
func (t *Tract) Branch() string {
	name, _ := refs.BranchName(t.branch)
	return name
}

// Close ends the Tract: methods called afterwards return ErrClosed. On a
// handle from Open or Init it waits for running transactions and releases
// the file, and every view of the handle ends with it; on a view from
// OnBranch it ends only that view.
func (t *Tract) Close() error {
	if t.side != nil {
		return t.closeSide()
	}
	if t.branch != "" {
		t.viewClosed.Store(true)
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	return t.st.Close()
}

// Path returns the repository's file path, or for a repository in a
// database its URL without the password.
func (t *Tract) Path() string { return t.path }

// Store returns the underlying store, for tools that work on the plumbing.
func (t *Tract) Store() store.Store { return t.st }

func (t *Tract) now() time.Time { return t.clock().UTC() }

// withStore runs fn with the store unless the handle or this view is
// closed; Close waits for it.
func (t *Tract) withStore(fn func(store.Store) error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed || t.viewClosed.Load() {
		return ErrClosed
	}
	return fn(t.st)
}

// isClosed reports whether the handle or this view is closed: for a
// check before work that does not start with the store.
func (t *Tract) isClosed() bool {
	return t.withStore(func(store.Store) error { return nil }) != nil
}

// Linger keeps the repository's file open between this handle's
// transactions until done is called: for a long-running program that
// writes or reads often, such as a server, whose transactions would
// otherwise each open, map and close the file again (a handle lets the
// file go store.DefaultIdleGrace after its last transaction). While
// Linger is in force the file stays open, and locked, until no
// transaction has run for 100 ms; on Linux another process that queues
// for the file (a command line, another program) still gets it within
// about a millisecond, once the transactions running end, and this
// handle opens it again on its next transaction (elsewhere the holder
// cannot see who waits, and the other process waits out the 100 ms). Calls nest: the file lingers until every done is
// called. done may be called more than once. A repository in PostgreSQL
// or in memory has no file to keep, and Linger does nothing there.
func (t *Tract) Linger() (done func()) {
	if l, ok := t.st.(store.Lingerer); ok {
		return l.Linger()
	}
	return func() {}
}

// view and update run fn in a transaction unless the tract is closed;
// ctx bounds the transaction's waits (see store.Store).
func (t *Tract) view(ctx context.Context, fn func(store.Tx) error) error {
	return t.withStore(func(st store.Store) error { return st.View(ctx, fn) })
}

func (t *Tract) update(ctx context.Context, fn func(store.Tx) error) error {
	return t.withStore(func(st store.Store) error { return st.Update(ctx, fn) })
}

// FindRepository returns the repository path for a command run in dir: the
// nearest .tract/tract.db in dir or one of its parents, like git looks for
// .git. It returns an error wrapping ErrNotRepository when there is none.
func FindRepository(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository: %w", err)
	}
	for d := abs; ; {
		p := filepath.Join(d, DefaultDir, DefaultFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("find repository: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", fmt.Errorf("%w: no %s/%s in %s or any parent directory",
		ErrNotRepository, DefaultDir, DefaultFile, abs)
}

// ParseKind returns the kind named s, or an error listing the valid kinds.
func ParseKind(s string) (Kind, error) { return dag.ParseKind(s) }

// ParseRole returns the role named s, or an error listing the valid roles.
func ParseRole(s string) (Role, error) { return dag.ParseRole(s) }

// SchemaVersion is the repository layout version this build reads and writes.
const SchemaVersion = store.SchemaVersion

// LeftoverError is returned by Copy and Salvage when the partial file a
// killed copy or salvage left beside the destination cannot be removed;
// removing it by hand lets the next one run.
type LeftoverError = store.LeftoverError
