package dag

import (
	"bytes"
	"cmp"
	"slices"
)

// DrawOrder returns, by position, the commits marked in include (nil: all)
// in the order a drawing of the history as columns lists them, newest
// first, so that no line of the drawing crosses another: each commit comes
// after its first-parent descendants, and each line of work (a branch that
// diverged, a chain of orphans) comes in one piece just above the commit it
// forked from. Merge commits are drawn along their first parent; a commit
// whose first parent is not included, or is missing, starts a tree of its
// own.
//
// At a fork the lines are taken by rank (first the line holding head, then
// lines holding a commit marked in reachable, then the others), then by
// their newest commit, newest first, then by hash, descending. Separate
// trees (several roots) follow one another in the same order. head is the
// position of HEAD's commit, or -1 for none; reachable nil marks every
// commit reachable. include and reachable, when not nil, have one entry per
// commit of the graph.
//
// It takes O(n log n) time and walks with stacks of its own: a history a
// million commits deep costs no recursion.
func (g *Graph) DrawOrder(include, reachable []bool, head int) []int32 {
	n := len(g.nodes)
	in := func(i int) bool { return include == nil || include[i] }
	parent := func(i int) int {
		if p, ok := g.FirstParent(i); ok && in(p) {
			return p
		}
		return -1
	}
	// First-parent children as one array sliced by start offsets (CSR).
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

	// Each subtree's rank: 0 when it holds head, 1 when it holds a
	// reachable commit, 2 otherwise; and its newest commit's time.
	rank := make([]uint8, n)
	newest := make([]int64, n)
	for i := range n {
		switch {
		case i == head:
			rank[i] = 0
		case reachable == nil || reachable[i]:
			rank[i] = 1
		default:
			rank[i] = 2
		}
		newest[i] = g.nodes[i].time
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
		return bytes.Compare(g.hashes[b][:], g.hashes[a][:])
	}
	for i := range n {
		if cs := children[start[i]:start[i+1]]; len(cs) > 1 {
			slices.SortFunc(cs, before)
		}
	}
	slices.SortFunc(roots, before)
	return postOrder(roots, children, start, order[:0])
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
