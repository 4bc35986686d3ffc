package store

import (
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// Deleted counts what DeleteCommits deleted.
type Deleted struct {
	Commits, Blobs, ReflogEntries int
}

// OrphaningEntries maps each commit a ref moved away from to the latest
// reflog entry of HEAD (or of any ref) that did so backwards or sideways —
// the entry that orphaned it — and each result a conflict kept off its
// branch to the entry of the stranded reflog that records it.
func OrphaningEntries(tx Tx) (map[dag.Hash]refs.Entry, error) {
	out := make(map[dag.Hash]refs.Entry)
	err := EachReflog(tx, func(name string, e refs.Entry) error {
		if e.Action == refs.ActionConflict {
			// A result kept off its branch: the entry names it as New.
			out[e.New] = e
			return nil
		}
		if e.Old.IsZero() || e.Action == refs.ActionCommit || e.Action == refs.ActionImport {
			return nil
		}
		if prev, ok := out[e.Old]; !ok || e.Time.After(prev.Time) || name == refs.HEAD {
			out[e.Old] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Reachable marks, by position in g, every commit reachable from a
// branch or HEAD.
func Reachable(tx Tx, g *dag.Graph) ([]bool, error) {
	tips, err := RefTips(tx)
	if err != nil {
		return nil, err
	}
	return g.Reachable(tips...)
}

// RefTips returns the commits of every ref that keeps commits reachable:
// branches and HEAD. ORIG_HEAD is a pseudo-ref: the commits it names after
// a reset are orphans (the reflog protects them from GC).
func RefTips(tx Tx) ([]dag.Hash, error) { return RefTipsBut(tx, nil) }

// RefTipsBut is RefTips without the refs skip reports (nil: none).
func RefTipsBut(tx Tx, skip func(refs.Ref) bool) ([]dag.Hash, error) {
	all, err := tx.Refs()
	if err != nil {
		return nil, err
	}
	var tips []dag.Hash
	for _, r := range all {
		if r.Name == refs.OrigHead || skip != nil && skip(r) {
			continue
		}
		if !r.IsSymbolic() { // as Refs read it: no second look
			tips = append(tips, r.Hash)
			continue
		}
		if h, ok, err := ResolveRef(tx, r.Name); err != nil {
			return nil, err
		} else if ok {
			tips = append(tips, h)
		}
	}
	return tips, nil
}

// LoadGraph reads the shape of every commit of the repository. It
// counts them first (a read of the commits without decoding them), so
// that the graph's arrays are made once, at their size.
func LoadGraph(tx Tx) (*dag.Graph, error) {
	g := &dag.Graph{}
	n := 0
	if err := tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }); err != nil {
		return nil, err
	}
	g.Grow(n)
	if err := tx.ForEachCommit(g.Add); err != nil {
		return nil, err
	}
	g.Link()
	EndAtLoss(tx, g)
	return g, nil
}

// EndAtLoss tells g, a graph of tx's commits, which missing parents its
// repository lost in a salvage (see SalvageRecord and Graph.EndAt).
func EndAtLoss(tx ObjectTx, g *dag.Graph) {
	if len(g.Missing()) == 0 {
		return
	}
	if lost := lostOf(tx); len(lost.commits) > 0 {
		g.EndAt(lost.commit)
	}
}

// DeleteCommits removes the dead commits (by position in g), blobs left
// unused, and the reflog entries dropEntry selects (plus any that mention
// a dead commit). deleted, when not nil, is called after each commit it
// deletes.
func DeleteCommits(tx Tx, g *dag.Graph, dead []bool, dropEntry func(refs.Entry) bool, deleted func()) (Deleted, error) {
	var rm Deleted
	// The blobs of dead commits, unless a live commit uses them too.
	unused := make(map[dag.Hash]bool)
	for i, d := range dead {
		if d {
			unused[g.Blob(i)] = true
		}
	}
	for i, d := range dead {
		if !d && len(unused) > 0 {
			delete(unused, g.Blob(i))
		}
	}
	for i, d := range dead {
		if !d {
			continue
		}
		h := g.Hash(i)
		if err := tx.DeleteCommit(h); err != nil {
			return rm, err
		}
		if err := tx.DeleteCounters(h); err != nil {
			return rm, err
		}
		if ct, ok := tx.(ContextTx); ok {
			if err := ct.DeleteContext(h); err != nil {
				return rm, err
			}
		}
		rm.Commits++
		if deleted != nil {
			deleted()
		}
		if b := g.Blob(i); unused[b] {
			if err := tx.DeleteBlob(b); err != nil {
				return rm, err
			}
			delete(unused, b) // delete once
			rm.Blobs++
		}
	}
	// The reflogs that lose entries, found in one pass (on a database one
	// query, where a read of each would be one a reflog), then each read
	// again and rewritten: EachReflog's fn must not use tx.
	drop := func(e refs.Entry) bool { return Dead(g, dead, e.Old) || Dead(g, dead, e.New) || dropEntry(e) }
	var changed []string
	err := EachReflog(tx, func(name string, e refs.Entry) error {
		if (len(changed) == 0 || changed[len(changed)-1] != name) && drop(e) {
			changed = append(changed, name)
		}
		return nil
	})
	if err != nil {
		return rm, err
	}
	for _, name := range changed {
		es, err := tx.Reflog(name)
		if err != nil {
			return rm, err
		}
		kept := es[:0:0]
		for _, e := range es {
			if drop(e) {
				rm.ReflogEntries++
				continue
			}
			kept = append(kept, e)
		}
		if len(kept) != len(es) {
			if err := tx.ReplaceReflog(name, kept); err != nil {
				return rm, err
			}
		}
	}
	return rm, nil
}

// DropAbandonedPacks drops the unpublished packs last written before
// cutoff and returns how many.
func DropAbandonedPacks(tx Tx, cutoff time.Time) (int, error) {
	p, ok := tx.(PackTx)
	if !ok {
		return 0, nil
	}
	infos, err := p.UnpublishedPacks()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, info := range infos {
		if info.Updated.After(cutoff) {
			continue
		}
		if err := p.DropPack(info.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Dead reports whether h is marked in dead (by position in g; dead nil:
// nothing is).
func Dead(g *dag.Graph, dead []bool, h dag.Hash) bool {
	if dead == nil {
		return false
	}
	i, ok := g.Index(h)
	return ok && dead[i]
}
