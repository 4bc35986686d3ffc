package tract

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
)

// SearchOption configures Search.
type SearchOption func(*searchConfig)

type searchConfig struct{ limit int }

// SearchLimit keeps the n newest matches (n <= 0: every match).
func SearchLimit(n int) SearchOption { return func(c *searchConfig) { c.limit = n } }

// Search returns the commits of the whole repository (every branch,
// orphaned attempts and chains included) whose text and diagnosis,
// taken together, hold every term of q (see search.ParseQuery), newest
// first (by commit time; equal times by hash). It reads every commit in
// one read transaction, holding only the matches' hashes (or, with
// SearchLimit, the n newest), then yields their texts a page at a time.
func (t *Tract) Search(ctx context.Context, q search.Query, opts ...SearchOption) iter.Seq2[*CommitInfo, error] {
	var cfg searchConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func(yield func(*CommitInfo, error) bool) {
		hits, err := t.searchScan(ctx, q, cfg.limit)
		if err != nil {
			yield(nil, fmt.Errorf("search: %w", err))
			return
		}
		var names map[Hash][]string
		page := func(tx store.Tx) ([]*CommitInfo, bool, error) {
			if names == nil {
				var err error
				if names, err = refNames(tx); err != nil {
					return nil, false, err
				}
			}
			n := min(pageSize, len(hits))
			hs := make([]Hash, n)
			for i := range n {
				hs[i] = hits[i].hash
			}
			cs := make([]*dag.Commit, n)
			at := make([]int, n)
			for i := range at {
				at[i] = i
			}
			if err := store.ReadCommitsInto(tx, cs, hs, at); err != nil {
				return nil, false, err
			}
			out, err := infos(tx, hs, cs, names)
			hits = hits[n:]
			return out, len(hits) > 0, err
		}
		if len(hits) == 0 {
			return
		}
		if err := walkPages(ctx, t, page, func(ci *CommitInfo) bool { return yield(ci, nil) }); err != nil {
			yield(nil, fmt.Errorf("search: %w", err))
		}
	}
}

type searchHit struct {
	time time.Time
	hash Hash
}

// newer orders hits newest first, equal times by hash.
func newer(a, b searchHit) int {
	if c := b.time.Compare(a.time); c != 0 {
		return c
	}
	return bytes.Compare(a.hash[:], b.hash[:])
}

// hitHeap keeps the newest hits: its root is the oldest of them.
type hitHeap []searchHit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return newer(h[i], h[j]) > 0 }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(searchHit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// searchScan returns the hashes of the commits q matches, newest first:
// at most limit when limit > 0. It reads the texts in their storage
// order first (a sequential read, where looking each commit's text up
// would seek), keeping the hashes of those that match alone, in key
// order; then the commits, of which it reads again only the texts of
// those with a diagnosis that did not.
func (t *Tract) searchScan(ctx context.Context, q search.Query, limit int) ([]searchHit, error) {
	var hits hitHeap
	err := t.view(ctx, func(tx store.Tx) error {
		n := 0
		tick := func() error {
			if n++; n%4096 == 0 {
				return ctx.Err()
			}
			return nil
		}
		var matched []Hash // in key order, as ForEachBlob goes
		err := tx.ForEachBlob(func(h dag.Hash, data []byte) error {
			if err := tick(); err != nil {
				return err
			}
			if q.Match(bytesToString(data)) {
				matched = append(matched, h)
			}
			return nil
		})
		if err != nil {
			return err
		}
		textMatches := func(b Hash) bool {
			_, ok := slices.BinarySearchFunc(matched, b, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
			return ok
		}
		return tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
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
					diagnosis, _ = record.Field[string](c.Meta, MetaDiagnosis)
				}
				if diagnosis == "" {
					return nil
				}
				text, err := commitText(tx, c)
				if err != nil {
					return fmt.Errorf("commit %s: %w", h.Short(), err)
				}
				if !q.Match(text, diagnosis) {
					return nil
				}
			}
			hit := searchHit{time: c.Time, hash: h}
			switch {
			case limit <= 0 || len(hits) < limit:
				heap.Push(&hits, hit)
			case newer(hit, hits[0]) < 0:
				hits[0] = hit
				heap.Fix(&hits, 0)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, newer)
	return hits, nil
}
