package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Erasure. bbolt never overwrites a page in place: a transaction that
// deletes a key writes a new copy of the key's page and frees the old one,
// whose bytes (the deleted text) stay in the file until the page happens
// to be reused. So that deleting means erasing, every transaction that
// drops stored text (objects, reflog entries, packs, compiled-context
// records) also records a pending erasure in the meta bucket. Once it has
// committed, every free page of the file is overwritten with zeros and
// synced, and then one more transaction clears the record. A crash
// anywhere in between leaves the record in the file, and the next session
// on it, opened by any process for any purpose, completes the erasure
// before it runs anything else.
//
// Pages in use are never a hiding place: bbolt writes every page it
// allocates in full, from a zeroed buffer. What this cannot reach is
// outside the file: copies the file system keeps (copy-on-write file
// systems, snapshots, journals of data), blocks an SSD remaps, and backups.

// keyErasePending, in the meta bucket, marks an erasure that has committed
// but whose free pages may still hold the erased bytes.
var keyErasePending = []byte("erase-pending")

// ErasureError is returned by a write that deleted stored text and
// committed, when wiping the deleted bytes from the file's free pages
// failed afterwards. The deletion stands; the wipe is retried by the next
// session on the file.
type ErasureError struct {
	// Path is the repository file.
	Path string
	// Err is what stopped the wipe.
	Err error
}

// Error returns the ErasureError message.
func (e *ErasureError) Error() string {
	return fmt.Sprintf("%s: the deletion is committed, but wiping the deleted bytes from the file's free pages failed (the next open of the repository tries again): %v", e.Path, e.Err)
}

// Unwrap returns what stopped the wipe.
func (e *ErasureError) Unwrap() error { return e.Err }

// markErasure records, in the transaction that deletes text, that the
// file's free pages must be wiped once it commits.
func markErasure(tx *bolt.Tx) error {
	return tx.Bucket(bucketMeta).Put(keyErasePending, []byte{1})
}

// erasurePending reports whether db holds a pending erasure. A file it
// cannot read reports none: the session's first transaction will say
// what is wrong with it.
func erasurePending(db *bolt.DB) (pending bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			pending = false
		}
	}()
	_ = db.View(func(tx *bolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil {
			pending = m.Get(keyErasePending) != nil
		}
		return nil
	})
	return pending
}

// completeErasure wipes the free pages after a transaction of this handle
// deleted text, alone in the file.
func (b *Bolt) completeErasure() error {
	// An erasure is completed whatever became of the caller's context: the
	// deleted text must not stay in the file.
	err := b.ss.sole(context.Background(), func(s *session) error { return wipeFreePages(s.db, s.file, b.path) })
	if err != nil {
		return &ErasureError{Path: b.path, Err: b.sessionError(err)}
	}
	return nil
}

// wipeFreePages completes a pending erasure on db, which must be open for
// writing with no other transaction on the file, f being its file: it
// overwrites every free page that is not all zeros, syncs, and clears the
// record. With no erasure pending (another process completed it) it does
// nothing.
func wipeFreePages(db *bolt.DB, f *os.File, path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%s)", ErrCorrupt, damage(r))
		}
	}()
	if !erasurePending(db) {
		return nil
	}
	if err := removeStrayCompactions(path); err != nil {
		return err
	}
	// bbolt releases the pages earlier transactions freed when a
	// read-write transaction begins and no reader needs them: nobody else
	// is in the file, so every page freed so far is free in this one.
	return db.Update(func(tx *bolt.Tx) error {
		size := int64(db.Info().PageSize)
		// One scratch buffer, and zeros to compare it with and write.
		buf, zeros := make([]byte, 1<<20), make([]byte, 1<<20)
		wrote := false
		for id := 2; int64(id)*size < tx.Size(); id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info == nil || info.Type != "free" {
				continue
			}
			w, err := zeroRegion(f, int64(id)*size, buf[:size], zeros)
			if err != nil {
				return fmt.Errorf("wipe free page %d: %w", id, err)
			}
			wrote = wrote || w
		}
		// A transaction killed before it committed may have written pages
		// past the end of the database (bbolt grows the file ahead of its
		// pages), with copies of text erased since.
		st, err := f.Stat()
		if err != nil {
			return err
		}
		for off := tx.Size(); off < st.Size(); off += int64(len(buf)) {
			w, err := zeroRegion(f, off, buf, zeros)
			if err != nil {
				return fmt.Errorf("wipe past the database's end: %w", err)
			}
			wrote = wrote || w
		}
		// The zeros must be on disk before the record goes: otherwise a
		// crash could lose both.
		if wrote && !db.NoSync {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("sync wiped pages: %w", err)
			}
		}
		return tx.Bucket(bucketMeta).Delete(keyErasePending)
	})
}

// zeroRegion overwrites with zeros the len(buf) bytes of f at off (fewer
// at the end of the file) unless they are all zero already, and reports
// whether it wrote. buf is scratch space; zeros is all zeros, at least as
// long.
func zeroRegion(f *os.File, off int64, buf, zeros []byte) (wrote bool, err error) {
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if bytes.Equal(buf[:n], zeros[:n]) {
		return false, nil
	}
	if _, err := f.WriteAt(zeros[:n], off); err != nil {
		return false, err
	}
	return true, nil
}

// compactionSuffix starts the name of the file Compact writes beside the
// repository before it renames it into place.
const compactionSuffix = ".compact-"

// removeStrayCompactions deletes what a Compact killed before its rename
// left beside the repository at path: whole copies of the repository, text
// erased since included. Only a holder of the file's write lock may call
// it: a running Compact holds that lock.
func removeStrayCompactions(path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), base+compactionSuffix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
