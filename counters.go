package tract

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// countersOf returns the derived counters of commit h (zero for a zero h):
// the length of its first-parent chain and the messages and estimated
// tokens Compile sends for it. Entries missing along the chain (commits
// written by a tract older than the index) are computed from the nearest
// ancestor that has one; when write is set they are stored too, so each is
// computed once. Reads of a complete index cost one lookup.
func countersOf(ctx context.Context, tx store.Tx, h Hash, write bool) (store.Counters, error) {
	type step struct {
		hash Hash
		hd   dag.Header
		c    store.Counters
	}
	// Walk back to a commit with counters, or past the root, then forward.
	var missing []step
	var base store.Counters
	for cur := h; !cur.IsZero(); {
		c, ok, err := tx.Counters(cur)
		if err != nil {
			return store.Counters{}, err
		}
		if ok {
			base = c
			break
		}
		if len(missing)%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return store.Counters{}, err
			}
		}
		hd, err := tx.CommitHeader(cur)
		if err != nil {
			return store.Counters{}, fmt.Errorf("commit %s: %w", cur.Short(), err)
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
			if text, err = tx.Blob(hd.Blob); err != nil {
				return store.Counters{}, fmt.Errorf("commit %s: %w", missing[i].hash.Short(), err)
			}
		}
		c = c.Next(hd.Kind, text)
		missing[i].c = c
	}
	if write {
		// In key order, as putSorted does, so a long chain goes in fast.
		slices.SortFunc(missing, func(a, b step) int { return bytes.Compare(a.hash[:], b.hash[:]) })
		if p, ok := tx.(store.SortedPacker); ok && len(missing) > 1 {
			p.PackSorted()
		}
		for _, s := range missing {
			if err := tx.PutCounters(s.hash, s.c); err != nil {
				return store.Counters{}, err
			}
		}
	}
	return c, nil
}
