package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Upkeep in the background: the journal's checkpoint (bolt_journal.go)
// and the merge of the word index's pending documents (bolt_words.go)
// are each due once enough writes came, and done by the write
// transaction that finds them due, unless other writes wait for it
// (crowded): that transaction leaves them, up to twice their bounds, to
// a transaction of their own, which a goroutine of the handle starts
// once the handle's writes pause (see yieldToWrites); so too the steps
// of a move of the word index's recent blocks, which every write
// otherwise carries one of. A proxy's callers then wait for upkeep only
// when they arrive while it runs, where one of them waited for all of
// it, and the calls queued behind it for the rest. The merges of packs
// a checkpoint completed a tier of run in the same goroutine, after it.

// backgroundWork runs the work writes of a handle leave for later, in
// one goroutine at a time, and lets Close wait for it.
type backgroundWork struct {
	mu      sync.Mutex
	running bool // a goroutine runs the work
	again   bool // and looks for more when done: a write asked meanwhile
	closed  bool // Close waits for the goroutine: no new one starts
	done    sync.WaitGroup
}

// close keeps new work from starting and waits for the work running.
func (w *backgroundWork) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.done.Wait()
}

// later reports whether the committed transaction left work for the
// handle's background: the upkeep it left (upkeepDue), or the merges of
// packs its checkpoint may have made due.
func (t *boltTx) later() bool { return t.checkpointed || t.upkeepDue }

// workLater runs, in a goroutine, after the write that asked returned
// (it is done and durable, and its caller does not wait), the upkeep
// that crowded writes left and the merges of packs that are due (the
// steps of a merge of eight checkpoints' packs, several milliseconds
// each with their syncs), each transaction once the handle's writes
// pause. A write that asks while the goroutine runs has it look again
// when done. Work that fails is tried again when a write next asks (a
// write does the upkeep itself past twice its bounds); Close waits for
// the work running.
func (b *Bolt) workLater() {
	w := &b.background
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return
	case w.running:
		w.again = true
		return
	}
	w.running = true
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		ctx := context.WithValue(context.Background(), backgroundKey{}, true)
		for {
			_ = b.upkeep(ctx)
			_ = b.mergePacks(ctx, true)
			w.mu.Lock()
			if !w.again {
				w.running = false
				w.mu.Unlock()
				return
			}
			w.again = false
			w.mu.Unlock()
		}
	}()
}

// upkeep does the upkeep that is due, a checkpoint of the journal, a
// merge of the pending documents or a step of a move of the word index's
// recent blocks, each in a write transaction of its own, started once the
// handle's writes pause, until none is due or the handle closes.
func (b *Bolt) upkeep(ctx context.Context) error {
	for !b.background.closing() {
		// A move's steps are the background's while the writes are
		// crowded, which leave them; otherwise each write carries one.
		stepping := b.writesCrowded()
		var due, moving bool
		if err := b.View(ctx, func(tx Tx) error {
			t := tx.(*boltTx)
			moving = stepping && t.moving()
			due = moving || t.checkpointDue() || t.mergeDue()
			return nil
		}); err != nil || !due {
			return err
		}
		// Under writes that never pause, a checkpoint or a merge would
		// join a group of callers and hold them all: it is left to the
		// writes, which do it past twice its bounds, and to the next
		// write that asks. A move's steps are short, and only this
		// transaction carries them while writes are crowded.
		paused := b.yieldToWrites(ctx)
		if !paused && !moving {
			return nil
		}
		if err := b.Update(ctx, func(tx Tx) error {
			t := tx.(*boltTx)
			t.upkeep, t.stepOnly, t.stepping = true, !paused, moving
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// backgroundKey marks the context of the background's transactions.
type backgroundKey struct{}

// isBackground reports whether ctx is the handle's background's: its
// writes do not make the handle's writes crowded, or the background's
// own merges would have the writes of a lone writer leave their upkeep
// to it.
func isBackground(ctx context.Context) bool {
	v, _ := ctx.Value(backgroundKey{}).(bool)
	return v
}

// closing reports whether Close was called.
func (w *backgroundWork) closing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// writesCrowded reports whether the handle's writes are crowded (see
// writeGroup.crowded).
func (b *Bolt) writesCrowded() bool {
	b.ss.mu.Lock()
	s := b.ss.cur
	b.ss.mu.Unlock()
	return s != nil && s.group.crowded()
}

// moving reports whether a move of the word index's recent blocks into
// the main ones is under way.
func (t *boltTx) moving() bool {
	b := t.tx.Bucket(bucketWords)
	return b != nil && b.Get(keyWordsMoving) != nil
}

// checkpointDue reports whether the journal reached its bounds.
func (t *boltTx) checkpointDue() bool {
	records, size := t.journal().size()
	return records >= t.jpolicy.records || size >= t.jpolicy.bytes
}

// mergeDue reports whether the word index's pending documents reached
// their bound.
func (t *boltTx) mergeDue() bool {
	b := t.tx.Bucket(bucketWords)
	return b != nil && wordsCounter(b, keyWordsPending) >= t.wpolicy.merge
}

// runUpkeep does, in a transaction a background upkeep asked for, the
// journal's checkpoint if it is due, else the merge of the pending
// documents if it is, else a step of a move of the recent blocks, unless
// the transaction did a checkpoint or a merge already: one of them, as a
// write does, so that no write waits for two. The step only with
// stepping (the writes are crowded and leave it), and only it with
// stepOnly.
func (t *boltTx) runUpkeep(now time.Time) error {
	if t.checkpointed || t.wordsMerged {
		return nil
	}
	if !t.stepOnly && t.checkpointDue() {
		t.checkpointed = true
		return t.checkpoint(now, true)
	}
	b := t.tx.Bucket(bucketWords)
	if b == nil {
		return nil
	}
	var err error
	switch {
	case !t.stepOnly && t.mergeDue():
		t.wordsMerged = true
		err = t.mergePending(b)
	case t.stepping && t.moving():
		err = t.stepRecent(b)
	}
	if err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	return nil
}
