package tract

import (
	"context"
	"fmt"
	"iter"

	"github.com/tractdag/tract/dag"
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
// first (by commit time; equal times by hash). It finds them in one read
// transaction, through the repository's word index (see search.Scan;
// a file's, or a database's), by reading every commit in a file an older
// tract wrote, until its first write builds the index, holding only the
// matches' hashes (or, with SearchLimit, the n newest), then yields their
// texts a page at a time.
func (t *Tract) Search(ctx context.Context, q search.Query, opts ...SearchOption) iter.Seq2[*CommitInfo, error] {
	var cfg searchConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func(yield func(*CommitInfo, error) bool) {
		var hits []search.Hit
		err := t.view(ctx, func(tx store.Tx) (err error) { hits, err = search.Scan(ctx, tx, q, cfg.limit); return err })
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
				hs[i] = hits[i].Hash
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
