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
// 0. It reads the texts in their storage order first (a sequential read,
// where looking each commit's text up would seek), keeping the hashes of
// those that match alone, in key order; then the commits, of which it
// reads again only the texts of those with a diagnosis that did not. It
// holds only the matches' hashes (or, with a limit, the newest limit).
func Scan(ctx context.Context, tx store.Tx, q Query, limit int) ([]Hit, error) {
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
