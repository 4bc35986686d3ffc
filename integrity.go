package tract

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tractdag/tract/store"
)

// FsckReport is the result of Fsck: counts and every problem found.
type FsckReport = store.FsckReport

// The states of a repository file's word index in FsckReport.WordIndex:
// see store.WordIndexOK and the others.
const (
	WordIndexOK      = store.WordIndexOK
	WordIndexAbsent  = store.WordIndexAbsent
	WordIndexRebuilt = store.WordIndexRebuilt
	WordIndexWrong   = store.WordIndexWrong
)

// SalvageReport is the result of Salvage: what was copied, and what was
// lost and why.
type SalvageReport = store.SalvageReport

// Fsck re-derives the hash of every object, decodes every commit, ref and
// reflog entry, and checks every parent, blob and ref reference, and a
// file's word index against the commits' words: one that does not match
// is rebuilt (FsckReport.WordIndex says so). Damage is
// reported in the result, not as a panic; the error is non-nil only when the
// repository cannot be read at all. A repository found damaged is marked
// so and refuses writes (a *DamagedError) until a check finds it clean;
// see FsckFile and Salvage.
func (t *Tract) Fsck(ctx context.Context, opts ...FsckOption) (*FsckReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cfg fsckConfig
	for _, o := range opts {
		o(&cfg)
	}
	var r *FsckReport
	err := t.withStore(func(st store.Store) (err error) {
		r, err = store.Fsck(ctx, st, store.FsckProgress(cfg.progress.report("objects")))
		return err
	})
	if err != nil {
		return r, fmt.Errorf("fsck: %w", err)
	}
	return r, nil
}

// FsckOption configures Fsck.
type FsckOption func(*fsckConfig)

type fsckConfig struct {
	progress ProgressFunc
}

// FsckProgress reports the objects (blobs and commits) checked so far to
// fn (see Progress; the total is not known until the end).
func FsckProgress(fn ProgressFunc) FsckOption { return func(c *fsckConfig) { c.progress = fn } }

// FsckFile checks the repository file at path, even one too damaged to
// open: Open would fail on it with ErrCorrupt, but FsckFile then reads
// the file without bbolt and reports the pages it cannot read, the
// objects whose hash fails and each commit or text missing that a commit
// names (once, not once per commit of the history above it).
// When the file can be opened, it is Fsck. Either way a repository found
// damaged is marked so and refuses writes (a *DamagedError) until it is
// salvaged (Salvage) or checked clean again; a clean check clears the
// mark. Of opts, only WithLockTimeout, WithReadOnly (a read-only check
// leaves the mark as it is) and WithFsckProgress apply.
//
// For a postgres:// URL it is Fsck of the repository the URL names: a
// database has no file to read around its engine.
func FsckFile(ctx context.Context, path string, opts ...Option) (*FsckReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if IsDatabaseURL(path) {
		return fsckDatabase(ctx, path, opts)
	}
	c := newConfig(opts)
	r, err := store.FsckFile(path, store.BoltOptions{Context: ctx, LockTimeout: c.lockTimeout, ReadOnly: c.readOnly},
		store.FsckProgress(c.fsckProgress.report("objects")))
	if err != nil {
		return r, fmt.Errorf("fsck: %w", err)
	}
	return r, nil
}

// Salvage copies what still verifies in the repository file at src into a
// new repository at dst (which must not exist), for a file that Fsck or
// FsckFile found damaged: every blob and commit whose hash checks out,
// even a commit whose parent or text was lost (it becomes the root of its
// surviving chain: log says "history lost before here"), every ref (set
// to the newest surviving commit on its chain when its commit was lost),
// a ref refs/salvaged/<tip> for each chain no ref reaches, and the reflog
// entries that name only salvaged commits. It reads src without
// bbolt, so it works on files that cannot be opened at all, and never
// changes src. The report lists what was lost and why; check dst with
// Fsck before relying on it.
//
// dst is written under a partial name beside it and renamed into place
// once whole, as Copy does: a salvage that fails or is killed leaves no
// dst, and the next salvage into dst removes the partial file a killed
// one left.
func Salvage(ctx context.Context, src, dst string) (*SalvageReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if IsDatabaseURL(src) || IsDatabaseURL(dst) {
		return nil, fmt.Errorf("salvage: %w: it reads and writes repository files; a database keeps its own integrity (check it with Fsck)", errors.ErrUnsupported)
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("salvage: salvage into %s: %w", dst, ErrExists)
	}
	p, err := store.StartPartial(dst, false)
	if err != nil {
		return nil, fmt.Errorf("salvage: salvage into %s: %w", dst, err)
	}
	r, err := store.Salvage(ctx, src, p.Path())
	if err == nil {
		err = p.Place()
	} else {
		p.Discard()
	}
	if err != nil {
		return nil, p.Named(fmt.Errorf("salvage: %w", err))
	}
	return r, nil
}

// fsckDatabase is FsckFile of a repository in a database.
func fsckDatabase(ctx context.Context, url string, opts []Option) (*FsckReport, error) {
	t, err := Open(url, append(opts[:len(opts):len(opts)], WithContext(ctx))...)
	if err != nil {
		return nil, fmt.Errorf("fsck: %w", err)
	}
	defer t.Close()
	return t.Fsck(ctx, FsckProgress(newConfig(opts).fsckProgress))
}
