package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
)

// Bucket names of the bbolt layout (schema 1). Every bucket is top-level:
//
//	meta     "magic" → "tract"; "schema" → uvarint SchemaVersion (schema 2);
//	         "erase-pending" → 1 while deleted bytes may remain in free
//	         pages (see erase.go); "damaged" → what fsck found, while the
//	         file refuses writes (see damaged.go); "salvage" → the salvage
//	         record of a file Salvage made (see salvage_record.go)
//	blobs    32-byte hash → content
//	commits  32-byte hash → dag.Encode of the commit; 32-byte hash + 'c' →
//	         Counters.Encode of that commit (schema 2)
//	refs     full ref name → refs.Ref.Encode
//	reflogs  full ref name → nested bucket: 8-byte big-endian sequence → refs.Entry.Encode
//
// Packs (staging, packs: bolt_pack.go), the journal (bolt_journal.go),
// refsets (refstaging, refsets: bolt_refsets.go) and compiled-context
// records (contexts: bolt_contexts.go) came later.
var (
	bucketMeta    = []byte("meta")
	bucketBlobs   = []byte("blobs")
	bucketCommits = []byte("commits")
	bucketRefs    = []byte("refs")
	bucketReflogs = []byte("reflogs")

	keyMagic  = []byte("magic")
	keySchema = []byte("schema")
	magic     = []byte("tract")
)

// DefaultLockTimeout is how long a transaction waits for another
// process's (or handle's) lock before it fails with a *LockedError.
const DefaultLockTimeout = 5 * time.Second

// LockedError is returned when another process (or another handle of this
// process) held the repository for longer than the lock timeout, or
// until the context of the transaction that waited for it ended.
type LockedError struct {
	// Path is the locked file.
	Path string
	// Waited is how long the transaction waited.
	Waited time.Duration
	// Err is the context's error when the context ended the wait
	// (context.Canceled, context.DeadlineExceeded), nil when the lock
	// timeout did. errors.Is(err, context.Canceled) holds for a wait
	// cancelled so.
	Err error
}

// Error returns the LockedError message.
func (e *LockedError) Error() string {
	switch {
	case errors.Is(e.Err, context.Canceled):
		return fmt.Sprintf("interrupted while waiting for the lock of repository %s (another process held it; waited %s)",
			e.Path, e.Waited.Round(time.Millisecond))
	case e.Err != nil:
		return fmt.Sprintf("repository %s is locked: another process held it past the deadline (waited %s: %v)",
			e.Path, e.Waited.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("repository %s is locked: another process held it for longer than the lock timeout (%s)", e.Path, e.Waited)
}

// Unwrap returns the context's error, when the context ended the wait.
func (e *LockedError) Unwrap() error { return e.Err }

// BoltOptions configure OpenBolt.
type BoltOptions struct {
	// Create makes a new repository; it fails with ErrExists when the file
	// already is one.
	Create bool
	// LockTimeout bounds each transaction's wait for the file's lock:
	// 0 means DefaultLockTimeout, a negative value not to wait at all.
	LockTimeout time.Duration
	// IdleGrace is how long the file stays open and locked after the last
	// transaction: 0 means DefaultIdleGrace, a negative value none. On
	// Linux a process that queues for the file meanwhile is let in
	// within about a millisecond.
	IdleGrace time.Duration
	// ReadOnly refuses every write: Update fails with ErrReadOnly. Reads
	// take a shared lock whether or not it is set. The one write a
	// read-only handle makes is completing an erasure a crash interrupted
	// (see erase.go), when the file is writable for this process.
	ReadOnly bool
	// Uncompressed keeps the texts this handle writes (and a compaction
	// through it) as they are, not compressed: for a file whose texts a
	// search of its raw bytes must find, as the crash tests search it.
	// Texts other handles compressed read as ever.
	Uncompressed bool
	// NoSync skips fsync after each transaction. It is for throwaway
	// repositories in tests; a crash can then lose committed data.
	NoSync bool
	// Context, when not nil, bounds OpenBolt's own wait for the file's
	// lock (it reads the file's metadata), as a transaction's context
	// does; the transactions afterwards take their own.
	Context context.Context
	// IndexProgress, when not nil, is told how far the build of the word
	// index goes when a write transaction finds the file without a
	// current one (a file of an older tract, or one a salvage wrote) and
	// builds it before its own work: done of total commits, about ten
	// times a second from a goroutine of its own (total is 0 until the
	// commits are counted), never waited on by the transaction, and a
	// last time once the transaction ended, with done equal to total;
	// only that last report has them equal, and only when the
	// transaction committed does its total equal the earlier ones'. It
	// is not called when no build happens.
	IndexProgress func(done, total int64)
}

// Bolt is the bbolt implementation of Store. It holds the file open and
// locked only while transactions run (and for the short idle grace after
// them), so many processes and handles can share one repository; see
// "Sharing the file" in docs/storage.md.
type Bolt struct {
	path     string
	readOnly bool
	ss       *sessions
	// packs says when packs are merged: defaultPackPolicy, or a smaller
	// one in tests.
	packs packPolicy
	// journal bounds the journal: defaultJournalPolicy, or a smaller one
	// in tests.
	journal journalPolicy
	// writeLimit is sessionWriteLimit, or a smaller one in tests.
	writeLimit int64
	// words says when the word index merges its pending documents:
	// defaultWordsPolicy, or a smaller one in tests.
	words wordsPolicy
	// res bounds how much of the file reads keep resident (resident.go).
	res residency
	// indexProgress is BoltOptions.IndexProgress; building counts the
	// commits of the word index a write transaction of this handle is
	// building, or built, until endBuild stops it (guarded by buildMu).
	indexProgress func(done, total int64)
	buildMu       sync.Mutex
	building      *indexBuild
	// background runs the work writes leave for later: the upkeep
	// crowded transactions left, the merges of packs after a checkpoint
	// (see bolt_upkeep.go).
	background backgroundWork
	// codec keeps the decoder and encoder of stored texts (blobcodec.go);
	// uncompressed is BoltOptions.Uncompressed.
	codec        *blobCodec
	uncompressed bool
}

// indexBuild counts the commits of a build of the whole word index.
type indexBuild struct {
	count *progress.Counter
	// held is set when the build counted all its commits but the last,
	// which endBuild counts once the transaction committed.
	held atomic.Bool
}

var _ Store = (*Bolt)(nil)

// OpenBolt opens (or with opts.Create, creates) the repository file at path
// and checks that it is a tract repository. It holds no lock when it
// returns. A path where no file is gives an error for which both
// errors.Is(err, ErrNotRepository) and errors.Is(err, fs.ErrNotExist)
// hold.
func OpenBolt(path string, opts BoltOptions) (*Bolt, error) {
	switch {
	case opts.LockTimeout == 0:
		opts.LockTimeout = DefaultLockTimeout
	case opts.LockTimeout < 0:
		opts.LockTimeout = 0
	}
	if opts.IdleGrace == 0 {
		opts.IdleGrace = DefaultIdleGrace
	}
	st, statErr := os.Stat(path)
	switch {
	case statErr == nil && st.IsDir():
		return nil, fmt.Errorf("open %s: %w: it is a directory", path, ErrNotRepository)
	case errors.Is(statErr, fs.ErrNotExist) && !opts.Create:
		return nil, fmt.Errorf("open %s: %w: %w", path, ErrNotRepository, noFile{})
	case statErr == nil && st.Size() == 0 && !opts.Create:
		// bbolt would turn an empty file into a database: leave it alone.
		return nil, fmt.Errorf("open %s: %w: the file is empty", path, ErrNotRepository)
	case errors.Is(statErr, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			var pe *fs.PathError
			if isPermission(err) && errors.As(err, &pe) {
				return nil, &CreateError{Path: path, Dir: filepath.Dir(pe.Path), Err: err}
			}
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
	case statErr != nil:
		return nil, fmt.Errorf("open %s: %w", path, statErr)
	}
	b := &Bolt{path: path, readOnly: opts.ReadOnly && !opts.Create, ss: newSessions(path, opts), packs: defaultPackPolicy(), journal: defaultJournalPolicy(), writeLimit: sessionWriteLimit, words: defaultWordsPolicy(), indexProgress: opts.IndexProgress, codec: &blobCodec{}, uncompressed: opts.Uncompressed}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := b.checkOrInit(ctx, opts.Create); err != nil {
		b.ss.close()
		return nil, err
	}
	return b, nil
}

// noFile is the "no such file" of a repository that does not exist:
// errors.Is(err, fs.ErrNotExist) holds for it, as for the operating
// system's own.
type noFile struct{}

func (noFile) Error() string        { return "no such file" }
func (noFile) Is(target error) bool { return target == fs.ErrNotExist }

// checkOrInit creates tract's buckets in a new file, or checks an existing
// file's metadata. It reads pages, so a damaged file can make bbolt panic or
// fault; that becomes ErrCorrupt (and ErrNotRepository) instead of a crash.
func (b *Bolt) checkOrInit(ctx context.Context, create bool) error {
	s, err := b.ss.acquire(ctx, create)
	if err != nil {
		return err
	}
	defer b.ss.release(s)
	return b.checkOrInitDB(s.db, create)
}

func (b *Bolt) checkOrInitDB(db *bolt.DB, create bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = corruptFile(b.path, damage(r))
		}
	}()
	if create {
		return db.Update(func(tx *bolt.Tx) error {
			if m := tx.Bucket(bucketMeta); m != nil && bytes.Equal(m.Get(keyMagic), magic) {
				return fmt.Errorf("create %s: %w", b.path, ErrExists)
			}
			if tx.Bucket(bucketMeta) == nil && hasBuckets(tx) {
				return fmt.Errorf("create %s: %w: the file is a bbolt database of another program; choose another path", b.path, ErrNotRepository)
			}
			for _, name := range [][]byte{bucketMeta, bucketBlobs, bucketCommits, bucketRefs, bucketReflogs} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("create bucket %s: %w", name, err)
				}
			}
			m := tx.Bucket(bucketMeta)
			if err := m.Put(keyMagic, magic); err != nil {
				return err
			}
			if err := m.Put(keySchema, binary.AppendUvarint(nil, schemaCounters)); err != nil {
				return err
			}
			// A new file keeps its texts in their stored forms from the
			// start.
			if err := markForms(tx); err != nil {
				return err
			}
			head := refs.Ref{Name: refs.HEAD, Target: refs.BranchRef(refs.DefaultBranch)}
			return tx.Bucket(bucketRefs).Put([]byte(head.Name), head.Encode())
		})
	}
	return db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || !bytes.Equal(m.Get(keyMagic), magic) {
			return fmt.Errorf("open %s: %w: it is a bbolt file without tract's metadata", b.path, ErrNotRepository)
		}
		v, n := binary.Uvarint(m.Get(keySchema))
		if n <= 0 {
			return fmt.Errorf("open %s: %w: schema version is missing", b.path, ErrNotRepository)
		}
		if v > SchemaVersion {
			return fmt.Errorf("open %s: %w: the file has schema %d, this tract reads up to %d; upgrade tract", b.path, ErrNewerSchema, v, SchemaVersion)
		}
		for _, name := range [][]byte{bucketBlobs, bucketCommits, bucketRefs, bucketReflogs} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("open %s: %w: bucket %s is missing", b.path, ErrNotRepository, name)
			}
		}
		return nil
	})
}

// Path returns the file path.
func (b *Bolt) Path() string { return b.path }

// Close waits for running transactions, then closes the file if it is
// open. Transactions started afterwards fail.
func (b *Bolt) Close() error {
	b.background.close()
	return b.ss.close()
}

// View runs fn in a read-only transaction, under a shared lock on the file
// unless this handle already holds it for writing. ctx bounds the wait for
// the lock (as the lock timeout does); fn runs in memory and is not
// interrupted by it.
func (b *Bolt) View(ctx context.Context, fn func(Tx) error) error {
	return b.inSession(ctx, false, func(s *session) error {
		return b.view(s.db, &s.journal, func(tx Tx) error {
			tx.(*boltTx).pmeta = &s.packs
			return fn(tx)
		})
	})
}

// view runs fn in a read-only transaction of db, whose journal is indexed
// by jidx (nil: the transaction indexes it itself).
func (b *Bolt) view(db *bolt.DB, jidx *journalIndexes, fn func(Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer b.guard(&err)
	return db.View(func(tx *bolt.Tx) error { return fn(b.tx(tx, jidx)) })
}

// tx returns the Tx of bbolt transaction tx.
func (b *Bolt) tx(tx *bolt.Tx, jidx *journalIndexes) *boltTx {
	return &boltTx{tx: tx, texts: textForms{codec: b.codec, uncompressed: b.uncompressed}, policy: b.packs, jpolicy: b.journal, jidx: jidx, wpolicy: b.words, res: &b.res}
}

// Update runs fn in a read-write transaction, committed only if fn returns
// nil, under the file's exclusive lock. Updates of this handle that run
// at once are grouped into one transaction and one sync, each still all
// or nothing (see bolt_group.go): fn may then run more than once. Update
// returns once the transaction is synced. When fn deleted stored text,
// Update then wipes the file's free pages before it returns (see
// erase.go); if that fails, the transaction stays committed and the error
// is an *ErasureError. ctx bounds the wait for the lock, as in View.
func (b *Bolt) Update(ctx context.Context, fn func(Tx) error) error {
	var erased, later bool
	err := b.inSession(ctx, true, func(s *session) (err error) {
		erased, later, err = b.grouped(s, fn, isBackground(ctx))
		if st := s.db.Stats(); st.TxStats.GetPageAlloc() > b.writeLimit {
			b.ss.retire(s)
		}
		return err
	})
	b.endBuild(err == nil)
	if err != nil {
		return err
	}
	if later {
		// The journal became a pack, whose tier may be due for a merge
		// too large for one transaction, or the transaction left its
		// upkeep to one of its own.
		b.workLater()
	}
	if !erased {
		return nil
	}
	return b.completeErasure()
}

// update runs fn in a read-write transaction of session s and reports
// whether the committed transaction deleted stored text, and whether it
// left work for the background (see boltTx.later).
func (b *Bolt) update(s *session, fn func(Tx) error) (erased, later bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer b.guard(&err)
	err = s.db.Update(func(tx *bolt.Tx) error {
		btx, err := b.beginWrite(s, tx)
		if err != nil {
			return err
		}
		if err := fn(btx); err != nil {
			return err
		}
		btx.crowded = s.group.crowded()
		err = btx.finishWrite()
		erased, later = btx.erased, btx.later()
		return err
	})
	return erased && err == nil, later && err == nil, err
}

// finishWrite ends the work of a write transaction whose functions ran:
// the word index's pending documents, the journal's record (which may
// checkpoint it: t.checkpointed), the upkeep a background transaction
// was asked to do (t.upkeep), and the erasure mark when the transaction
// deleted stored text (t.erased). The single and the grouped update
// share it, as they share beginWrite.
func (t *boltTx) finishWrite() error {
	if err := t.finishWords(); err != nil {
		return err
	}
	now := time.Now()
	if err := t.commitJournal(now); err != nil {
		return err
	}
	if t.upkeep {
		if err := t.runUpkeep(now); err != nil {
			return err
		}
	}
	if t.erased {
		return markErasure(t.tx)
	}
	return nil
}

// beginWrite starts the work of a write transaction tx of session s: the
// file's schema raised to the current one, a file marked damaged
// refused, the word index built when the file has none it reads, and
// tract's view of tx. A build counts its commits in a counter Update
// stops once the transaction ended and the session is released, so
// that its last report is made outside them (see endBuild).
func (b *Bolt) beginWrite(s *session, tx *bolt.Tx) (*boltTx, error) {
	if err := upgrade(tx); err != nil {
		return nil, fmt.Errorf("upgrade %s to schema %d: %w", b.path, schemaCounters, err)
	}
	if err := damaged(tx, b.path); err != nil {
		return nil, err
	}
	btx := b.tx(tx, &s.journal)
	btx.pmeta = &s.packs
	if !wordIndexCurrent(tx) {
		// A file of a tract older than the word index, or than its
		// format (or one a salvage wrote), gets it with its first write.
		btx.wbuild = b.startBuild()
		err := btx.rebuildWords()
		btx.wbuild = nil
		if err != nil {
			return nil, fmt.Errorf("upgrade %s to schema %d: %w", b.path, schemaWords, err)
		}
	}
	return btx, nil
}

// startBuild returns the count of a word index build, reporting to
// BoltOptions.IndexProgress (nil when it is nil), and keeps it for
// endBuild. The count of an earlier build not ended yet (a transaction
// that rolled back and was run again) is stopped first.
func (b *Bolt) startBuild() *indexBuild {
	if b.indexProgress == nil {
		return nil
	}
	c := &indexBuild{count: progress.Start(b.indexProgress, 0)}
	b.buildMu.Lock()
	old := b.building
	b.building = c
	b.buildMu.Unlock()
	if old != nil {
		old.count.Stop()
	}
	return c
}

// endBuild stops the count of the word index build of a transaction
// that ended, if there was one, with its last report. The build counts
// its last commit here, when the transaction committed: until then no
// report has done equal to total, so that a reader of the reports can
// tell the end of a build from its last commit read (the postings are
// written, and the transaction committed, after that).
func (b *Bolt) endBuild(committed bool) {
	b.buildMu.Lock()
	c := b.building
	b.building = nil
	b.buildMu.Unlock()
	if c == nil {
		return
	}
	if committed && c.held.Load() {
		c.count.Add(1)
	}
	c.count.Stop()
}

// upgrade brings a file of an older schema to SchemaVersion inside the
// transaction of its first write, so the upgrade and that write happen
// together or not at all, and reads never need to write. Schema 1 to 2
// only records the version: the counters entries it adds are computed as
// commits become tips.
func upgrade(tx *bolt.Tx) error { return raiseSchema(tx, schemaCounters) }

// raiseSchema records schema v unless the file has that one or a later.
func raiseSchema(tx *bolt.Tx, v uint64) error {
	m := tx.Bucket(bucketMeta)
	if cur, n := binary.Uvarint(m.Get(keySchema)); n > 0 && cur >= v {
		return nil
	}
	return m.Put(keySchema, binary.AppendUvarint(nil, v))
}

// Linger keeps the file open between this handle's transactions until done
// is called (or for at most 100ms without one), instead of closing it one
// idle grace after each: for work that runs many short transactions in a
// row, such as a paged walk, which would otherwise reopen the file for
// each. Another process that queues for the file is still let in within
// about an idle grace (on Linux; elsewhere it waits up to the 100ms).
func (b *Bolt) Linger() (done func()) { return b.ss.linger() }

// Exclusive runs fn with the file locked for writing for all of fn, and no
// other transaction of this handle running: for work that spans several
// transactions or reads bbolt directly (fsck, scrubbing free pages). The
// *bolt.DB must not be kept after fn returns. ctx bounds the wait for the
// lock, as in Update.
func (b *Bolt) Exclusive(ctx context.Context, fn func(db *bolt.DB) error) error {
	if b.readOnly {
		return b.errReadOnly()
	}
	err := b.ss.sole(ctx, func(s *session) error {
		// fn may write packs as no transaction of tract's does.
		defer s.packs.reset()
		return fn(s.db)
	})
	return b.sessionError(err)
}

// Shared runs fn with the file locked for reading (or writing, when this
// handle holds it so) for all of fn. The *bolt.DB must not be kept after fn
// returns, and fn must only read. ctx bounds the wait for the lock, as in
// View.
func (b *Bolt) Shared(ctx context.Context, fn func(db *bolt.DB) error) error {
	return b.inSession(ctx, false, func(s *session) error { return fn(s.db) })
}

// inSession runs fn in a session of this handle, a writable one when write
// is set, and releases it.
func (b *Bolt) inSession(ctx context.Context, write bool, fn func(s *session) error) error {
	if write && b.readOnly {
		return b.errReadOnly()
	}
	s, err := b.ss.acquire(ctx, write)
	if err != nil {
		return b.sessionError(err)
	}
	defer b.ss.release(s)
	return fn(s)
}

// errReadOnly refuses a write through a handle opened read-only.
func (b *Bolt) errReadOnly() error {
	return fmt.Errorf("%s: %w: the repository was opened read-only", b.path, ErrReadOnly)
}

func (b *Bolt) sessionError(err error) error {
	if errors.Is(err, errStoreClosed) {
		return fmt.Errorf("%s: %w", b.path, err)
	}
	return err
}

// guard turns a panic raised by bbolt (it panics on corrupt pages) or a
// memory fault (reading past the end of a truncated file's memory map) into
// ErrCorrupt. Any other panic, such as a bug in the caller's closure, goes
// on: it says nothing about the file. Either way bbolt's own deferred
// cleanup has rolled the transaction back.
func (b *Bolt) guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if !isFault(r) && !panickedInBbolt() {
		panic(r)
	}
	*err = fmt.Errorf("%s: %w (%s)", b.path, ErrCorrupt, damage(r))
}

// damage says what a panic recovered while reading a damaged file found:
// bbolt's own message ("invalid page type"), or, for a fault the runtime
// raised (a read past the end of a truncated file's memory map, a page
// that points nowhere), a sentence about the file rather than the
// runtime's text, which means nothing to a user.
func damage(r any) string {
	if _, ok := r.(runtime.Error); ok {
		return "a page points outside the data the file holds"
	}
	return rephraseAssertion(fmt.Sprint(r))
}

// rephraseAssertion turns the page checks bbolt panics with ("assertion
// failed: Page expected to be: 45, but self identifies as 0") into what
// they say about the file, in the words of rawfile.go's reader; other
// messages lose only the "assertion failed: " that means nothing to a
// user.
func rephraseAssertion(msg string) string {
	var want, got uint64
	var flags string
	if _, err := fmt.Sscanf(msg, "assertion failed: Page expected to be: %d, but self identifies as %d", &want, &got); err == nil {
		return fmt.Sprintf("page %d holds the header of page %d", want, got)
	}
	if _, err := fmt.Sscanf(msg, "assertion failed: page %d: has unexpected type/flags: %s", &got, &flags); err == nil {
		return fmt.Sprintf("page %d is not the kind of page expected there (flags %s)", got, flags)
	}
	if _, err := fmt.Sscanf(msg, "invalid page type: %d: %s", &got, &flags); err == nil {
		return fmt.Sprintf("page %d is not the kind of page expected there (flags %s)", got, flags)
	}
	// "pgid (9) above high water mark (7)", "pgId (…", "root bucket pgid (…",
	// "freelist pgid (…": a page number past the file's pages.
	if what, rest, ok := strings.Cut(msg, " ("); ok && strings.HasSuffix(strings.ToLower(what), "pgid") {
		if _, err := fmt.Sscanf(rest, "%d) above high water mark (%d)", &got, &want); err == nil {
			whose := "a page"
			switch strings.ToLower(what) {
			case "root bucket pgid":
				whose = "the root bucket"
			case "freelist pgid":
				whose = "the free list"
			}
			return fmt.Sprintf("%s points to page %d, past the file's %d pages", whose, got, want)
		}
	}
	var kind string
	if _, err := fmt.Sscanf(msg, "invalid freelist page: %d, page type is %s", &got, &kind); err == nil {
		kind = "a " + kind + " page"
		if !slices.Contains([]string{"a branch page", "a leaf page", "a meta page"}, kind) {
			kind = "a page of no known kind"
		}
		return fmt.Sprintf("the free list is damaged: its page's header is not a free-list page's (it names page %d, %s)", got, kind)
	}
	return strings.TrimPrefix(msg, "assertion failed: ")
}

// openFailure says why a file could not be opened, for a problem of the
// file that Fsck reports after the file's path: what is damaged, without
// the "open PATH: repository is corrupted" the opening error begins with,
// when it is an ErrCorrupt.
func openFailure(err error) string {
	var ce *corruptFileError
	if errors.As(err, &ce) {
		return ce.what
	}
	return err.Error()
}

// corruptFileError is the error of opening a file whose pages are
// damaged. errors.Is holds for ErrCorrupt and, as for every file OpenBolt
// cannot use, for ErrNotRepository.
type corruptFileError struct {
	path string
	// what says what is damaged.
	what string
}

func corruptFile(path, what string) error { return &corruptFileError{path: path, what: what} }

// Error returns the corruptFileError message.
func (e *corruptFileError) Error() string {
	return fmt.Sprintf("open %s: %v: %s", e.path, ErrCorrupt, e.what)
}

// Is makes errors.Is(err, ErrCorrupt) and errors.Is(err, ErrNotRepository)
// hold.
func (e *corruptFileError) Is(target error) bool {
	return target == ErrCorrupt || target == ErrNotRepository
}

// isFault reports whether a recovered value is the runtime error that
// debug.SetPanicOnFault makes of a memory fault at a non-nil address.
func isFault(r any) bool {
	e, ok := r.(interface {
		error
		Addr() uintptr
	})
	return ok && e.Addr() != 0
}

// panickedInBbolt reports whether the panic being recovered was raised in
// bbolt's code: whether the first frame below runtime.gopanic that is not
// in the runtime belongs to bbolt. It must be called from the deferred
// function that recovers.
func panickedInBbolt() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// SetSchemaVersion overwrites the stored schema version. It exists for tests
// of the newer-schema refusal and for future migrations.
func (b *Bolt) SetSchemaVersion(v uint64) error {
	return b.Exclusive(context.Background(), func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keySchema, binary.AppendUvarint(nil, v))
		})
	})
}

func hasBuckets(tx *bolt.Tx) bool {
	k, _ := tx.Cursor().First()
	return k != nil
}
