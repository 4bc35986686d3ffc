package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
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

// DefaultCopyBatchBytes is how many bytes of objects one write
// transaction of a copy's destination takes unless CopyBatchBytes says
// otherwise.
const DefaultCopyBatchBytes = 3 << 20

// CopyOption configures Copy.
type CopyOption func(*copyConfig)

type copyConfig struct {
	progress   func(done, total int64)
	batchBytes int
}

// CopyProgress reports the objects (blobs and commits) copied so far to
// fn, about ten times a second from another goroutine, and once more at
// the end with done equal to total; the total is 0 (not known) before
// that. The calls are never concurrent, and the copy never waits for
// them.
func CopyProgress(fn func(done, total int64)) CopyOption {
	return func(c *copyConfig) { c.progress = fn }
}

// CopyBatchBytes bounds how many bytes of objects one write transaction
// of the destination takes (default DefaultCopyBatchBytes): the memory a
// copy holds, whatever the size of the repository. n <= 0 leaves the
// default.
func CopyBatchBytes(n int) CopyOption {
	return func(c *copyConfig) {
		if n > 0 {
			c.batchBytes = n
		}
	}
}

// Copy copies the repository in src into dst, which must be empty (no
// ref but a symbolic HEAD, no reflog, no commit; else ErrNotEmpty): every
// blob and commit, each re-hashed before it is written, the counters of
// each commit, checked against its chain, every ref and every reflog,
// unchanged. Unpublished packs of src (imports that never finished) are
// not copied. An object that fails its check stops the copy with an error
// naming it and matching ErrCorrupt.
//
// It reads src in one read transaction (a snapshot). A dst whose
// transactions take packs (PackTx) gets the objects a batch per
// transaction (see CopyBatchBytes) into a pack no reader sees, published
// with the refs and reflogs in one last transaction: a copy that fails,
// or whose ctx is cancelled, leaves dst as it was, and a killed one
// leaves an unpublished pack, which gc drops. A dst that does not take
// packs gets the whole copy in a single transaction, which it must be
// able to hold. src must list blobs and commits in key order, as ObjectTx
// documents. The copy holds at most a batch of objects and the reflogs in
// memory.
func Copy(ctx context.Context, src, dst Store, opts ...CopyOption) (*CopyResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if src == dst {
		return nil, ErrSameRepository
	}
	cfg := copyConfig{batchBytes: DefaultCopyBatchBytes}
	for _, o := range opts {
		o(&cfg)
	}
	c := &copier{ctx: ctx, dst: dst, cfg: cfg, res: &CopyResult{Source: src.Path(), Destination: dst.Path()}}
	c.progress = progress.Start(cfg.progress, 0)
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

// copier is one run of Copy.
type copier struct {
	ctx      context.Context
	src      Tx // the source's read transaction, for the whole copy
	dst      Store
	cfg      copyConfig
	res      *CopyResult
	progress *progress.Counter // counts the objects copied

	// lost is the source's salvage record (see SalvageRecord): the
	// parents and texts its commits may lack, copied with them.
	lost   lostHistory
	record *SalvageRecord

	pack  uint64      // the destination's pack, once created
	chunk []PackEntry // entries not yet appended to it
	size  int         // bytes in chunk
	last  PackEntry   // the last entry put, for the order check
	n     int64       // entries put
}

// copy runs the copy in one read transaction of src.
func (c *copier) copy(src Store) error {
	if l, ok := c.dst.(Lingerer); ok {
		// Keep the destination's file open across its many transactions.
		defer l.Linger()()
	}
	return src.View(c.ctx, func(stx Tx) error {
		c.src = stx
		if sr, ok := stx.(SalvageRecorder); ok {
			var err error
			if c.record, err = sr.SalvageRecord(); err != nil {
				return err
			}
			if c.record != nil {
				c.lost = lostHistory{commits: c.record.LostCommits, blobs: c.record.LostBlobs}
			}
		}
		if p, ok := stx.(PackTx); ok {
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
	err := c.dst.Update(c.ctx, func(tx Tx) error {
		if err := checkEmpty(tx); err != nil {
			return err
		}
		if err := c.canRecord(tx); err != nil {
			return err
		}
		p, ok := tx.(PackTx)
		if !ok {
			return errNoPacks
		}
		var err error
		c.pack, err = p.CreatePack(time.Now())
		return err
	})
	if errors.Is(err, errNoPacks) {
		return c.dst.Update(c.ctx, func(tx Tx) error {
			if err := checkEmpty(tx); err != nil {
				return err
			}
			if err := c.objects(func(e PackEntry) error { return putEntry(tx, e) }); err != nil {
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
		err = c.dst.Update(c.ctx, func(tx Tx) error {
			if err := checkEmpty(tx); err != nil {
				return err
			}
			if err := tx.(PackTx).PublishPack(c.pack); err != nil {
				return err
			}
			return c.refs(tx)
		})
	}
	if err != nil {
		// Leave the destination as it was (a killed copy leaves the pack
		// to gc).
		id := c.pack
		_ = c.dst.Update(context.WithoutCancel(c.ctx), func(tx Tx) error { return tx.(PackTx).DropPack(id) })
	}
	return err
}

// checkEmpty returns ErrNotEmpty unless tx's repository is as Init leaves
// it: no ref but a symbolic HEAD, no reflog, no commit.
func checkEmpty(tx Tx) error {
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
func (c *copier) objects(put func(PackEntry) error) error {
	add := func(e PackEntry) error {
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
		c.last = PackEntry{Kind: e.Kind, Hash: e.Hash}
		return put(e)
	}
	err := c.src.ForEachBlob(func(h dag.Hash, data []byte) error {
		if got := dag.Sum(data); got != h {
			return fmt.Errorf("blob %s: its content hashes to %s: %w", h, got.Short(), ErrCorrupt)
		}
		c.res.Blobs++
		c.res.Bytes += int64(len(data))
		c.progress.Add(1)
		return add(PackEntry{Kind: PackBlob, Hash: h, Value: bytes.Clone(data)})
	})
	if err != nil {
		return err
	}
	// Commits a batch at a time: each batch's blobs, parents and
	// counters are read with a call each (ReadBlobs and the like),
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
func (c *copier) commits(batch []rawCommit, add func(PackEntry) error) error {
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
	texts, err := ReadBlobs(c.src, blobs)
	if err != nil {
		return err
	}
	stored, err := ReadCommits(c.src, parents)
	if err != nil {
		return err
	}
	ks, hasK, err := ReadCounters(c.src, hs)
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
	pks, hasPK, err := ReadCounters(c.src, firsts)
	if err != nil {
		return err
	}
	for i, cm := range cms {
		h := hs[i]
		if texts[i] == nil && !c.lost.blob(cm.Blob) {
			return fmt.Errorf("commit %s: its blob %s is not stored: %w", h, cm.Blob.Short(), ErrCorrupt)
		}
		for _, p := range cm.Parents {
			if stored[0] == nil && !c.lost.commit(p) {
				return fmt.Errorf("commit %s: its parent %s is not stored: %w", h, p.Short(), ErrCorrupt)
			}
			stored = stored[1:]
		}
		c.res.Commits++
		c.res.Bytes += int64(len(batch[i].raw))
		c.progress.Add(1)
		if err := add(PackEntry{Kind: PackCommit, Hash: h, Value: batch[i].raw}); err != nil {
			return err
		}
		if !hasK[i] {
			continue // a commit without counters stays so: they are computed when needed
		}
		var parent Counters
		var parentOK bool
		if len(cm.Parents) > 0 {
			parent, parentOK = pks[0], hasPK[0]
			pks, hasPK = pks[1:], hasPK[1:]
		}
		if err := c.checkCounters(h, cm, ks[i], parent, parentOK, texts[i]); err != nil {
			return err
		}
		c.res.Counters++
		if err := add(PackEntry{Kind: PackCounters, Hash: h, Value: ks[i].Encode()}); err != nil {
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

// missingObject returns err, or when it is nil an error wrapping ErrCorrupt
// saying what is missing.
func missingObject(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, ErrCorrupt)...)
}

// checkCounters checks the counters k stored for commit h against its
// parent's (parent, when parentOK; computed when the parent has none) and
// its text: every entry checked so, each chain is right from its root.
func (c *copier) checkCounters(h dag.Hash, cm *dag.Commit, k, parent Counters, parentOK bool, text []byte) error {
	var first dag.Hash
	if len(cm.Parents) > 0 {
		first = cm.Parents[0]
	}
	want := parent
	if !parentOK && !first.IsZero() && !c.lost.commit(first) {
		var err error
		if want, err = CountersOf(c.ctx, c.src, first, false); err != nil {
			return fmt.Errorf("commit %s: counters: %w", h, err)
		}
	}
	switch {
	case !cm.Kind.Compiled():
		text = nil
	case text == nil:
		text = []byte(LostText(cm.Blob)) // as CountersOf counts it
	}
	if want = want.Next(cm.Kind, text); want != k {
		// Either entry may be the wrong one: name both.
		return fmt.Errorf("commit %s: its index entry (%d commits, %d messages, %d tokens) does not follow from its parent %s's (which gives %d, %d, %d): %w",
			h, k.Depth, k.Messages, k.Tokens, first.Short(), want.Depth, want.Messages, want.Tokens, ErrCorrupt)
	}
	return nil
}

// appendEntry adds e to the destination's pack, a batch per transaction.
func (c *copier) appendEntry(e PackEntry) error {
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
	err := c.dst.Update(c.ctx, func(tx Tx) error {
		return tx.(PackTx).AppendPack(c.pack, time.Now(), c.chunk)
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
func putEntry(tx Tx, e PackEntry) error {
	switch e.Kind {
	case PackBlob:
		if hp, ok := tx.(HashedPutter); ok {
			return hp.PutHashedBlob(e.Hash, e.Value)
		}
		_, err := tx.PutBlob(e.Value)
		return err
	case PackCommit:
		if hp, ok := tx.(HashedPutter); ok {
			return hp.PutEncodedCommit(e.Hash, e.Value)
		}
		cm, err := dag.Decode(e.Value)
		if err != nil {
			return err
		}
		_, err = tx.PutCommit(cm)
		return err
	default:
		k, err := DecodeCounters(e.Value)
		if err != nil {
			return err
		}
		return tx.PutCounters(e.Hash, k)
	}
}

// canRecord returns an error unless the destination tx can keep the
// source's salvage record, if it has one: without it, the commits whose
// history a salvage lost would be damage.
func (c *copier) canRecord(tx Tx) error {
	if _, ok := tx.(SalvageRecorder); c.record == nil || ok {
		return nil
	}
	return fmt.Errorf("%w: the source was salvaged from a damaged file and lost history (%d commits, %d texts) that the destination cannot record: copy it to a repository file",
		errors.ErrUnsupported, len(c.record.LostCommits), len(c.record.LostBlobs))
}

// refs copies every ref and reflog of the source into tx, and its
// salvage record.
func (c *copier) refs(tx Tx) error {
	if c.record != nil {
		if err := c.canRecord(tx); err != nil {
			return err
		}
		if err := tx.(SalvageRecorder).SetSalvageRecord(c.record); err != nil {
			return err
		}
	}
	rs, err := c.src.Refs()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if !r.IsSymbolic() {
			if ok, err := c.src.HasCommit(r.Hash); err != nil || !ok {
				return missingObject(err, "ref %s: its commit %s is not stored", r.Name, r.Hash.Short())
			}
		}
		if err := tx.SetRef(r); err != nil {
			return err
		}
		c.res.Refs++
	}
	// The source's reflogs in one pass (on a database one query, not one
	// a reflog), each written whole to tx once the next begins: the
	// function uses tx, never the source's transaction.
	var name string
	var es []refs.Entry
	flush := func() error {
		if name == "" {
			return nil
		}
		c.res.ReflogEntries += len(es)
		return tx.ReplaceReflog(name, es)
	}
	err = EachReflog(c.src, func(n string, e refs.Entry) error {
		if n != name {
			if err := flush(); err != nil {
				return err
			}
			name, es = n, nil // not reused: tx may keep what it was given
		}
		es = append(es, e)
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
