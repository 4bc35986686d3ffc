package store

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Compact rewrites the repository into a new file that holds only the pages
// in use, packed full, and renames it over the old file: a repository
// shrinks after gc or a hard reset, which leave freed pages behind (bbolt
// reuses them but never gives them back). It returns the file's size before
// and after.
//
// It is an exclusive operation: it holds the file's write lock from start
// to rename, so other processes wait for it (up to their lock timeout). The
// rename is atomic: a crash leaves the old file, or the new one, whole (and
// perhaps a stray "*.compact-*" file beside it, which may be deleted). A
// process that was waiting for the old file's lock notices that the path
// now names another file and opens that one.
func (b *Bolt) Compact() (before, after int64, err error) {
	if b.readOnly {
		return 0, 0, b.errReadOnly()
	}
	err = b.ss.sole(func(s *session) error {
		// Whatever happens, no transaction may use this session again: after
		// the rename its file is no longer the repository.
		defer func() {
			b.ss.mu.Lock()
			s.draining = true
			b.ss.mu.Unlock()
		}()
		st, err := s.file.Stat()
		if err != nil {
			return err
		}
		before = st.Size()
		tmp, err := os.CreateTemp(filepath.Dir(b.path), filepath.Base(b.path)+".compact-*")
		if err != nil {
			return err
		}
		name := tmp.Name()
		tmp.Close()
		defer os.Remove(name) // nothing to remove after the rename
		dst, err := bolt.Open(name, 0o600, &bolt.Options{NoSync: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
			dst.Close()
			return err
		}
		if err := dst.Sync(); err != nil {
			dst.Close()
			return err
		}
		if err := dst.Close(); err != nil {
			return err
		}
		if err := os.Rename(name, b.path); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(b.path)); err != nil {
			return err
		}
		st, err = os.Stat(b.path)
		if err != nil {
			return err
		}
		after = st.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", b.path, b.sessionError(err))
	}
	return before, after, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
