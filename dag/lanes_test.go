package dag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// The layout of two branches forked from F ("* M / | * S2 / | * S1 / |/ /
// * F"): each row's column, the columns it stands among, and the lines
// leaving it.
func TestLanes_TwoBranches(t *testing.T) {
	h := func(name string) dag.Hash {
		var x dag.Hash
		copy(x[:], name)
		return x
	}
	var l dag.Lanes
	rows := []dag.LaneRow{
		l.Next(dag.LaneCommit{Hash: h("M"), Parent: h("F")}),
		l.Next(dag.LaneCommit{Hash: h("S2"), Parent: h("S1")}),
		l.Next(dag.LaneCommit{Hash: h("S1"), Parent: h("F")}),
		l.Next(dag.LaneCommit{Hash: h("F")}),
	}
	type want struct {
		lane, join   int
		above, after []bool
		edges        []dag.LaneEdge
	}
	for i, w := range []want{
		{0, -1, []bool{true}, []bool{true}, []dag.LaneEdge{{From: 0, To: 0}}},
		{1, -1, []bool{true, true}, []bool{true, true}, []dag.LaneEdge{{From: 0, To: 0}, {From: 1, To: 1}}},
		{1, 0, []bool{true, true}, []bool{true}, []dag.LaneEdge{{From: 0, To: 0}, {From: 1, To: 0}}},
		{0, -1, []bool{true}, []bool{}, nil},
	} {
		r := rows[i]
		assert.Equal(t, w.lane, r.Lane, "row %d", i)
		assert.Equal(t, w.join, r.Join, "row %d", i)
		assert.Equal(t, w.above, r.Above, "row %d", i)
		assert.Equal(t, w.after, r.After, "row %d", i)
		assert.Equal(t, w.edges, r.Edges, "row %d", i)
	}
	assert.Equal(t, 1, rows[2].Drop())
	assert.Equal(t, 0, rows[2].Keep())
	assert.Equal(t, -1, rows[0].Keep())
	assert.Zero(t, l.Width())
}

// Skipping rows leaves the layout where laying them out does: the rows
// after are the same.
func TestLanes_SkipIsNextWithoutTheRow(t *testing.T) {
	h := func(name string) dag.Hash {
		var x dag.Hash
		copy(x[:], name)
		return x
	}
	tcs := []dag.LaneCommit{
		{Hash: h("M"), Parent: h("F")},
		{Hash: h("A2"), Parent: h("A1"), Orphan: true, Fork: h("F")},
		{Hash: h("B1"), Parent: h("A1"), Orphan: true, Fork: h("F")},
		{Hash: h("A1"), Parent: h("F"), Orphan: true, Fork: h("F")},
		{Hash: h("F"), Parent: h("R")},
		{Hash: h("X"), Orphan: true},
		{Hash: h("R")},
	}
	var all dag.Lanes
	want := make([]dag.LaneRow, len(tcs))
	for i, tc := range tcs {
		want[i] = all.Next(tc)
	}
	for k := range tcs {
		var l dag.Lanes
		for _, tc := range tcs[:k] {
			l.Skip(tc)
		}
		for i, tc := range tcs[k:] {
			assert.Equal(t, want[k+i], l.Next(tc), "row %d after skipping %d", k+i, k)
		}
		assert.Zero(t, l.Width())
	}
}

// LaneCommits gives each commit its first parent and each orphan the
// reachable commit its line forked from, however deep the line.
func TestGraph_LaneCommits(t *testing.T) {
	g := newGraph(t)
	g.add("a")
	g.add("b", "a")
	g.add("x1", "b") // orphans x1 ← x2 ← x3, forked from b
	g.add("x2", "x1")
	g.add("x3", "x2")
	g.add("r") // an orphan root: no fork point
	gr := buildGraph(t, g.all)
	reach, err := gr.Reachable(g.hash["b"])
	require.NoError(t, err)
	order := gr.DrawOrder(nil, reach, -1)
	lcs := laneCommits(gr, order, nil, reach)
	require.Len(t, lcs, len(order))
	byName := map[string]dag.LaneCommit{}
	for k, lc := range lcs {
		assert.Equal(t, gr.Hash(int(order[k])), lc.Hash)
		byName[g.name[lc.Hash]] = lc
	}
	assert.Equal(t, dag.LaneCommit{Hash: g.hash["a"]}, byName["a"])
	assert.Equal(t, dag.LaneCommit{Hash: g.hash["b"], Parent: g.hash["a"]}, byName["b"])
	for _, x := range []struct{ name, parent string }{{"x1", "b"}, {"x2", "x1"}, {"x3", "x2"}} {
		assert.Equal(t, dag.LaneCommit{Hash: g.hash[x.name], Parent: g.hash[x.parent], Orphan: true, Fork: g.hash["b"]}, byName[x.name], x.name)
	}
	assert.Equal(t, dag.LaneCommit{Hash: g.hash["r"], Orphan: true}, byName["r"])

	// Drawn without b, x1 has no parent in the drawing, and no fork.
	include := make([]bool, gr.Len())
	for _, n := range []string{"x1", "x2", "x3"} {
		i, _ := gr.Index(g.hash[n])
		include[i] = true
	}
	lcs = laneCommits(gr, gr.DrawOrder(include, reach, -1), include, reach)
	require.Len(t, lcs, 3)
	assert.Equal(t, dag.LaneCommit{Hash: g.hash["x1"], Orphan: true}, lcs[2])
	assert.Equal(t, dag.LaneCommit{Hash: g.hash["x3"], Parent: g.hash["x2"], Orphan: true}, lcs[0])
}

// laneCommits collects what LaneCommits gives, by index in order.
func laneCommits(g *dag.Graph, order []int32, include, reachable []bool) []dag.LaneCommit {
	out := make([]dag.LaneCommit, len(order))
	for k, lc := range g.LaneCommits(order, include, reachable) {
		out[k] = lc
	}
	return out
}
