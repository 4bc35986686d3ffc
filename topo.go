package tract

import (
	"bytes"
	"cmp"
	"slices"
)

// TopoCommit is a commit in the order Outline.Topo gives, with what a
// drawing of the history needs to know about it.
type TopoCommit struct {
	Hash Hash
	// Parent is the commit's first parent: zero for a root, and for a
	// parent missing from the repository. Merge commits are drawn along
	// their first parent.
	Parent Hash
	// Orphan says that no branch or HEAD reaches the commit.
	Orphan bool
	// Fork is, for an orphan, the reachable commit its line of orphans
	// forked from: its nearest reachable ancestor along first parents
	// (zero when it has none).
	Fork Hash
	// Ends is set on the oldest commit of an orphan chain (see
	// Outline.Orphans), the one whose parent is the chain's fork point: it
	// is that chain, with the reflog entry that orphaned it.
	Ends *OrphanOutline
}

// Topo returns every commit of the outline in the order
// 'tract log --all' draws them: newest first, and each line of work —
// a branch that diverged, a chain of failed attempts — listed in one
// piece just above the commit it forked from, so that drawn as columns
// no line ever crosses another. At a fork, the line leading to HEAD
// comes first, then the other branches, then the orphans, each group
// newest first; separate histories (several roots) follow one another
// in the same order.
func (o *Outline) Topo() []TopoCommit {
	return o.topo(nil)
}

// topo is Topo restricted to the commits marked in include (nil: all).
// Every included commit's first parent must be included too, or be a
// root of the drawing.
func (o *Outline) topo(include []bool) []TopoCommit {
	g := o.g
	n := g.Len()
	in := func(i int) bool { return include == nil || include[i] }
	parent := func(i int) int {
		if p, ok := g.FirstParent(i); ok && in(p) {
			return p
		}
		return -1
	}
	// First-parent children as one array sliced by start offsets.
	start := make([]int32, n+1)
	for i := range n {
		if p := parent(i); in(i) && p >= 0 {
			start[p+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	children := make([]int32, start[n])
	fill := slices.Clone(start[:n])
	var roots []int32
	for i := range n {
		if !in(i) {
			continue
		}
		if p := parent(i); p >= 0 {
			children[fill[p]] = int32(i)
			fill[p]++
		} else {
			roots = append(roots, int32(i))
		}
	}

	// Each subtree's rank: 0 when it holds HEAD's commit, 1 when it holds
	// a reachable commit, 2 for orphans only; and its newest commit's time.
	rank := make([]uint8, n)
	newest := make([]int64, n)
	head := -1
	if i, ok := g.Index(o.head); ok && !o.head.IsZero() {
		head = i
	}
	for i := range n {
		switch {
		case i == head:
			rank[i] = 0
		case o.reach[i]:
			rank[i] = 1
		default:
			rank[i] = 2
		}
		newest[i] = g.Time(i).UnixNano()
	}
	order := postOrder(roots, children, start, nil)
	for _, i := range order {
		if p := parent(int(i)); p >= 0 {
			rank[p] = min(rank[p], rank[i])
			newest[p] = max(newest[p], newest[i])
		}
	}
	before := func(a, b int32) int {
		if c := cmp.Compare(rank[a], rank[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(newest[b], newest[a]); c != 0 {
			return c
		}
		hb, ha := g.Hash(int(b)), g.Hash(int(a))
		return bytes.Compare(hb[:], ha[:])
	}
	for i := range n {
		if cs := children[start[i]:start[i+1]]; len(cs) > 1 {
			slices.SortFunc(cs, before)
		}
	}
	slices.SortFunc(roots, before)

	ends := make(map[Hash]*OrphanOutline, len(o.Orphans))
	for k := range o.Orphans {
		if cs := o.Orphans[k].Commits; len(cs) > 0 {
			ends[cs[len(cs)-1]] = &o.Orphans[k]
		}
	}
	order = postOrder(roots, children, start, order[:0])
	out := make([]TopoCommit, len(order))
	// Backwards, every parent comes before its children.
	fork := make(map[int32]Hash)
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		tc := TopoCommit{Hash: g.Hash(int(i)), Orphan: !o.reach[i]}
		p := parent(int(i))
		ok := p >= 0
		if ok {
			tc.Parent = g.Hash(p)
		}
		if tc.Orphan {
			tc.Ends = ends[tc.Hash]
			switch {
			case !ok:
			case o.reach[p]:
				tc.Fork = tc.Parent
			default:
				tc.Fork = fork[int32(p)]
			}
			fork[i] = tc.Fork
		}
		out[k] = tc
	}
	return out
}

// postOrder appends to out the commits of the trees under roots, each
// after its children (taken in their order) and all their descendants:
// newest first, each subtree in one piece. It walks with a stack of its
// own, so a history a million commits deep costs no recursion.
func postOrder(roots, children, start []int32, out []int32) []int32 {
	type frame struct{ node, next int32 }
	var stack []frame
	for _, r := range roots {
		stack = append(stack[:0], frame{r, start[r]})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < start[top.node+1] {
				c := children[top.next]
				top.next++
				stack = append(stack, frame{c, start[c]})
				continue
			}
			out = append(out, top.node)
			stack = stack[:len(stack)-1]
		}
	}
	return out
}
