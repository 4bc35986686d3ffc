package tract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Errors of Copy.
var (
	// ErrNotEmpty is returned by Copy when the destination already holds
	// a repository with refs, reflogs or commits: a copy only goes into a
	// new or empty repository.
	ErrNotEmpty = errors.New("destination repository is not empty")
	// ErrSameRepository is returned by Copy when the source and the
	// destination are one repository.
	ErrSameRepository = errors.New("source and destination are the same repository")
)

// CopyResult says what Copy copied.
type CopyResult struct {
	// Source and Destination are the repositories copied from and to (a
	// database URL with its password hidden).
	Source      string `json:"source"`
	Destination string `json:"destination"`
	// Blobs and Commits count the objects copied, each re-hashed first.
	Blobs   int64 `json:"blobs"`
	Commits int64 `json:"commits"`
	// Bytes is the size of the objects copied, as stored.
	Bytes int64 `json:"bytes"`
	// Counters counts the derived-index entries copied, each checked
	// against its commit's chain first.
	Counters int64 `json:"counters"`
	// Refs counts the refs copied (HEAD included), ReflogEntries the
	// entries of their reflogs.
	Refs          int `json:"refs"`
	ReflogEntries int `json:"reflog_entries"`
	// Batches is the number of write transactions the objects took.
	Batches int `json:"batches"`
	// UnfinishedImports counts the source's unpublished packs (imports
	// running or killed), which are not copied.
	UnfinishedImports int `json:"unfinished_imports"`
}

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
// store.ObjectTx documents.
func CopyStore(ctx context.Context, src, dst store.Store, opts ...CopyOption) (*CopyResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if src == dst {
		return nil, ErrSameRepository
	}
	cfg := newCopyConfig(opts)
	c := &copier{ctx: ctx, dst: dst, cfg: cfg, res: &CopyResult{Source: src.Path(), Destination: dst.Path()}}
	c.progress = cfg.progress.start("objects", 0)
	err := c.copy(src)
	// Both stores are let go by now: the last report may use them.
	c.progress.Stop()
	if err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", src.Path(), dst.Path(), err)
	}
	return c.res, nil
}

// errNoPacks rolls back the transaction that found the destination
// cannot take packs.
var errNoPacks = errors.New("the destination takes no packs")

// copier is one run of CopyStore.
type copier struct {
	ctx      context.Context
	src      store.Tx // the source's read transaction, for the whole copy
	dst      store.Store
	cfg      copyConfig
	res      *CopyResult
	progress *progress.Counter // counts the objects copied

	pack  uint64            // the destination's pack, once created
	chunk []store.PackEntry // entries not yet appended to it
	size  int               // bytes in chunk
	last  store.PackEntry   // the last entry put, for the order check
	n     int64             // entries put
}

// copy runs the copy in one read transaction of src.
func (c *copier) copy(src store.Store) error {
	if l, ok := c.dst.(store.Lingerer); ok {
		// Keep the destination's file open across its many transactions.
		defer l.Linger()()
	}
	return src.View(func(stx store.Tx) error {
		c.src = stx
		if p, ok := stx.(store.PackTx); ok {
			unpublished, err := p.UnpublishedPacks()
			if err != nil {
				return err
			}
			c.res.UnfinishedImports = len(unpublished)
		}
		return c.run()
	})
}

// run writes the objects, then the refs and reflogs, into the destination.
func (c *copier) run() error {
	err := c.dst.Update(func(tx store.Tx) error {
		if err := checkEmpty(tx); err != nil {
			return err
		}
		p, ok := tx.(store.PackTx)
		if !ok {
			return errNoPacks
		}
		var err error
		c.pack, err = p.CreatePack(time.Now())
		return err
	})
	if errors.Is(err, errNoPacks) {
		return c.dst.Update(func(tx store.Tx) error {
			if err := checkEmpty(tx); err != nil {
				return err
			}
			if err := c.objects(func(e store.PackEntry) error { return putEntry(tx, e) }); err != nil {
				return err
			}
			c.res.Batches = 1
			return c.refs(tx)
		})
	}
	if err != nil {
		return err
	}
	if err = c.objects(c.appendEntry); err == nil {
		err = c.flush()
	}
	if err == nil {
		err = c.dst.Update(func(tx store.Tx) error {
			if err := checkEmpty(tx); err != nil {
				return err
			}
			if err := tx.(store.PackTx).PublishPack(c.pack); err != nil {
				return err
			}
			return c.refs(tx)
		})
	}
	if err != nil {
		// Leave the destination as it was (a killed copy leaves the pack
		// to gc).
		id := c.pack
		_ = c.dst.Update(func(tx store.Tx) error { return tx.(store.PackTx).DropPack(id) })
	}
	return err
}

// checkEmpty returns ErrNotEmpty unless tx's repository is as Init leaves
// it: no ref but a symbolic HEAD, no reflog, no commit.
func checkEmpty(tx store.Tx) error {
	rs, err := tx.Refs()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Name != refs.HEAD || !r.IsSymbolic() {
			return fmt.Errorf("%w: it has the ref %s", ErrNotEmpty, r.Name)
		}
	}
	names, err := tx.ReflogNames()
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: it has the reflog of %s", ErrNotEmpty, names[0])
	}
	errFound := errors.New("found")
	err = tx.ForEachCommit(func(dag.Hash, []byte) error { return errFound })
	if errors.Is(err, errFound) {
		return fmt.Errorf("%w: it has commits", ErrNotEmpty)
	}
	return err
}

// objects verifies every blob and commit of the source, and every
// counters entry, and hands each to put, in the order packs take.
func (c *copier) objects(put func(store.PackEntry) error) error {
	add := func(e store.PackEntry) error {
		if c.n%1024 == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		if c.n > 0 && e.Compare(c.last) <= 0 {
			return fmt.Errorf("the source listed %s after %s: its store does not list objects in key order",
				e.Hash.Short(), c.last.Hash.Short())
		}
		c.n++
		c.last = store.PackEntry{Kind: e.Kind, Hash: e.Hash}
		return put(e)
	}
	err := c.src.ForEachBlob(func(h dag.Hash, data []byte) error {
		if got := dag.Sum(data); got != h {
			return fmt.Errorf("blob %s: its content hashes to %s: %w", h, got.Short(), ErrCorrupt)
		}
		c.res.Blobs++
		c.res.Bytes += int64(len(data))
		c.progress.Add(1)
		return add(store.PackEntry{Kind: store.PackBlob, Hash: h, Value: bytes.Clone(data)})
	})
	if err != nil {
		return err
	}
	// Commits a batch at a time: each batch's blobs, parents and
	// counters are read with a call each (store.ReadBlobs and the like),
	// a few round trips per batch on a database instead of several per
	// commit.
	var batch []rawCommit
	err = c.src.ForEachCommit(func(h dag.Hash, raw []byte) error {
		batch = append(batch, rawCommit{h, bytes.Clone(raw)})
		if len(batch) < copyBatch {
			return nil
		}
		err := c.commits(batch, add)
		batch = batch[:0]
		return err
	})
	if err != nil {
		return err
	}
	return c.commits(batch, add)
}

// copyBatch is how many commits the copy checks per batch.
const copyBatch = 256

// rawCommit is a commit's hash and encoding.
type rawCommit struct {
	hash dag.Hash
	raw  []byte
}

// commits verifies a batch of commits (in key order) and their counters
// entries, and hands each to add.
func (c *copier) commits(batch []rawCommit, add func(store.PackEntry) error) error {
	if len(batch) == 0 {
		return nil
	}
	cms := make([]*dag.Commit, len(batch))
	hs, blobs := make([]dag.Hash, len(batch)), make([]dag.Hash, len(batch))
	var parents []dag.Hash
	for i, rc := range batch {
		cm, err := decodeVerified(rc.hash, rc.raw)
		if err != nil {
			return err
		}
		cms[i], hs[i], blobs[i] = cm, rc.hash, cm.Blob
		parents = append(parents, cm.Parents...)
	}
	texts, err := store.ReadBlobs(c.src, blobs)
	if err != nil {
		return err
	}
	stored, err := store.ReadCommits(c.src, parents)
	if err != nil {
		return err
	}
	ks, hasK, err := store.ReadCounters(c.src, hs)
	if err != nil {
		return err
	}
	// The counters of the first parents of the commits that have some.
	var firsts []dag.Hash
	for i, cm := range cms {
		if hasK[i] && len(cm.Parents) > 0 {
			firsts = append(firsts, cm.Parents[0])
		}
	}
	pks, hasPK, err := store.ReadCounters(c.src, firsts)
	if err != nil {
		return err
	}
	for i, cm := range cms {
		h := hs[i]
		if texts[i] == nil {
			return fmt.Errorf("commit %s: its blob %s is not stored: %w", h, cm.Blob.Short(), ErrCorrupt)
		}
		for _, p := range cm.Parents {
			if stored[0] == nil {
				return fmt.Errorf("commit %s: its parent %s is not stored: %w", h, p.Short(), ErrCorrupt)
			}
			stored = stored[1:]
		}
		c.res.Commits++
		c.res.Bytes += int64(len(batch[i].raw))
		c.progress.Add(1)
		if err := add(store.PackEntry{Kind: store.PackCommit, Hash: h, Value: batch[i].raw}); err != nil {
			return err
		}
		if !hasK[i] {
			continue // a commit without counters stays so: they are computed when needed
		}
		var parent store.Counters
		var parentOK bool
		if len(cm.Parents) > 0 {
			parent, parentOK = pks[0], hasPK[0]
			pks, hasPK = pks[1:], hasPK[1:]
		}
		if err := c.checkCounters(h, cm, ks[i], parent, parentOK, texts[i]); err != nil {
			return err
		}
		c.res.Counters++
		if err := add(store.PackEntry{Kind: store.PackCounters, Hash: h, Value: ks[i].Encode()}); err != nil {
			return err
		}
	}
	return nil
}

// decodeVerified checks that raw hashes to h and decodes it.
func decodeVerified(h dag.Hash, raw []byte) (*dag.Commit, error) {
	if got := dag.Sum(raw); got != h {
		return nil, fmt.Errorf("commit %s: its encoding hashes to %s: %w", h, got.Short(), ErrCorrupt)
	}
	cm, err := dag.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w: %w", h, ErrCorrupt, err)
	}
	return cm, nil
}

// missing returns err, or when it is nil an error wrapping ErrCorrupt
// saying what is missing.
func missing(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, ErrCorrupt)...)
}

// checkCounters checks the counters k stored for commit h against its
// parent's (parent, when parentOK; computed when the parent has none) and
// its text: every entry checked so, each chain is right from its root.
func (c *copier) checkCounters(h dag.Hash, cm *dag.Commit, k, parent store.Counters, parentOK bool, text []byte) error {
	var first Hash
	if len(cm.Parents) > 0 {
		first = cm.Parents[0]
	}
	want := parent
	if !parentOK && !first.IsZero() {
		var err error
		if want, err = countersOf(c.ctx, c.src, first, false); err != nil {
			return fmt.Errorf("commit %s: counters: %w", h, err)
		}
	}
	if !cm.Kind.Compiled() {
		text = nil
	}
	if want = want.Next(cm.Kind, text); want != k {
		// Either entry may be the wrong one: name both.
		return fmt.Errorf("commit %s: its index entry (%d commits, %d messages, %d tokens) does not follow from its parent %s's (which gives %d, %d, %d): %w",
			h, k.Depth, k.Messages, k.Tokens, first.Short(), want.Depth, want.Messages, want.Tokens, ErrCorrupt)
	}
	return nil
}

// appendEntry adds e to the destination's pack, a batch per transaction.
func (c *copier) appendEntry(e store.PackEntry) error {
	c.chunk = append(c.chunk, e)
	c.size += len(e.Value) + 64
	if c.size >= c.cfg.batchBytes {
		return c.flush()
	}
	return nil
}

// flush appends the entries held to the pack.
func (c *copier) flush() error {
	if len(c.chunk) == 0 {
		return nil
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	err := c.dst.Update(func(tx store.Tx) error {
		return tx.(store.PackTx).AppendPack(c.pack, time.Now(), c.chunk)
	})
	if err != nil {
		return err
	}
	c.res.Batches++
	clear(c.chunk)
	c.chunk, c.size = c.chunk[:0], 0
	return nil
}

// putEntry writes e straight into tx (a destination without packs).
func putEntry(tx store.Tx, e store.PackEntry) error {
	switch e.Kind {
	case store.PackBlob:
		if hp, ok := tx.(store.HashedPutter); ok {
			return hp.PutHashedBlob(e.Hash, e.Value)
		}
		_, err := tx.PutBlob(e.Value)
		return err
	case store.PackCommit:
		if hp, ok := tx.(store.HashedPutter); ok {
			return hp.PutEncodedCommit(e.Hash, e.Value)
		}
		cm, err := dag.Decode(e.Value)
		if err != nil {
			return err
		}
		_, err = tx.PutCommit(cm)
		return err
	default:
		k, err := store.DecodeCounters(e.Value)
		if err != nil {
			return err
		}
		return tx.PutCounters(e.Hash, k)
	}
}

// refs copies every ref and reflog of the source into tx.
func (c *copier) refs(tx store.Tx) error {
	rs, err := c.src.Refs()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if !r.IsSymbolic() {
			if ok, err := c.src.HasCommit(r.Hash); err != nil || !ok {
				return missing(err, "ref %s: its commit %s is not stored", r.Name, r.Hash.Short())
			}
		}
		if err := tx.SetRef(r); err != nil {
			return err
		}
		c.res.Refs++
	}
	names, err := c.src.ReflogNames()
	if err != nil {
		return err
	}
	for _, name := range names {
		es, err := c.src.Reflog(name)
		if err != nil {
			return err
		}
		if err := tx.ReplaceReflog(name, es); err != nil {
			return err
		}
		c.res.ReflogEntries += len(es)
	}
	return nil
}
