package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultIdleGrace is how long a Bolt store keeps the file open (and
// locked) after its last transaction, so that a burst of transactions, or
// transactions a few milliseconds apart, pay for one open instead of one
// each (a reopen costs the journal's index rebuilt, bbolt's open and
// unmapping, about 0.3ms, and a write of the file's inode). It is 10ms
// on Linux, where a process that queues for the file does not wait for
// it: the idle holder looks every millisecond and hands the file over;
// 1ms elsewhere, where the holder cannot see who waits.
const DefaultIdleGrace = defaultIdleGrace

// idleTick is how often an idle session looks at the clock and at the
// queue for the file.
const idleTick = time.Millisecond

// writerQuantum is how long a session may go on taking transactions while
// another writer is queued: handing the file over costs a reopen (about
// 0.2ms here), so writers that take turns transaction by transaction would
// spend as long reopening as writing. A queued reader is let in at once
// instead, after the running transactions: a reader waits at most about
// one write transaction.
const writerQuantum = 2 * time.Millisecond

// waiter says who is queued for the file.
type waiter int

const (
	noWaiter waiter = iota
	readerWaits
	writerWaits
)

// sessionWriteLimit is how many bytes of pages a session writes before it
// closes (after its running transactions) and the next transaction opens
// the file again. Each transaction reads, through bbolt's memory map, the
// pages the one before it wrote (the end of a pack being appended to, the
// journal), and a mapped page that was read stays in the process's
// resident memory until the map goes: an import keeps about 3% of what a
// session wrote (36 MiB at ten million messages in one session; about
// 2 MiB with this limit). Reopening costs about 0.2 ms, once per three
// thousand single commits.
const sessionWriteLimit = 64 << 20

// errLockTimeout is queueLock's "gave up waiting".
var errLockTimeout = errors.New("timed out waiting for the lock")

// errStoreClosed is returned by transactions started after Close.
var errStoreClosed = errors.New("store is closed")

// session is one open of the bbolt file: while it exists this handle holds
// the file's lock, exclusive for a writable session, shared otherwise.
type session struct {
	db    *bolt.DB
	file  *os.File    // the descriptor bbolt opened the file with; the queue lock is on it
	held  os.FileInfo // file's identity, to tell whether the path still names it
	write bool
	// journal indexes the file's journal for the session's transactions.
	journal journalIndexes
	// packs keeps what transactions read of the published packs (see
	// packMetas).
	packs packMetas
	// group groups the session's concurrent write transactions into one
	// (see bolt_group.go).
	group writeGroup

	// The fields below are guarded by sessions.mu.
	users    int       // transactions running in the session
	served   int       // transactions the session has run
	opened   time.Time // when the session got the lock
	draining bool      // takes no new transaction; closes when users reaches 0
	sole     bool      // an exclusive operation runs: no other transaction joins
	// idle closes the session once no transaction has run for the idle
	// grace (see idleCheck). It is armed when a transaction ends and it
	// is not armed already, and left running while transactions come
	// and go: arming a timer for each transaction woke the runtime's
	// poller, another thread, at every commit.
	idle      *time.Timer
	armed     bool      // idle will fire
	ended     time.Time // when the last transaction ended
	lingering bool      // a Linger was active when it ended
}

// sessions opens the file when a transaction needs it and closes it once no
// transaction has needed it for the idle grace, so that an idle handle
// holds no lock. Transactions of one handle that overlap share a session:
// bbolt runs their reads concurrently and their writes one at a time.
type sessions struct {
	path string
	opts BoltOptions

	mu      sync.Mutex // guards every field below and the session fields marked so
	changed sync.Cond  // broadcast when cur, opening or a session's users change
	cur     *session   // the open session, if any
	opening bool       // a goroutine is opening a session (outside mu)
	create  bool       // the next open may create the file (Init's first open)
	writers int        // goroutines waiting for a writable session
	lingers int        // Linger calls not yet done
	closed  bool
}

func newSessions(path string, opts BoltOptions) *sessions {
	ss := &sessions{path: path, opts: opts, create: opts.Create}
	ss.changed.L = &ss.mu
	return ss
}

// acquire returns a session that can run a transaction (a writable one when
// write is set), opening one if needed. The caller must release it. It
// waits for the file's lock at most the lock timeout, and no longer than
// ctx lasts: either ends the wait with a *LockedError.
func (ss *sessions) acquire(ctx context.Context, write bool) (*session, error) {
	began := time.Now()
	deadline := began.Add(ss.opts.LockTimeout)
	if err := ctx.Err(); err != nil {
		return nil, err // nothing begins: no wait to speak of
	}
	// A wait on changed below ends when ctx does.
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			ss.mu.Lock()
			ss.changed.Broadcast()
			ss.mu.Unlock()
		})
		defer stop()
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if write {
		ss.writers++
		defer func() {
			if ss.writers--; ss.writers == 0 {
				ss.changed.Broadcast() // readers held back for writers may open now
			}
		}()
	}
	for {
		if ss.closed {
			return nil, errStoreClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, &LockedError{Path: ss.path, Waited: time.Since(began), Err: err}
		}
		s := ss.cur
		switch {
		case s == nil && ss.opening:
			ss.changed.Wait()
		case s == nil && !write && ss.writers > 0:
			// A writer waits: it opens the next session. A shared one
			// opened here would not take this reader (accepts) and would
			// be closed again at once, over and over, while the writer
			// never got to open.
			ss.changed.Wait()
		case s == nil:
			if err := ss.openLocked(ctx, write, deadline); err != nil {
				return nil, err
			}
		case s.sole:
			ss.changed.Wait()
		case !s.draining && s.accepts(write, ss.writers):
			// Another process queued for the file: let it in before
			// running more transactions here.
			if s.served > 0 && s.yields() {
				s.draining = true
				continue
			}
			// A write must go to the file the path names: a file removed
			// (or replaced) since the session opened it would take the
			// write, and lose it with the file. Open the path again.
			if write && s.served > 0 && !s.atPath(ss.path) {
				s.draining = true
				continue
			}
			s.users++
			return s, nil
		case s.users == 0:
			ss.closeLocked(s)
		default:
			// A shared session while a writer waits: let it drain.
			s.draining = true
			ss.changed.Wait()
		}
	}
}

// accepts reports whether a transaction may join s. A writable session
// takes anything; a shared one takes reads while no writer of this handle
// is waiting, so that readers cannot starve a writer.
func (s *session) accepts(write bool, writers int) bool {
	if s.write {
		return true
	}
	return !write && writers == 0
}

// atPath reports whether path still names the file s holds.
func (s *session) atPath(path string) bool { return namesFile(path, s.held) }

// yields reports whether s should hand the file over to a queued process:
// to a reader at once, to a writer after the writer quantum.
func (s *session) yields() bool {
	switch queued(s.file) {
	case readerWaits:
		return true
	case writerWaits:
		return time.Since(s.opened) >= writerQuantum
	}
	return false
}

// retire makes s take no new transaction: it closes once its running ones
// end, and the next transaction opens the file again.
func (ss *sessions) retire(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.draining = true
}

// release ends a transaction's use of s. The last user starts the idle
// grace, or closes s at once when it is draining or someone is queued.
func (ss *sessions) release(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.users--
	s.served++
	ss.changed.Broadcast()
	if s.users > 0 || ss.cur != s {
		return
	}
	if s.draining || ss.closed || ss.opts.IdleGrace < 0 || ss.writers > 0 && !s.write || s.yields() {
		ss.closeLocked(s)
		return
	}
	s.ended, s.lingering = time.Now(), ss.lingers > 0
	ss.armIdle(s, min(idleTick, ss.opts.IdleGrace))
}

// armIdle makes s's idle timer fire in d, unless it is armed already.
func (ss *sessions) armIdle(s *session, d time.Duration) {
	switch {
	case s.armed:
	case s.idle == nil:
		s.idle = time.AfterFunc(d, func() { ss.idleCheck(s) })
	default:
		s.idle.Reset(d)
	}
	s.armed = true
}

// maxLinger bounds how long a lingering session stays open without a
// transaction: a walk whose caller stopped reading for longer (output to
// a pager, say) lets the file go.
const maxLinger = 100 * time.Millisecond

// idleCheck runs when s's idle timer fires. A session in use is left
// alone (the end of its last transaction arms the timer again). An idle
// one closes once no transaction has run for the idle grace (while a
// Linger is active, for maxLinger if that is longer), or as soon as
// another process queued for the file: it looks every idle tick.
func (ss *sessions) idleCheck(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.armed = false
	if ss.cur != s || s.users > 0 {
		return
	}
	limit := ss.opts.IdleGrace
	if s.lingering && ss.lingers > 0 {
		limit = max(limit, maxLinger)
	}
	if idle := time.Since(s.ended); idle < limit && queued(s.file) == noWaiter {
		ss.armIdle(s, min(idleTick, limit-idle))
		return
	}
	ss.closeLocked(s)
}

// linger asks idle sessions to stay open until done is called: for a walk
// that reads in many short transactions, each of which would otherwise
// reopen the file. A process that queues for the file still gets it
// within about an idle grace.
func (ss *sessions) linger() (done func()) {
	ss.mu.Lock()
	ss.lingers++
	ss.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ss.mu.Lock()
			ss.lingers--
			ss.mu.Unlock()
		})
	}
}

// sole runs fn alone in a writable session: no other transaction of this
// handle runs while it does, and the file stays locked for all of it. ctx
// bounds the wait for the lock, as in acquire.
func (ss *sessions) sole(ctx context.Context, fn func(*session) error) error {
	s, err := ss.acquire(ctx, true)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	s.sole = true
	for s.users > 1 {
		ss.changed.Wait()
	}
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		s.sole = false
		ss.mu.Unlock()
		ss.release(s)
	}()
	return fn(s)
}

// close waits for running transactions and closes the session.
func (ss *sessions) close() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = true
	ss.changed.Broadcast()
	for ss.cur != nil && ss.cur.users > 0 || ss.opening {
		ss.changed.Wait()
	}
	if ss.cur != nil {
		return ss.closeLocked(ss.cur)
	}
	return nil
}

func (ss *sessions) closeLocked(s *session) error {
	if s.idle != nil {
		s.idle.Stop()
		s.armed = false
	}
	ss.cur = nil
	ss.changed.Broadcast()
	return s.close()
}

// openLocked opens a session; it is called with mu held and releases it
// while it waits for the lock.
func (ss *sessions) openLocked(ctx context.Context, write bool, deadline time.Time) error {
	ss.opening = true
	create := ss.create
	ss.mu.Unlock()
	s, err := ss.open(ctx, write, create, deadline)
	ss.mu.Lock()
	ss.opening = false
	ss.changed.Broadcast()
	if err != nil {
		return err
	}
	if ss.closed {
		s.db.Close()
		return errStoreClosed
	}
	ss.cur, ss.create = s, false
	return nil
}

// open opens the file, waits for its lock and opens bbolt on it.
func (ss *sessions) open(ctx context.Context, write, create bool, deadline time.Time) (*session, error) {
	path := ss.path
	began := time.Now()
	wiped := false // whether a writable session was tried for a pending erasure
	for {
		f, err := openFile(path, write, create)
		if err != nil {
			return nil, err
		}
		if err := queueLock(ctx, f, write, deadline); err != nil {
			if errors.Is(err, errLockTimeout) {
				return nil, &LockedError{Path: path, Waited: ss.opts.LockTimeout}
			}
			if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
				return nil, &LockedError{Path: path, Waited: time.Since(began), Err: cerr}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Another file may have been renamed over the path while this one
		// was waiting: its lock guards nothing anyone else uses. Start over
		// on the file the path names now.
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		if now, err := os.Stat(path); err != nil || !os.SameFile(held, now) {
			f.Close()
			if err != nil && !create {
				return nil, missingFile(path, err)
			}
			continue
		}
		if held.Size() == 0 && !create {
			f.Close()
			// bbolt would turn an empty file into a database: leave it alone.
			return nil, fmt.Errorf("open %s: %w: the file is empty", path, ErrNotRepository)
		}
		db, err := openDB(path, f, write, time.Until(deadline), ss.opts)
		if err != nil {
			return nil, err
		}
		s := &session{db: db, file: f, held: held, write: write, opened: time.Now()}
		if !erasurePending(db) {
			return s, nil
		}
		// A crash interrupted an erasure: complete it before anything else.
		if write {
			if err := wipeFreePages(db, f, path); err != nil {
				s.close()
				return nil, &ErasureError{Path: path, Err: err}
			}
			return s, nil
		}
		if wiped {
			return s, nil // the file is not ours to write: read it as it is
		}
		// A shared session cannot write: let it go, complete the erasure
		// in a writable one, then open the shared one again.
		s.close()
		ws, err := ss.open(ctx, true, false, deadline)
		switch {
		case errors.Is(err, ErrReadOnly):
		case err != nil:
			return nil, err
		default:
			ws.close()
		}
		wiped = true
	}
}

// close lets the next process in and closes the session's file.
func (s *session) close() error {
	// No transaction runs, so the file is consistent: let the next process
	// in now (bbolt's flock first, or it would find it held and poll), and
	// only then unmap and close, which takes longer than the open did.
	unlockFile(s.file)
	unlockQueue(s.file)
	return s.db.Close() // closing the file releases the queue lock too
}

// openFile opens the repository file for reading, or for writing too.
func openFile(path string, write, create bool) (*os.File, error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
		if create {
			flag |= os.O_CREATE
		}
	}
	f, err := os.OpenFile(path, flag, 0o600)
	switch {
	case err == nil:
		return f, nil
	case create && isPermission(err) && !exists(path):
		// The file is not there to be read-only: its directory refused it.
		return nil, &CreateError{Path: path, Dir: filepath.Dir(path), Err: err}
	case write && isPermission(err):
		return nil, &ReadOnlyError{Path: path, Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return nil, missingFile(path, err)
	}
	return nil, fmt.Errorf("open %s: %w", path, err)
}

// isPermission reports whether err is the operating system refusing a
// write: the file's (or directory's) permissions, or a read-only file
// system.
func isPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// exists reports whether something is at path (a broken symlink too).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func missingFile(path string, err error) error {
	return fmt.Errorf("open %s: %w: the file is gone (%w)", path, ErrNotRepository, err)
}

// ReadOnlyError is returned by a write to a repository file this process
// may only read (its permissions, or a read-only file system).
type ReadOnlyError struct {
	// Path is the repository file.
	Path string
	// Err is the operating system's refusal.
	Err error
}

// Error returns the ReadOnlyError message.
func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("repository %s is read-only for this user: it can be read but not written (%v)", e.Path, errors.Unwrap(e.Err))
}

// Is makes errors.Is(err, ErrReadOnly) hold.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// Unwrap returns the operating system's error.
func (e *ReadOnlyError) Unwrap() error { return e.Err }

// CreateError is returned when a new repository file cannot be created
// because its directory refuses it: this process may not add files (or
// subdirectories) there, or the file system is read-only.
type CreateError struct {
	// Path is the repository file.
	Path string
	// Dir is the directory that refused: the file's own, or the nearest
	// one that exists when directories had to be made first.
	Dir string
	// Err is the operating system's refusal.
	Err error
}

// Error returns the CreateError message.
func (e *CreateError) Error() string {
	return fmt.Sprintf("cannot create repository %s: this user may not create files in the directory %s (%v)",
		e.Path, e.Dir, errors.Unwrap(e.Err))
}

// Unwrap returns the operating system's error.
func (e *CreateError) Unwrap() error { return e.Err }

// openDB opens bbolt on the file f, which holds the queue lock, turning
// bbolt's errors (and the panics it raises on some corrupt files) into
// errors that say what to do. On error f is closed.
func openDB(path string, f *os.File, write bool, wait time.Duration, opts BoltOptions) (db *bolt.DB, err error) {
	passed := false // whether bbolt took f (it closes f itself on failure)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			// bbolt panicked half-way through Open and never returned the
			// DB: close the file here, or its locks would stay held. (The
			// memory map leaks: bbolt does not expose it.)
			unlockFile(f)
			unlockQueue(f)
			f.Close()
			db, err = nil, corruptFile(path, damage(r))
		} else if err != nil && !passed {
			f.Close()
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		OpenFile: func(string, int, os.FileMode) (*os.File, error) {
			passed = true
			return f, nil
		},
		// bbolt's flock is free once the queue lock is held, unless a
		// tract older than the queue lock holds the file.
		Timeout:  max(wait, time.Millisecond),
		ReadOnly: !write,
		NoSync:   opts.NoSync,
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &LockedError{Path: path, Waited: opts.LockTimeout}
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if what, ok := fileDamage(path); ok {
		return nil, corruptFile(path, what)
	}
	return nil, fmt.Errorf("open %s: %w: %v", path, ErrNotRepository, err)
}

// fileDamage says what is damaged in the file at path, which bbolt
// refused to open, when it is a bbolt file whose meta pages are damaged
// or cut off (see metaDamage); ok is false for a file of another kind.
func fileDamage(path string) (what string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	return metaDamage(f, st.Size())
}
