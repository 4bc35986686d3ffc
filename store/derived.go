package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
)

// Counters are what a commit's first-parent chain, from the root to the
// commit, adds up to. They are a derived index kept beside the commits,
// outside their hashes: a pure function of the commit and its ancestors,
// so an entry is never stale, only missing (for commits written by a tract
// older than the index, until something builds on them). With them, "how
// long is this chain, how big is the context Compile would send" is one
// lookup instead of a walk.
type Counters struct {
	// Depth is the number of commits on the chain.
	Depth int64
	// Messages is the number of messages Compile sends for the chain
	// (message, summary and steering commits; not notes or errors).
	Messages int64
	// Tokens estimates those messages' text in tokens: the sum of
	// dag.EstimateTokens of each (one per four characters).
	Tokens int64
}

// Next returns the counters of a commit of kind k with text on top of a
// parent whose counters are c (zero Counters for a root commit).
func (c Counters) Next(k dag.Kind, text []byte) Counters {
	c.Depth++
	if k.Compiled() {
		c.Messages++
		c.Tokens += int64(dag.EstimateTokens(text))
	}
	return c
}

// Encode returns the counters as three unsigned varints: depth, messages,
// tokens.
func (c Counters) Encode() []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(c.Depth))
	b = binary.AppendUvarint(b, uint64(c.Messages))
	return binary.AppendUvarint(b, uint64(c.Tokens))
}

// DecodeCounters decodes what Encode wrote; anything else (short, long, a
// varint longer than its shortest form, counters out of range) is an error
// wrapping dag.ErrBadEncoding.
func DecodeCounters(b []byte) (Counters, error) {
	var vs [3]int64
	rest := b
	for i := range vs {
		v, n := binary.Uvarint(rest)
		var shortest [binary.MaxVarintLen64]byte
		if n <= 0 || n != binary.PutUvarint(shortest[:], v) || v > 1<<62 {
			return Counters{}, fmt.Errorf("counters %x: %w", b, dag.ErrBadEncoding)
		}
		vs[i], rest = int64(v), rest[n:]
	}
	if len(rest) != 0 {
		return Counters{}, fmt.Errorf("counters %x: %d trailing bytes: %w", b, len(rest), dag.ErrBadEncoding)
	}
	return Counters{Depth: vs[0], Messages: vs[1], Tokens: vs[2]}, nil
}

// DerivedTx reads and writes the derived index of commits.
type DerivedTx interface {
	// Counters returns the counters stored for commit h; ok is false when
	// none are.
	Counters(h dag.Hash) (c Counters, ok bool, err error)
	// PutCounters stores the counters of commit h.
	PutCounters(h dag.Hash, c Counters) error
	// DeleteCounters removes the counters of h; removing missing ones is
	// not an error.
	DeleteCounters(h dag.Hash) error
	// ForEachCounters calls fn for every stored entry, in key order.
	ForEachCounters(fn func(h dag.Hash, c Counters) error) error
}

// CountersOf returns the counters of commit h (zero Counters for a zero
// h). Entries missing along its first-parent chain (commits written by a
// tract older than the index) are computed from the nearest ancestor that
// has one; when write is set, tx being a write transaction, they are
// stored too, so each is computed once. Reads of a complete index cost one
// lookup. ctx stops a long walk. A chain whose history a salvage lost
// (see SalvageRecord) counts from the commit above the loss, and a text
// it lost counts as LostText.
func CountersOf(ctx context.Context, tx Tx, h dag.Hash, write bool) (Counters, error) {
	type step struct {
		hash dag.Hash
		hd   dag.Header
		c    Counters
	}
	// Walk back to a commit with counters, or past the root, then forward.
	var missing []step
	var base Counters
	for cur := h; !cur.IsZero(); {
		c, ok, err := tx.Counters(cur)
		if err != nil {
			return Counters{}, err
		}
		if ok {
			base = c
			break
		}
		if len(missing)%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return Counters{}, err
			}
		}
		hd, err := tx.CommitHeader(cur)
		if err != nil {
			if len(missing) > 0 && endsAtLoss(tx, err, cur) {
				break // the chain's history was lost in a salvage: it counts from there
			}
			return Counters{}, err // it names the commit
		}
		missing = append(missing, step{hash: cur, hd: hd})
		cur = hd.Parent
	}
	c := base
	for i := len(missing) - 1; i >= 0; i-- {
		hd := missing[i].hd
		var text []byte
		if hd.Kind.Compiled() {
			var err error
			if text, err = tx.Blob(hd.Blob); errors.Is(err, ErrNotFound) && lostOf(tx).blob(hd.Blob) {
				text = []byte(LostText(hd.Blob))
			} else if err != nil {
				return Counters{}, fmt.Errorf("commit %s: %w", missing[i].hash.Short(), err)
			}
		}
		c = c.Next(hd.Kind, text)
		missing[i].c = c
	}
	if write {
		// In key order, so that a long chain goes in fast.
		slices.SortFunc(missing, func(a, b step) int { return bytes.Compare(a.hash[:], b.hash[:]) })
		if p, ok := tx.(SortedPacker); ok && len(missing) > 1 {
			p.PackSorted()
		}
		for _, s := range missing {
			if err := tx.PutCounters(s.hash, s.c); err != nil {
				return Counters{}, err
			}
		}
	}
	return c, nil
}
