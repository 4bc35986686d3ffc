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
// A dst file that does not exist yet (or is empty) is written under a
// partial name beside it (".DST.tract-partial-…") and renamed into place
// once whole, file and directory synced: a copy that fails (a corrupt
// object in src, an error naming it, or a cancelled ctx) or is killed
// leaves dst as it was. The next copy into dst removes a partial file a
// killed copy left (ErrDestinationBusy while another copy into dst runs;
// a *LeftoverError when it cannot). A dst that is an empty repository
// already (a file or a database's), and a database repository Copy made,
// are written in place: a killed copy leaves them empty but for an
// unpublished pack, which gc drops, and a copy into them again goes
// ahead; a failed copy drops a database repository it made.
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
	in, err := openCopySrc(src, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, finish, err := openCopyDst(dst, open)
	if err != nil {
		return nil, err
	}
	res, err := CopyStore(ctx, in.st, out.st, opts...)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err = finish(err); err != nil {
		return nil, err
	}
	res.Source, res.Destination = Redact(src), Redact(dst)
	return res, nil
}

// openCopySrc opens the source of a copy, read-only.
func openCopySrc(loc string, opts []Option) (*Tract, error) {
	t, err := Open(loc, append(opts[:len(opts):len(opts)], WithReadOnly())...)
	if err != nil {
		return nil, fmt.Errorf("copy from %s: %w", Redact(loc), err)
	}
	return t, nil
}

// openCopyDst opens the destination of a copy. finish ends the copy: it
// takes the copy's error (nil when it succeeded, and the destination
// closed) and returns the copy's. It is the one place Copy turns a
// location into a repository:
//
//   - A file that does not exist yet, or is empty, is written under a
//     partial name beside it (see startPartial) and put in place whole
//     by finish, so that a copy that fails or is killed leaves it as it
//     was; finish removes the partial file of a copy that failed, and the
//     next copy into the same path the one a killed copy left.
//   - An existing file, an empty repository as Init leaves it, is written
//     in place: its objects go into a pack published with the refs in
//     one last transaction, so that a killed copy leaves it empty (the
//     unpublished pack is dropped by gc), and a copy that failed is undone.
//   - A database URL: a repository the database does not hold yet is
//     made for the copy (one transaction) and dropped again by finish
//     when the copy fails; a killed copy leaves it empty, holding an
//     unpublished pack, as above, and the next copy into it goes ahead.
func openCopyDst(loc string, opts []Option) (t *Tract, finish func(error) error, err error) {
	wrap := func(err error) error { return fmt.Errorf("copy to %s: %w", Redact(loc), err) }
	finish = func(err error) error { return err }
	if IsDatabaseURL(loc) {
		t, err = Open(loc, opts...)
		if errors.Is(err, store.ErrNotRepository) {
			if t, err = Init(loc, opts...); err == nil {
				finish = func(err error) error {
					if err != nil {
						_ = store.DropURL(context.Background(), loc) // best effort: the copy's own error is the one to report
					}
					return err
				}
			}
		}
		if err != nil {
			return nil, nil, wrap(err)
		}
		return t, finish, nil
	}
	st, serr := os.Stat(loc)
	if serr == nil && !(st.Mode().IsRegular() && st.Size() == 0) {
		if t, err = Open(loc, opts...); err != nil {
			return nil, nil, wrap(err)
		}
		return t, finish, nil
	}
	if serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return nil, nil, wrap(serr)
	}
	p, err := store.StartPartial(loc, serr == nil)
	if err != nil {
		return nil, nil, wrap(err)
	}
	if t, err = Init(p.Path(), opts...); err != nil {
		p.Discard()
		return nil, nil, p.Named(wrap(err))
	}
	finish = func(err error) error {
		if err == nil {
			err = p.Place()
		} else {
			p.Discard()
		}
		return p.Named(err)
	}
	return t, finish, nil
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
