package search

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/store"
)

// Hit is a commit a Scan matched.
type Hit struct {
	Time time.Time
	Hash dag.Hash
}

// newer orders hits newest first, equal times by hash.
func newer(a, b Hit) int {
	if c := b.Time.Compare(a.Time); c != 0 {
		return c
	}
	return bytes.Compare(a.Hash[:], b.Hash[:])
}

// hitHeap keeps the newest hits: its root is the oldest of them.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return newer(h[i], h[j]) > 0 }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Scan returns the commits of tx (every one it holds, reachable or not)
// whose text and diagnosis, taken together, hold every term of q, newest
// first (by commit time; equal times by hash): at most limit when limit >
// 0.
//
// When tx keeps a word index (store.WordIndexTx), Scan reads the index:
// the matches come roughly newest first, each with a bound on the time
// of those after it, so that with a limit it reads the commits of the
// newest matches only and stops once no later match can be newer. Else
// it reads every text and commit (see scanAll).
func Scan(ctx context.Context, tx store.Tx, q Query, limit int) ([]Hit, error) {
	if ix, ok := tx.(store.WordIndexTx); ok {
		hits, indexed, err := lookup(ctx, tx, ix, q, limit)
		if indexed || err != nil {
			return hits, err
		}
	}
	return scanAll(ctx, tx, q, limit)
}

// lookup is Scan through the word index ix of tx; indexed is false when
// tx has none.
func lookup(ctx context.Context, tx store.Tx, ix store.WordIndexTx, q Query, limit int) (hits []Hit, indexed bool, err error) {
	terms := make([]store.WordTerm, len(q.terms))
	for i, t := range q.terms {
		terms[i] = store.WordTerm{Word: t.word, Prefix: t.prefix}
	}
	var heapOf hitHeap
	seen := make(map[dag.Hash]bool)
	n := 0
	indexed, err = ix.WordMatches(terms, func(h dag.Hash, bound time.Time) (bool, error) {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		full := limit > 0 && len(heapOf) >= limit
		if full {
			oldest := heapOf[0]
			if bound.Before(oldest.Time) {
				return false, nil // no match from here on is newer
			}
			if bound.Equal(oldest.Time) && bytes.Compare(h[:], oldest.Hash[:]) > 0 {
				return true, nil // at best as old, and after it by hash
			}
		}
		if seen[h] {
			return true, nil
		}
		seen[h] = true
		c, err := tx.Commit(h)
		if err != nil {
			return false, err
		}
		hit := Hit{Time: c.Time, Hash: h}
		switch {
		case !full:
			heap.Push(&heapOf, hit)
		case newer(hit, heapOf[0]) < 0:
			heapOf[0] = hit
			heap.Fix(&heapOf, 0)
		}
		return true, nil
	})
	if err != nil || !indexed {
		return nil, indexed, err
	}
	slices.SortFunc(heapOf, newer)
	return heapOf, true, nil
}

// scanAll is Scan without an index. It reads the texts in their storage
// order first (a sequential read, where looking each commit's text up
// would seek), keeping the hashes of those that match alone, in key
// order; then the commits, of which it reads again only the texts of
// those with a diagnosis that did not. It holds only the matches' hashes
// (or, with a limit, the newest limit).
func scanAll(ctx context.Context, tx store.Tx, q Query, limit int) ([]Hit, error) {
	var hits hitHeap
	n := 0
	tick := func() error {
		if n++; n%4096 == 0 {
			return ctx.Err()
		}
		return nil
	}
	var matched []dag.Hash // in key order, as ForEachBlob goes
	err := tx.ForEachBlob(func(h dag.Hash, data []byte) error {
		if err := tick(); err != nil {
			return err
		}
		if q.Match(unsafeString(data)) {
			matched = append(matched, h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	textMatches := func(b dag.Hash) bool {
		_, ok := slices.BinarySearchFunc(matched, b, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		return ok
	}
	err = tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
		if err := tick(); err != nil {
			return err
		}
		c, err := dag.Decode(raw)
		if err != nil {
			return fmt.Errorf("commit %s: %w", h.Short(), err)
		}
		if !textMatches(c.Blob) {
			diagnosis := ""
			if len(c.Meta) > 0 {
				diagnosis, _ = record.Field[string](c.Meta, record.KeyDiagnosis)
			}
			if diagnosis == "" {
				return nil
			}
			text, err := store.CommitText(tx, c)
			if err != nil {
				return fmt.Errorf("commit %s: %w", h.Short(), err)
			}
			if !q.Match(text, diagnosis) {
				return nil
			}
		}
		hit := Hit{Time: c.Time, Hash: h}
		switch {
		case limit <= 0 || len(hits) < limit:
			heap.Push(&hits, hit)
		case newer(hit, hits[0]) < 0:
			hits[0] = hit
			heap.Fix(&hits, 0)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, newer)
	return hits, nil
}

// unsafeString is b as a string, without a copy: b must not change.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
