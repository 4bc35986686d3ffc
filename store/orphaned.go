package store

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/dag"
)

// Orphaned counts the commits a move of a position (a branch, or a
// detached HEAD) from from to to leaves no ref reaching: the commits on
// from's first-parent chain above the point where it meets to's chain,
// less those the chains of tips (the commits the other refs will point
// at) still reach. A zero from leaves nothing.
//
// Every walk is bounded by the derived depth of the commits (the length
// of their first-parent chains): a chain is compared with from's only at
// equal depths, and only above the deepest point already known to be
// reached, and no commit is read twice. Moving to an ancestor reads
// the commits in between; another ref's chain is read, with from's, down
// to where they meet or to the depth of the commits left behind, never
// below it (only a move to an unborn branch, which leaves from's whole
// chain, may read that chain to a root). tract writes no merge commits,
// so depth orders ancestors; a commit reached only through a later parent
// of a merge (none tract makes) would be counted as orphaned.
func Orphaned(ctx context.Context, tx Tx, from, to dag.Hash, tips []dag.Hash) (int, error) {
	if from.IsZero() {
		return 0, nil
	}
	top, err := depthOf(ctx, tx, from)
	if err != nil {
		return 0, err
	}
	chain := &chainByDepth{tx: tx, hashes: []dag.Hash{from}, top: top}
	// low is the depth at or under which every commit of from's chain
	// stays reachable: where to's chain meets it, then the deepest another
	// ref meets.
	var low int64
	seen := make(map[dag.Hash]bool)
	for _, tip := range append([]dag.Hash{to}, tips...) {
		if low, err = meet(ctx, tx, chain, tip, low, seen); err != nil {
			return 0, err
		}
	}
	return int(top - low), nil
}

// meet returns the depth of the deepest commit of from's chain that h's
// chain reaches, or low when that is no deeper than low. It reads h's
// chain down from h while it is deeper than low, and stops at a commit in
// seen (a walk from another tip read on from there already), adding the
// commits it reads to seen. A zero h reaches nothing.
func meet(ctx context.Context, tx Tx, from *chainByDepth, h dag.Hash, low int64, seen map[dag.Hash]bool) (int64, error) {
	d, err := depthOf(ctx, tx, h)
	if err != nil {
		return 0, err
	}
	for n := 1; d > low && !h.IsZero() && !seen[h]; n++ {
		seen[h] = true
		if d <= from.top {
			at, err := from.at(d)
			if err != nil {
				return 0, err
			}
			if at == h {
				return d, nil
			}
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		hd, err := tx.CommitHeader(h)
		if err != nil {
			return 0, err // it names the commit
		}
		h, d = hd.Parent, d-1
	}
	return low, nil
}

// chainByDepth is a first-parent chain read from its tip as far down as
// it is asked.
type chainByDepth struct {
	tx Tx
	// hashes are the commits read so far, the tip first.
	hashes []dag.Hash
	// top is the depth of the tip.
	top int64
}

// at returns the commit of the chain at depth d (1 is the root), which
// must be between 1 and the tip's depth.
func (c *chainByDepth) at(d int64) (dag.Hash, error) {
	i := int(c.top - d)
	for len(c.hashes) <= i {
		last := c.hashes[len(c.hashes)-1]
		hd, err := c.tx.CommitHeader(last)
		if err != nil {
			return dag.Hash{}, err // it names the commit
		}
		if hd.Parent.IsZero() {
			return dag.Hash{}, fmt.Errorf("commit %s: a root at depth %d: the chain's counters are inconsistent", last.Short(), c.top-int64(len(c.hashes))+1)
		}
		c.hashes = append(c.hashes, hd.Parent)
	}
	return c.hashes[i], nil
}

// depthOf returns the length of h's first-parent chain (0 for a zero h),
// from the derived counters (computed and stored when missing).
func depthOf(ctx context.Context, tx Tx, h dag.Hash) (int64, error) {
	c, err := CountersOf(ctx, tx, h, true)
	return c.Depth, err
}
