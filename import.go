package tract

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"time"

	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Default batch limits of ImportSeq: an import holds at most this many
// messages, or this many bytes of text, in memory at once, and writes
// about that much per transaction. bbolt keeps everything a write
// transaction touches in memory until it commits, so the limits bound an
// import's memory; they are large enough that the per-transaction costs
// (two syncs) stay a small part of the time.
const (
	DefaultImportBatchMessages = 50_000
	DefaultImportBatchBytes    = 3 << 20
)

// ImportOption configures ImportSeq.
type ImportOption func(*importConfig)

type importConfig struct {
	batchMessages int
	batchBytes    int
	progress      ProgressFunc
	bounded       func()
}

// ImportProgress reports the messages read so far to fn (see Progress;
// the total is not known until the end).
func ImportProgress(fn ProgressFunc) ImportOption {
	return func(c *importConfig) { c.progress = fn }
}

// ImportBounded has the import call fn, once, when it finds its memory
// bounded by its batches whatever the input's size: an input of more than
// a batch into a file whose word index has no documents yet, which builds
// the index beside its pack (see store.StagesPackWords) and moves it into
// place whole as it publishes it (see store.PackWordsMovedIn). A process
// may then bound its heap. (Into an index with documents, the publishing
// transaction merges the index built beside the pack into it: it holds
// the pages that merge writes, which grow with the input.)
func ImportBounded(fn func()) ImportOption {
	return func(c *importConfig) { c.bounded = fn }
}

// ImportBatch sets how many messages, and how many bytes of text, one
// batch of an import takes at most (non-positive values keep the
// defaults). Smaller batches use less memory; larger ones take fewer
// transactions and sort runs.
func ImportBatch(messages, textBytes int) ImportOption {
	return func(c *importConfig) {
		if messages > 0 {
			c.batchMessages = messages
		}
		if textBytes > 0 {
			c.batchBytes = textBytes
		}
	}
}

// ImportResult reports what an import appended.
type ImportResult struct {
	// Tip is where the branch points after the import (its old position
	// when nothing was imported).
	Tip Hash
	// Messages is the number of commits appended.
	Messages int
	// Batches is the number of transactions that wrote them, besides the
	// one that moved the branch: 0 when that one wrote them all (a
	// store that takes an import whole in one transaction, as a
	// database does).
	Batches int
}

// Import appends msgs to the current branch (a view's branch) as a chain
// of commits: the bulk path for loading existing conversations. It is
// ImportSeq over a slice, and returns the branch's new position.
func (t *Tract) Import(ctx context.Context, msgs []ImportMessage) (Hash, error) {
	r, err := t.ImportSeq(ctx, func(yield func(ImportMessage, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	})
	return r.Tip, err
}

// ImportSeq appends the messages msgs yields to the current branch (a
// view's branch) as a chain of commits, reading them as a stream: memory
// stays bounded by one batch (see ImportBatch), whatever the input's size.
//
// An import is all or nothing: the branch moves once, at the end, with one
// reflog entry "import: N commits", or not at all. An input that fits one
// batch is written in one transaction, like CommitMany. A longer one is
// sorted in runs in temporary files beside the repository (in the system's
// temporary directory when its directory refuses them), then written as
// a pack (see store.PackTx): in key order, a batch per transaction, so
// other processes get their turns in between, and invisible until the
// transaction that publishes it moves the branch. If the stream yields an
// error or an invalid message (the error names it by position; a text or
// metadata over its size limit is a *TooLargeError, see Limits), or ctx
// is cancelled, the pack is dropped: nothing was imported. A process killed
// mid-import leaves an unpublished pack that only takes space until GC
// drops it.
//
// A multi-batch import builds on the position it found when it started;
// if another writer moves the branch meanwhile, the import is kept off the
// branch (in the stranded reflog) and the error is a *ConflictError naming
// it.
func (t *Tract) ImportSeq(ctx context.Context, msgs iter.Seq2[ImportMessage, error], opts ...ImportOption) (ImportResult, error) {
	cfg := importConfig{batchMessages: DefaultImportBatchMessages, batchBytes: DefaultImportBatchBytes}
	for _, o := range opts {
		o(&cfg)
	}
	im := &importer{t: t, ctx: ctx, cfg: cfg, progress: cfg.progress.start("messages", 0)}
	defer im.progress.Stop()
	defer im.close()
	defer t.Linger()()
	res, err := im.run(msgs)
	if err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	return res, nil
}

// importer is one run of ImportSeq.
type importer struct {
	t   *Tract
	ctx context.Context
	cfg importConfig

	batch []ImportMessage
	size  int
	n     int // messages read so far, including batch

	progress *progress.Counter // counts the messages read

	at       time.Time      // the time of the first commit
	start    Hash           // the position the import builds on
	tip      Hash           // the last commit built
	counters store.Counters // tip's
	sorter   *store.PackSorter
	docs     *store.DocSpool    // the commits' documents, for a store that takes the import whole (see stream)
	pw       *store.PackBuilder // writes the pack, once the input is sorted
	words    bool               // the pack's word index is built beside it (see store.StagesPackWords)
	// wordsMoved: and moved into place whole as the pack is published
	// (see store.PackWordsMovedIn).
	wordsMoved bool
	batches    int
}

func (im *importer) run(msgs iter.Seq2[ImportMessage, error]) (ImportResult, error) {
	if err := im.ctx.Err(); err != nil {
		return ImportResult{}, err
	}
	for m, err := range msgs {
		if err == nil {
			err = im.ctx.Err()
		}
		if err != nil {
			return ImportResult{}, err
		}
		size := m.Size()
		if len(im.batch) == im.cfg.batchMessages || (len(im.batch) > 0 && im.size+size > im.cfg.batchBytes) {
			if err := im.sort(); err != nil {
				return ImportResult{}, err
			}
		}
		im.batch = append(im.batch, m)
		im.size += size
		im.n++
		im.progress.Add(1)
	}
	if im.sorter == nil {
		// Everything fits one batch: one transaction, like CommitMany.
		hs, err := im.t.appendChain(im.ctx, im.batch, refs.ActionImport, "import: "+english.Count(len(im.batch), "commit", "commits"))
		if err != nil {
			return ImportResult{}, err
		}
		return ImportResult{Tip: hs[len(hs)-1], Messages: len(im.batch), Batches: min(len(im.batch), 1)}, nil
	}
	if err := im.sort(); err != nil {
		return ImportResult{}, err
	}
	if err := im.write(); err != nil {
		return ImportResult{}, err
	}
	return ImportResult{Tip: im.tip, Messages: im.n, Batches: im.batches}, nil
}

// errReadOnlyStart rolls back the transaction that reads where an import
// starts (see sort).
var errReadOnlyStart = errors.New("rolled back: the import's start was read")

// sort builds the commits of the batch read so far on the import's tip and
// hands them, with their blobs and counters, to the sorter.
func (im *importer) sort() error {
	if im.sorter == nil {
		// Where the import starts is read in a write transaction that is
		// rolled back: it writes nothing, but a repository this process
		// may not write is refused here (a *ReadOnlyError), before the
		// input is sorted into files beside it.
		err := im.t.update(im.ctx, func(tx store.Tx) error {
			cur, err := im.t.requireBranch(tx)
			if err != nil {
				return err
			}
			im.start, im.tip, im.at = cur.Hash, cur.Hash, im.t.now()
			if _, ok := tx.(store.PackStreamer); ok {
				// The store takes the import whole (see stream), with
				// the documents of its commits.
				im.docs = store.NewDocSpool(im.t.sortDir())
			}
			im.words = store.StagesPackWords(tx)
			im.wordsMoved = store.PackWordsMovedIn(tx)
			if im.counters, err = store.CountersOf(im.ctx, tx, cur.Hash, false); err != nil {
				return err
			}
			return errReadOnlyStart
		})
		if err != errReadOnlyStart {
			return err
		}
		im.sorter = im.t.newPackSorter(im.cfg.batchBytes)
		if im.words {
			im.sorter.IndexWords() // beside the pack, not as it is published
		}
		if im.wordsMoved && im.cfg.bounded != nil {
			im.cfg.bounded()
		}
	}
	// Consecutive nanoseconds across batches, as within one.
	commits, blobs, err := im.t.buildChain(im.ctx, im.tip, im.batch, im.at.Add(time.Duration(im.n-len(im.batch))))
	if err != nil {
		return renumber(err, im.n-len(im.batch))
	}
	if im.counters, err = im.sorter.AddChain(im.counters, commits, blobs); err != nil {
		return err
	}
	if im.docs != nil {
		for i, c := range commits {
			d := store.WordDoc{Commit: c.Hash, Time: c.Commit.Time.UnixNano(), Words: store.CommitWords(c.Commit, string(blobs[i].Data))}
			if err := im.docs.Add(d); err != nil {
				return err
			}
		}
	}
	im.tip = commits[len(commits)-1].Hash
	clear(im.batch) // the texts are the sorter's now
	im.batch, im.size = im.batch[:0], 0
	return nil
}

// write writes the sorted entries as a pack, a batch per transaction, and
// publishes it in the transaction that moves the branch from start to the
// import's tip.
func (im *importer) write() error {
	if done, err := im.stream(); done {
		return err
	}
	im.pw = im.t.newPackWriter(im.cfg.batchBytes)
	if err := im.pw.Write(im.ctx, im.sorter); err != nil {
		return err
	}
	im.batches = im.pw.Batches()
	err := im.t.updateAdvancing(im.ctx, func(tx store.Tx) (*ConflictError, error) {
		cur, err := im.t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		if err := tx.(store.PackTx).PublishPack(im.pw.Pack()); err != nil {
			return nil, err
		}
		return im.t.land(tx, cur, im.start, im.tip, refs.ActionImport, "import: "+english.Count(im.n, "commit", "commits"), "import of "+english.Count(im.n, "message", "messages"))
	})
	var conflict *ConflictError
	if err == nil || errors.As(err, &conflict) {
		im.pw.Published() // a conflict keeps it, off the branch
		im.t.mergePacks(im.ctx)
	}
	return err
}

// errNoStream rolls back the transaction that found the store cannot
// take the import's pack whole (see stream).
var errNoStream = errors.New("rolled back: the store takes no pack in one transaction")

// stream writes the sorted entries and moves the branch in one
// transaction, on a store whose transactions take a pack of any size
// (store.PackStreamer: a database): each object is written once, where
// it is read, and a process killed midway leaves nothing. done is false
// when the store cannot, and write goes through a pack.
func (im *importer) stream() (done bool, err error) {
	if im.docs == nil {
		return false, nil
	}
	err = im.t.updateAdvancing(im.ctx, func(tx store.Tx) (*ConflictError, error) {
		ps, ok := tx.(store.PackStreamer)
		if !ok {
			return nil, errNoStream
		}
		cur, err := im.t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		if err := ps.StreamPack(im.sorter.Sorted(), im.docs.Docs()); err != nil {
			return nil, err
		}
		return im.t.land(tx, cur, im.start, im.tip, refs.ActionImport, "import: "+english.Count(im.n, "commit", "commits"), "import of "+english.Count(im.n, "message", "messages"))
	})
	if errors.Is(err, errNoStream) {
		return false, nil
	}
	return true, err
}

// close drops the pack of an import that did not publish it and removes
// the sorter's files.
func (im *importer) close() {
	if im.pw != nil {
		im.pw.Drop(im.ctx)
	}
	if im.sorter != nil {
		_ = im.sorter.Close()
	}
	if im.docs != nil {
		_ = im.docs.Close()
	}
}

// renumber turns buildChain's "message N" (counted within a batch) into the
// position in the whole input.
func renumber(err error, before int) error {
	var me *ingest.MessageError
	if errors.As(err, &me) {
		me.N += before
	}
	return err
}

// newPackSorter returns the sorter of an import too large for one batch
// (see sortDir).
func (t *Tract) newPackSorter(budget int) *store.PackSorter {
	return store.NewPackSorter(t.sortDir(), budget)
}

// sortDir is where an import too large for one batch sorts its runs:
// beside a repository file (same disk, and the space is the file's to
// take); for memory or a database, the system's temporary directory ("").
func (t *Tract) sortDir() string {
	if p := t.Path(); p != store.MemoryPath && !IsDatabaseURL(p) {
		return filepath.Dir(p)
	}
	return ""
}

// newPackWriter returns the writer of an import's pack, through the
// handle (which refuses once closed).
func (t *Tract) newPackWriter(batchBytes int) *store.PackBuilder {
	return store.NewPackBuilder(t.update, t.now, batchBytes)
}
