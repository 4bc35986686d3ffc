package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// PackBuilder writes the sorted entries of a PackSorter into a new pack, a
// batch of bytes per transaction, for its caller to publish (PublishPack)
// in a last transaction of its own, with the refs that move: a large
// import in bounded memory that lands whole or not at all.
type PackBuilder struct {
	update     func(context.Context, func(Tx) error) error
	now        func() time.Time
	batchBytes int

	pack    uint64 // the pack, once created, until published or dropped
	batches int    // transactions that appended to it
}

// NewPackBuilder returns a writer that runs its transactions with update
// (a Store's Update, or a handle's that refuses once it is closed), dates
// them with now, and appends about batchBytes of entries per transaction.
func NewPackBuilder(update func(context.Context, func(Tx) error) error, now func() time.Time, batchBytes int) *PackBuilder {
	return &PackBuilder{update: update, now: now, batchBytes: batchBytes}
}

// Write creates the pack and appends the entries of sorter to it.
func (w *PackBuilder) Write(ctx context.Context, sorter *PackSorter) error {
	err := w.update(ctx, func(tx Tx) error {
		p, ok := tx.(PackTx)
		if !ok {
			return fmt.Errorf("the repository's store (%T) cannot take an import larger than one batch", tx)
		}
		var err error
		w.pack, err = p.CreatePack(w.now())
		return err
	})
	if err != nil {
		return err
	}
	err = inBatches(ctx, sorter.Sorted(), w.batchBytes, func(e PackEntry) int { return len(e.Value) }, entryOverhead, func(batch []PackEntry) error {
		err := w.update(ctx, func(tx Tx) error {
			return tx.(PackTx).AppendPack(w.pack, w.now(), batch)
		})
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("the pack being written was removed meanwhile (a gc dropped it as abandoned); nothing was imported: %w", err)
		}
		if err == nil {
			w.batches++
		}
		return err
	})
	if err != nil {
		return err
	}
	if sorter.words != nil {
		return w.writeWords(ctx, sorter.words)
	}
	return nil
}

// inBatches calls put with the entries of seq in order, gathered into
// batches (one transaction each) of about limit bytes: an entry's bytes
// (size) and overhead each, a batch closed before the entry that would
// take it past limit. It stops at ctx's end, between batches. put may
// keep nothing of a batch: its slice is used again.
func inBatches[E any](ctx context.Context, seq iter.Seq2[E, error], limit int, size func(E) int, overhead int, put func([]E) error) error {
	var batch []E
	n := 0
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := put(batch); err != nil {
			return err
		}
		clear(batch)
		batch, n = batch[:0], 0
		return nil
	}
	for e, err := range seq {
		if err != nil {
			return err
		}
		if n+size(e) > limit && len(batch) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, e)
		n += size(e) + overhead
	}
	if len(batch) > 0 {
		return flush()
	}
	return nil
}

// Pack is the pack Write created, for PublishPack.
func (w *PackBuilder) Pack() uint64 { return w.pack }

// Batches is the number of transactions that appended to the pack.
func (w *PackBuilder) Batches() int { return w.batches }

// Published records that the pack was published: Drop leaves it.
func (w *PackBuilder) Published() { w.pack = 0 }

// Drop drops the pack unless it was published, even when ctx is done.
func (w *PackBuilder) Drop(ctx context.Context) {
	if w.pack != 0 {
		id := w.pack
		_ = w.update(context.WithoutCancel(ctx), func(tx Tx) error { return tx.(PackTx).DropPack(id) })
		w.pack = 0
	}
}

// AddChain adds a chain's blobs, commits and their counters (blobs[i] is
// commits[i]'s text), counting on from k, the counters of the first
// commit's parent; a commit without parents counts from zero. It returns
// the counters of the last commit.
func (s *PackSorter) AddChain(k Counters, commits []NewCommit, blobs []NewBlob) (Counters, error) {
	for i, c := range commits {
		if len(c.Commit.Parents) == 0 {
			k = Counters{}
		}
		k = k.Next(c.Commit.Kind, blobs[i].Data) // Next counts only compiled kinds' text
		if s.words != nil {
			if err := s.words.add(c, blobs[i].Data); err != nil {
				return k, err
			}
		}
		for _, e := range []PackEntry{
			{Kind: PackBlob, Hash: blobs[i].Hash, Value: blobs[i].Data},
			{Kind: PackCommit, Hash: c.Hash, Value: c.Raw},
			{Kind: PackCounters, Hash: c.Hash, Value: k.Encode()},
		} {
			if err := s.Add(e); err != nil {
				return k, err
			}
		}
	}
	return k, nil
}
