package dag

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Graph is the shape of many commits, held compactly for walks over a
// whole repository: each commit's hash, parents (as positions), time,
// kind, role, blob and whether it has metadata, in arrays ordered by hash.
// It takes about 110 bytes per commit, a third of a map of decoded
// commits, and its walks work on positions instead of hashing keys.
//
// Build one with Add, in ascending hash order (the order a store lists
// commits in), then Link.
type Graph struct {
	hashes []Hash
	nodes  []node
	extra  map[int32][]int32 // parents after the first, for merge commits
	// missing lists the parents Link did not find.
	missing []MissingParent
	// ends marks, by position, the commits whose missing parents are all
	// ones EndAt was told are lost: Reachable stops there.
	ends map[int32]bool
	// fanout[k] is the position of the first hash whose first two bytes
	// are k or more, as in git's pack indexes: Index searches only among
	// the hashes that share those two bytes, a few cache lines.
	fanout []int32

	// While building: each commit's first parent, and the others.
	first     []Hash
	moreFirst map[int32][]Hash
}

// node is a commit's shape. It holds no pointers, so a graph of a million
// commits costs the garbage collector nothing to scan.
type node struct {
	time   int64
	parent int32 // position of the first parent; noParent or missingParent
	kind   uint8 // Kind.code
	role   uint8 // Role.Code
	meta   bool
	blob   Hash
}

const (
	noParent      = -1
	missingParent = -2
)

// Add decodes the commit encoding raw, stored under h. Commits must be
// added in ascending hash order.
func (g *Graph) Add(h Hash, raw []byte) error {
	if n := len(g.hashes); n > 0 && bytes.Compare(g.hashes[n-1][:], h[:]) >= 0 {
		return fmt.Errorf("graph: commit %s added out of order", h.Short())
	}
	d := decoder{b: raw}
	if v := d.byte(); d.err == nil && v != EncodingVersion {
		return fmt.Errorf("commit %s: %w: unknown version %d", h.Short(), ErrBadEncoding, v)
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(raw))/HashSize {
		return fmt.Errorf("commit %s: %w: %d parents cannot fit", h.Short(), ErrBadEncoding, n)
	}
	var first Hash
	var more []Hash
	for i := uint64(0); i < n; i++ {
		var p Hash
		d.hash(&p)
		if i == 0 {
			first = p
		} else {
			more = append(more, p)
		}
	}
	nd := node{parent: noParent}
	kind, role := internKind(d.bytes()), internRole(d.bytes())
	d.hash(&nd.blob)
	nd.meta = len(d.bytes()) > 0
	nd.time = int64(d.uint64())
	if d.err != nil {
		return fmt.Errorf("commit %s: %w", h.Short(), d.err)
	}
	k, kok := kind.code()
	r, rok := role.Code()
	if !kok || !rok {
		return fmt.Errorf("commit %s: %w: invalid kind %q or role %q", h.Short(), ErrBadEncoding, kind, role)
	}
	nd.kind, nd.role = k, r
	if n > 0 {
		nd.parent = 0 // resolved by Link
	}
	if len(more) > 0 {
		if g.moreFirst == nil {
			g.moreFirst = make(map[int32][]Hash)
		}
		g.moreFirst[int32(len(g.hashes))] = more
	}
	g.hashes = grow(g.hashes, h)
	g.nodes = grow(g.nodes, nd)
	g.first = grow(g.first, first)
	return nil
}

// Grow makes room for n more commits, so that adding them does not
// copy the arrays as they fill: a caller that knows how many commits it
// will add saves the copies, and the memory of the old arrays while they
// are copied (about half the graph again, at the last doubling).
func (g *Graph) Grow(n int) {
	g.hashes = slices.Grow(g.hashes, n)
	g.nodes = slices.Grow(g.nodes, n)
	g.first = slices.Grow(g.first, n)
}

// grow appends v, doubling the capacity when it is full: append grows
// large slices by a quarter, which for a million commits copies the
// arrays several times over.
func grow[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = append(make([]T, 0, max(1024, 2*cap(s))), s...)
	}
	return append(s, v)
}

// MissingParent is a parent a commit names that the graph does not hold.
type MissingParent struct {
	Commit, Parent Hash
}

// Link resolves parents to positions, once every commit is added. A
// parent that is not in the graph is recorded as missing (see Missing).
func (g *Graph) Link() {
	g.fanout = make([]int32, 1<<16+1)
	for _, h := range g.hashes {
		g.fanout[int(h[0])<<8|int(h[1])+1]++
	}
	for k := 1; k < len(g.fanout); k++ {
		g.fanout[k] += g.fanout[k-1]
	}
	find := func(i int, p Hash) int32 {
		if j, ok := g.Index(p); ok {
			return int32(j)
		}
		g.missing = append(g.missing, MissingParent{Commit: g.hashes[i], Parent: p})
		return missingParent
	}
	for i := range g.nodes {
		if g.nodes[i].parent != noParent {
			g.nodes[i].parent = find(i, g.first[i])
		}
	}
	for i, ps := range g.moreFirst {
		pos := make([]int32, len(ps))
		for k, p := range ps {
			pos[k] = find(int(i), p)
		}
		if g.extra == nil {
			g.extra = make(map[int32][]int32)
		}
		g.extra[i] = pos
	}
	g.first, g.moreFirst = nil, nil
}

// Len returns the number of commits.
func (g *Graph) Len() int { return len(g.hashes) }

// Hash returns the hash of the commit at position i.
func (g *Graph) Hash(i int) Hash { return g.hashes[i] }

// Index returns the position of h.
func (g *Graph) Index(h Hash) (int, bool) {
	lo, hi := 0, len(g.hashes)
	if g.fanout != nil {
		k := int(h[0])<<8 | int(h[1])
		lo, hi = int(g.fanout[k]), int(g.fanout[k+1])
	}
	i := lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(g.hashes[lo+i][:], h[:]) >= 0 })
	return i, i < hi && g.hashes[i] == h
}

// HasMeta reports whether the commit at position i has metadata.
func (g *Graph) HasMeta(i int) bool { return g.nodes[i].meta }

// Blob returns the blob of the commit at position i.
func (g *Graph) Blob(i int) Hash { return g.nodes[i].blob }

// Time returns the time of the commit at position i.
func (g *Graph) Time(i int) time.Time { return time.Unix(0, g.nodes[i].time).UTC() }

// Kind returns the kind of the commit at position i.
func (g *Graph) Kind(i int) Kind { return kinds[g.nodes[i].kind] }

// FirstParent returns the position of the first parent of the commit at
// position i; ok is false for a root commit and for a missing parent.
func (g *Graph) FirstParent(i int) (p int, ok bool) {
	p = int(g.nodes[i].parent)
	return p, p >= 0
}

// Root reports whether the commit at position i has no parent.
func (g *Graph) Root(i int) bool { return g.nodes[i].parent == noParent }

// Missing returns the parents Link did not find, in no particular order.
func (g *Graph) Missing() []MissingParent { return g.missing }

// Descendants returns, by position, the commits that have one of the
// commits marked in from as an ancestor (through any parent), those
// included, except the commits marked in stop (nil: none), through which
// nothing passes.
func (g *Graph) Descendants(from, stop []bool) []bool {
	// Children as one array sliced by start offsets (CSR).
	n := len(g.nodes)
	start := make([]int32, n+1)
	for i := range g.nodes {
		g.parents(int32(i), func(p int32) {
			if p >= 0 {
				start[p+1]++
			}
		})
	}
	for i := range n {
		start[i+1] += start[i]
	}
	children := make([]int32, start[n])
	fill := slices.Clone(start[:n])
	for i := range g.nodes {
		g.parents(int32(i), func(p int32) {
			if p >= 0 {
				children[fill[p]] = int32(i)
				fill[p]++
			}
		})
	}
	out := slices.Clone(from)
	var stack []int32
	for i, f := range from {
		if f {
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[start[i]:start[i+1]] {
			if !out[c] && (stop == nil || !stop[c]) {
				out[c] = true
				stack = append(stack, c)
			}
		}
	}
	return out
}

// parents calls fn with each parent position of commit i (missing parents
// as missingParent).
func (g *Graph) parents(i int32, fn func(p int32)) {
	if p := g.nodes[i].parent; p != noParent {
		fn(p)
	}
	for _, p := range g.extra[i] {
		fn(p)
	}
}

// Commit returns the commit at position i without its metadata. A parent
// that is missing from the graph is still named, by a lookup in get.
func (g *Graph) Commit(i int, get Getter) (*Commit, error) {
	nd := g.nodes[i]
	c := &Commit{Kind: kinds[nd.kind], Role: roles[nd.role], Blob: nd.blob, Time: time.Unix(0, nd.time).UTC()}
	if nd.parent == noParent {
		return c, nil
	}
	if nd.parent == missingParent || g.extra[int32(i)] != nil && slices.Contains(g.extra[int32(i)], missingParent) {
		full, err := get(g.hashes[i])
		if err != nil {
			return nil, err
		}
		c.Parents = full.Parents
		return c, nil
	}
	g.parents(int32(i), func(p int32) { c.Parents = append(c.Parents, g.hashes[p]) })
	return c, nil
}

// EndAt makes Reachable treat the missing parents for which lost
// reports true as the end of their chain, not as an error: history lost
// on purpose (a repository salvaged from a damaged file keeps commits
// whose parent was not recovered). Call it after Link.
func (g *Graph) EndAt(lost func(Hash) bool) {
	bad := map[Hash]bool{}
	for _, m := range g.missing {
		if !lost(m.Parent) {
			bad[m.Commit] = true
		}
	}
	for _, m := range g.missing {
		if i, ok := g.Index(m.Commit); ok && !bad[m.Commit] {
			if g.ends == nil {
				g.ends = map[int32]bool{}
			}
			g.ends[int32(i)] = true
		}
	}
}

// Reachable returns, by position, which commits are reachable from tips
// through all parents, tips included. Zero tips are ignored; a tip or
// parent missing from the graph is an error, unless EndAt said it is
// lost.
func (g *Graph) Reachable(tips ...Hash) ([]bool, error) {
	seen := make([]bool, len(g.hashes))
	var stack []int32
	for _, t := range tips {
		if t.IsZero() {
			continue
		}
		i, ok := g.Index(t)
		if !ok {
			return nil, fmt.Errorf("walk reachable: commit %s is missing", t.Short())
		}
		stack = append(stack, int32(i))
	}
	var missing int32 = -1
	for len(stack) > 0 && missing < 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		g.parents(i, func(p int32) {
			switch {
			case p == missingParent:
				if !g.ends[i] {
					missing = i
				}
			case !seen[p]:
				stack = append(stack, p)
			}
		})
	}
	if missing >= 0 {
		return nil, fmt.Errorf("walk reachable: a parent of commit %s is missing", g.hashes[missing].Short())
	}
	return seen, nil
}

// NewestFirst returns the positions in, ordered by time, newest first.
// Commits made at the same instant are ordered children before parents
// (by generation number, computed only when such ties exist), then by
// hash, descending.
func (g *Graph) NewestFirst(in []int32) []int32 {
	out := slices.Clone(in)
	byTime := func(a, b int32) int {
		if c := cmp.Compare(g.nodes[b].time, g.nodes[a].time); c != 0 {
			return c
		}
		return bytes.Compare(g.hashes[b][:], g.hashes[a][:])
	}
	slices.SortFunc(out, byTime)
	tied := false
	for k := 1; k < len(out) && !tied; k++ {
		tied = g.nodes[out[k]].time == g.nodes[out[k-1]].time
	}
	if tied {
		gen := g.generations()
		slices.SortFunc(out, func(a, b int32) int {
			if c := cmp.Compare(g.nodes[b].time, g.nodes[a].time); c != 0 {
				return c
			}
			if c := cmp.Compare(gen[b], gen[a]); c != 0 {
				return c
			}
			return bytes.Compare(g.hashes[b][:], g.hashes[a][:])
		})
	}
	return out
}

// generations returns each commit's generation number, as Generations.
func (g *Graph) generations() []int32 {
	gen := make([]int32, len(g.nodes))
	var stack []int32
	for start := range gen {
		if gen[start] != 0 {
			continue
		}
		stack = append(stack[:0], int32(start))
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			var best int32
			pending := false
			g.parents(i, func(p int32) {
				if p < 0 {
					return
				}
				switch pg := gen[p]; {
				case pg == 0:
					stack = append(stack, p)
					pending = true
				case pg > best:
					best = pg
				}
			})
			if pending {
				continue
			}
			gen[i] = best + 1
			stack = stack[:len(stack)-1]
		}
	}
	return gen
}

// Chain is a side chain of orphans hanging off a fork point.
type Chain struct {
	// Fork is the reachable commit the chain forked from (zero if none).
	Fork Hash
	// Tip is the newest commit of the chain: an orphan with no orphan child.
	Tip Hash
	// Commits are the chain's orphans from Tip back towards Fork, newest
	// first. A commit shared with an earlier chain of the same fork point is
	// listed only in the earlier one, so the chain may stop before Fork.
	Commits []Hash
}

// OrphanChains groups the commits not reachable into side chains by fork
// point. An orphan's chain runs from a tip (an orphan no orphan has as a
// parent) along first parents to the first reachable commit, its fork
// point; a commit already listed in an older chain is not listed again.
// Chains come in the order of their tips' times, oldest first; orphans
// reachable only through second parents of other orphans get a chain each,
// after the others.
func (g *Graph) OrphanChains(reachable []bool) []Chain {
	var orphans []int32
	for i := range g.nodes {
		if !reachable[i] {
			orphans = append(orphans, int32(i))
		}
	}
	// Oldest first, ties by hash.
	slices.SortFunc(orphans, func(a, b int32) int {
		if c := cmp.Compare(g.nodes[a].time, g.nodes[b].time); c != 0 {
			return c
		}
		return bytes.Compare(g.hashes[a][:], g.hashes[b][:])
	})
	hasOrphanChild := make(map[int32]bool, len(orphans))
	for _, i := range orphans {
		g.parents(i, func(p int32) {
			if p >= 0 && !reachable[p] {
				hasOrphanChild[p] = true
			}
		})
	}
	listed := make(map[int32]bool, len(orphans))
	var chains []Chain
	for _, tip := range orphans {
		if hasOrphanChild[tip] {
			continue
		}
		ch := Chain{Tip: g.hashes[tip]}
		i := tip
		for i >= 0 && !reachable[i] {
			if !listed[i] {
				ch.Commits = append(ch.Commits, g.hashes[i])
				listed[i] = true
			}
			i = g.nodes[i].parent
		}
		if i >= 0 {
			ch.Fork = g.hashes[i]
		}
		chains = append(chains, ch)
	}
	for _, i := range orphans {
		if listed[i] {
			continue
		}
		listed[i] = true
		fork := Hash{}
		for j := i; j >= 0; j = g.nodes[j].parent {
			if reachable[j] {
				fork = g.hashes[j]
				break
			}
		}
		chains = append(chains, Chain{Tip: g.hashes[i], Commits: []Hash{g.hashes[i]}, Fork: fork})
	}
	return chains
}

// Leaves returns tips, in order, leaving out a tip that lies on another
// tip's first-parent chain or repeats an earlier one, and tips that are
// not in g. It walks each chain once.
func (g *Graph) Leaves(tips []Hash) []Hash {
	// walked[i]: 1 for a commit walked, 2 for one that is a parent of
	// another walked one. A walk stops where an earlier one went.
	walked := make([]uint8, g.Len())
	for _, h := range tips {
		i, ok := g.Index(h)
		if !ok || walked[i] != 0 {
			continue
		}
		walked[i] = 1
		for p, ok := g.FirstParent(i); ok; p, ok = g.FirstParent(p) {
			before := walked[p]
			walked[p] = 2
			if before != 0 {
				break
			}
		}
	}
	var out []Hash
	for _, h := range tips {
		if i, ok := g.Index(h); ok && walked[i] == 1 && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
