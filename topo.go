package tract

import (
	"fmt"
	"iter"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/refs"
)

// TopoCommit is a commit in the order Outline.Topo gives, with what a
// drawing of the history needs to know about it: its place in the
// layout (LaneCommit) and the orphan chain it ends.
type TopoCommit struct {
	LaneCommit
	// Ends is set on the oldest commit of an orphan chain (see
	// Outline.Orphans), the one whose parent is the chain's fork point: it
	// is that chain, with the reflog entry that orphaned it.
	Ends *OrphanOutline
}

// Lanes lays out a history as columns, as 'tract log --all --graph'
// draws it: see dag.Lanes. Feed it Outline.Topo's commits.
type Lanes = dag.Lanes

// LaneCommit is what Lanes needs to know of a commit.
type LaneCommit = dag.LaneCommit

// LaneRow is one commit's row of a Lanes layout.
type LaneRow = dag.LaneRow

// LaneEdge is a line from one row of a Lanes layout to the next.
type LaneEdge = dag.LaneEdge

// Topo returns every commit of the outline in the order
// 'tract log --all' draws them: newest first, and each line of work —
// a branch that diverged, a chain of failed attempts — listed in one
// piece just above the commit it forked from, so that drawn as columns
// no line ever crosses another. At a fork, the line leading to HEAD
// comes first, then the other branches, then the orphans, each group
// newest first; separate histories (several roots) follow one another
// in the same order.
func (o *Outline) Topo() []TopoCommit {
	return slices.AppendSeq(make([]TopoCommit, 0, o.g.Len()), o.TopoSeq())
}

// TopoSeq yields Topo's commits one at a time, holding a position per
// commit (4 bytes) instead of a TopoCommit: for drawing a large history.
// While it is iterated the repository file stays open, so that the pages
// of Infos read along the way share one opening (and its mapped pages).
func (o *Outline) TopoSeq() iter.Seq[TopoCommit] {
	g := o.g
	head := -1
	if i, ok := g.Index(o.head); ok && !o.head.IsZero() {
		head = i
	}
	order := g.DrawOrder(nil, o.reach, head)
	ends := make(map[Hash]*OrphanOutline, len(o.Orphans))
	for k := range o.Orphans {
		if cs := o.Orphans[k].Commits; len(cs) > 0 {
			ends[cs[len(cs)-1]] = &o.Orphans[k]
		}
	}
	return func(yield func(TopoCommit) bool) {
		defer o.t.Linger()()
		for _, lc := range g.LaneCommits(order, nil, o.reach) {
			tc := TopoCommit{LaneCommit: lc}
			if lc.Orphan {
				tc.Ends = ends[lc.Hash]
			}
			if !yield(tc) {
				return
			}
		}
	}
}

// Note says, on the commit that ends an orphan chain (Ends is set), what
// orphaned the chain, as 'tract log --all' writes it beside the chain's
// join: "orphaned by purify: hid 1 failed attempt (2 commits)". It is ""
// on any other commit.
func (tc TopoCommit) Note() string {
	if tc.Ends == nil {
		return ""
	}
	note := tc.Ends.Description()
	if tc.Ends.Fork.IsZero() {
		note += " (no reachable ancestor)"
	}
	return note
}

// Description says what orphaned the chain, and how long it is:
// "orphaned by purify: hid 1 failed attempt (2 commits)", or "stranded by
// a conflict: …" for a result a conflict kept off its branch.
func (oc *OrphanOutline) Description() string {
	n := english.Count(len(oc.Commits), "commit", "commits")
	switch {
	case oc.Action == refs.ActionConflict:
		// "conflict: answer kept off main, which moved from … to …"
		return fmt.Sprintf("stranded by a %s (%s)", oc.Reason, n)
	case oc.Reason != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Reason, n)
	case oc.Action != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Action, n)
	}
	return "orphaned (" + n + ")"
}
