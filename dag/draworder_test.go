package dag_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// drawOrder runs DrawOrder on g by names: include lists the commits drawn
// (nil: all), tips the ones that make commits reachable (nil: reachable
// nil), head the HEAD commit ("": none).
func (g *graph) drawOrder(include, tips []string, head string) []string {
	g.t.Helper()
	gr := buildGraph(g.t, g.all)
	pos := func(name string) int {
		i, ok := gr.Index(g.hash[name])
		require.True(g.t, ok, "commit %s", name)
		return i
	}
	var in, reach []bool
	if include != nil {
		in = make([]bool, gr.Len())
		for _, n := range include {
			in[pos(n)] = true
		}
	}
	if tips != nil {
		var hs []dag.Hash
		for _, n := range tips {
			hs = append(hs, g.hash[n])
		}
		var err error
		reach, err = gr.Reachable(hs...)
		require.NoError(g.t, err)
	}
	h := -1
	if head != "" {
		h = pos(head)
	}
	var out []string
	for _, i := range gr.DrawOrder(in, reach, h) {
		out = append(out, g.name[gr.Hash(int(i))])
	}
	return out
}

func TestGraph_DrawOrder(t *testing.T) {
	// linear is a ← b ← c.
	linear := func(g *graph) {
		g.add("a")
		g.add("b", "a")
		g.add("c", "b")
	}
	// fork is a ← b ← c and b ← x ← y, y the newest.
	fork := func(g *graph) {
		g.add("a")
		g.add("b", "a")
		g.add("c", "b")
		g.add("x", "b")
		g.add("y", "x")
	}
	// retried is a ← q ← good, with the orphans q ← bad ← steer (a failed
	// attempt and its steering, older than good) and q ← late (newer).
	retried := func(g *graph) {
		g.add("a")
		g.add("q", "a")
		g.add("bad", "q")
		g.add("steer", "bad")
		g.add("good", "q")
		g.add("late", "q")
	}
	// roots is two histories, a ← b and r ← s, s the newest.
	roots := func(g *graph) {
		g.add("a")
		g.add("r")
		g.add("b", "a")
		g.add("s", "r")
	}
	tests := []struct {
		name    string
		build   func(*graph)
		include []string
		tips    []string
		head    string
		want    []string
	}{
		{name: "linear chain", build: linear, tips: []string{"c"}, head: "c", want: []string{"c", "b", "a"}},
		{name: "linear chain, no head, reachable nil", build: linear, head: "", want: []string{"c", "b", "a"}},
		{name: "fork, head on the older side comes first", build: fork, tips: []string{"c", "y"}, head: "c",
			want: []string{"c", "y", "x", "b", "a"}},
		{name: "fork, head on the newer side", build: fork, tips: []string{"c", "y"}, head: "y",
			want: []string{"y", "x", "c", "b", "a"}},
		{name: "fork, head inside a line", build: fork, tips: []string{"c", "y"}, head: "x",
			want: []string{"y", "x", "c", "b", "a"}},
		{name: "fork without head: newest line first", build: fork, tips: []string{"c", "y"},
			want: []string{"y", "x", "c", "b", "a"}},
		{name: "fork, a line not reachable comes after the reachable one", build: fork, tips: []string{"c"},
			want: []string{"c", "y", "x", "b", "a"}},
		{name: "orphans after the branch, newest orphan line first", build: retried, tips: []string{"good"}, head: "good",
			want: []string{"good", "late", "steer", "bad", "q", "a"}},
		{name: "orphans hang above their fork point, reachable nil", build: retried, head: "good",
			want: []string{"good", "late", "steer", "bad", "q", "a"}},
		{name: "several roots, head in the older history", build: roots, tips: []string{"b", "s"}, head: "b",
			want: []string{"b", "a", "s", "r"}},
		{name: "several roots, no head: newest history first", build: roots, tips: []string{"b", "s"},
			want: []string{"s", "r", "b", "a"}},
		{name: "several roots, the unreachable one last", build: roots, tips: []string{"b"},
			want: []string{"b", "a", "s", "r"}},
		{name: "include mask: only the commits marked", build: fork, include: []string{"b", "c", "x"}, tips: []string{"c", "y"}, head: "c",
			want: []string{"c", "x", "b"}},
		{name: "include mask: a commit whose parent is left out starts a tree", build: linear, include: []string{"a", "c"}, tips: []string{"c"},
			want: []string{"c", "a"}},
		{name: "include mask: a head left out ranks nothing", build: fork, include: []string{"a", "b", "x", "y"}, tips: []string{"c", "y"}, head: "c",
			want: []string{"y", "x", "b", "a"}},
		{name: "include mask: nothing", build: fork, include: []string{}, want: nil},
		{name: "merge drawn along its first parent", build: func(g *graph) {
			fork(g)
			g.add("m", "c", "y")
		}, tips: []string{"m"}, head: "m", want: []string{"m", "c", "y", "x", "b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t)
			tt.build(g)
			assert.Equal(t, tt.want, g.drawOrder(tt.include, tt.tips, tt.head))
		})
	}
}

// Lines whose newest commits were made at the same instant are ordered by
// hash, descending.
func TestGraph_DrawOrder_TiesByHash(t *testing.T) {
	all := map[dag.Hash]*dag.Commit{}
	var hs []dag.Hash
	for _, s := range []string{"one", "two", "three"} {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blobOf(s), Time: fixedTime}
		h := mustHash(t, c)
		all[h] = c
		hs = append(hs, h)
	}
	g := buildGraph(t, all)
	var got []dag.Hash
	for _, i := range g.DrawOrder(nil, nil, -1) {
		got = append(got, g.Hash(int(i)))
	}
	slices.SortFunc(hs, func(a, b dag.Hash) int { return bytes.Compare(b[:], a[:]) })
	assert.Equal(t, hs, got)
}

// On random histories (merges, ties in time, a missing parent), DrawOrder
// lists every included commit once, each before its first parent, and
// every first-parent subtree in one piece: no line of the drawing crosses
// another.
func TestGraph_DrawOrder_RandomHistories(t *testing.T) {
	for seed := range uint64(20) {
		all, order := randomHistory(t, seed, 300, seed%2 == 1)
		g := buildGraph(t, all)
		n := g.Len()
		var include []bool
		if seed%3 == 2 {
			include = make([]bool, n)
			for i := range n {
				include[i] = i%5 != 0
			}
		}
		in := func(i int) bool { return include == nil || include[i] }
		reach := make([]bool, n)
		if i, ok := g.Index(order[len(order)/2]); ok {
			r, err := g.Reachable(g.Hash(i))
			if err == nil {
				reach = r
			}
		}
		head, _ := g.Index(order[len(order)-1])

		got := g.DrawOrder(include, reach, head)
		at := make([]int, n)
		for i := range at {
			at[i] = -1
		}
		for k, i := range got {
			require.True(t, in(int(i)), "seed %d: commit %d is not included", seed, i)
			require.Equal(t, -1, at[i], "seed %d: commit %d listed twice", seed, i)
			at[i] = k
		}
		parent := func(i int) int {
			if p, ok := g.FirstParent(i); ok && in(p) {
				return p
			}
			return -1
		}
		// size[i] is the number of commits in i's first-parent subtree.
		size := make([]int, n)
		for k := range got {
			i := int(got[k])
			size[i]++
			if p := parent(i); p >= 0 {
				require.Less(t, k, at[p], "seed %d: commit %d comes after its parent", seed, i)
				size[p] += size[i]
			}
		}
		for i := range n {
			if !in(i) {
				assert.Equal(t, -1, at[i], "seed %d: commit %d is not included but listed", seed, i)
				continue
			}
			require.GreaterOrEqual(t, at[i], 0, "seed %d: commit %d is missing", seed, i)
			// The subtree is the size[i] commits just before i.
			for _, j := range got[at[i]-size[i]+1 : at[i]] {
				a := int(j)
				for a >= 0 && a != i {
					a = parent(a)
				}
				require.Equal(t, i, a, "seed %d: the subtree of commit %d is not in one piece", seed, i)
			}
		}
	}
}
