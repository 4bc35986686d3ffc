package tract

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tractdag/tract/store"
)

// Errors of Copy.
var (
	// ErrNotEmpty is returned by Copy when the destination already holds
	// a repository with refs, reflogs or commits: a copy only goes into
	// a new or empty repository.
	ErrNotEmpty = store.ErrNotEmpty
	// ErrSameRepository is returned by Copy when the source and the
	// destination are one repository.
	ErrSameRepository = store.ErrSameRepository
)

// CopyResult says what Copy copied (see store.CopyResult).
type CopyResult = store.CopyResult

// CopyOption configures Copy and CopyStore.
type CopyOption func(*copyConfig)

type copyConfig struct {
	progress   ProgressFunc
	batchBytes int
	open       []Option
}

// CopyProgress reports the objects copied to fn (see Progress); the total
// is not known in advance.
func CopyProgress(fn ProgressFunc) CopyOption { return func(c *copyConfig) { c.progress = fn } }

// CopyBatchBytes bounds how many bytes of objects one write transaction
// of the destination takes (default DefaultImportBatchBytes): the memory
// a copy holds, whatever the size of the repository.
func CopyBatchBytes(n int) CopyOption {
	return func(c *copyConfig) {
		if n > 0 {
			c.batchBytes = n
		}
	}
}

// CopyOpenOptions are the options Copy opens both repositories with (a
// lock timeout, say). Copy always opens the source read-only.
func CopyOpenOptions(opts ...Option) CopyOption {
	return func(c *copyConfig) { c.open = append(c.open, opts...) }
}

func newCopyConfig(opts []CopyOption) copyConfig {
	c := copyConfig{batchBytes: DefaultImportBatchBytes}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Copy copies the repository at src into dst, which must not exist yet or
// be empty (as Init leaves it): every blob and commit, each re-hashed
// before it is written, the derived counters of each commit, checked
// against its chain, every ref (HEAD, branches, STRANDED, side refs) and
// every reflog, unchanged. Imports that never finished (unpublished packs)
// are not copied.
//
// The copy is all-or-nothing: it reads src in one read transaction (a
// snapshot; writers of src wait for it, as for any reader), writes the
// objects to dst a batch per transaction into a pack no reader sees, and
// publishes the pack with the refs and reflogs in one last transaction.
// A copy that fails (a corrupt object in src, an error naming it, or a
// cancelled ctx) leaves dst as it was: a file Copy created is removed. A
// killed copy leaves an unpublished pack in dst, which gc drops.
//
// Copy holds at most a batch of objects (see CopyBatchBytes) and the
// reflogs in memory.
func Copy(ctx context.Context, src, dst string, opts ...CopyOption) (*CopyResult, error) {
	cfg := newCopyConfig(opts)
	if same, err := sameRepository(src, dst); err != nil {
		return nil, err
	} else if same {
		return nil, fmt.Errorf("copy %s to %s: %w", Redact(src), Redact(dst), ErrSameRepository)
	}
	open := append(cfg.open[:len(cfg.open):len(cfg.open)], WithContext(ctx)) // a database stops on ctx too
	in, _, err := openCopyEnd(src, false, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, undo, err := openCopyEnd(dst, true, open)
	if err != nil {
		return nil, err
	}
	res, err := CopyStore(ctx, in.st, out.st, opts...)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		undo()
		return nil, err
	}
	res.Source, res.Destination = Redact(src), Redact(dst)
	return res, nil
}

// openCopyEnd opens one end of a copy: the source with Open, read-only;
// the destination with Open when it exists, else with Init. undo puts
// back what opening the destination changed, for a copy that failed: it
// removes a file Init created, and empties again a file that was empty.
// It is the one place Copy turns a location into a repository.
func openCopyEnd(loc string, dst bool, opts []Option) (t *Tract, undo func(), err error) {
	undo = func() {}
	if !dst {
		t, err = Open(loc, append(opts[:len(opts):len(opts)], WithReadOnly())...)
		if err != nil {
			return nil, nil, fmt.Errorf("copy from %s: %w", Redact(loc), err)
		}
		return t, undo, nil
	}
	if IsDatabaseURL(loc) {
		// A repository the database does not hold yet is made for the
		// copy, and dropped again when the copy fails.
		t, err = Open(loc, opts...)
		if errors.Is(err, store.ErrNotRepository) {
			if t, err = Init(loc, opts...); err == nil {
				undo = func() { _ = store.DropURL(context.Background(), loc) } // best effort: the copy's own error is the one to report
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("copy to %s: %w", Redact(loc), err)
		}
		return t, undo, nil
	}
	st, serr := os.Stat(loc)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		t, err = Init(loc, opts...)
		undo = func() { os.Remove(loc) }
	case serr == nil && st.Mode().IsRegular() && st.Size() == 0:
		t, err = Init(loc, opts...)
		undo = func() { os.Truncate(loc, 0) }
	default:
		t, err = Open(loc, opts...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("copy to %s: %w", Redact(loc), err)
	}
	return t, undo, nil
}

// sameRepository reports whether src and dst name one repository: one
// file, or one database URL.
func sameRepository(src, dst string) (bool, error) {
	if IsDatabaseURL(src) || IsDatabaseURL(dst) {
		return src == dst, nil
	}
	a, err := os.Stat(src)
	if err != nil {
		return false, nil // Open reports a missing source
	}
	b, err := os.Stat(dst)
	if err != nil {
		return false, nil
	}
	return os.SameFile(a, b), nil
}

// CopyStore copies the repository in src into dst, as Copy does, over any
// two stores: dst must be empty. A dst whose transactions take packs
// (store.PackTx) gets the objects a batch per transaction; one that does
// not gets the whole copy in a single transaction, which that store must
// be able to hold. src must list blobs and commits in key order, as
// store.ObjectTx documents. It is store.Copy with Copy's options.
func CopyStore(ctx context.Context, src, dst store.Store, opts ...CopyOption) (*CopyResult, error) {
	cfg := newCopyConfig(opts)
	return store.Copy(ctx, src, dst, store.CopyBatchBytes(cfg.batchBytes), store.CopyProgress(cfg.progress.report("objects")))
}
