package tract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract"
)

// The layout of two branches forked from F ("* M / | * S2 / | * S1 / |/ /
// * F"): each row's column, the columns it stands among, and the lines
// leaving it.
func TestLanes_TwoBranches(t *testing.T) {
	h := func(name string) tract.Hash {
		var x tract.Hash
		copy(x[:], name)
		return x
	}
	var l tract.Lanes
	rows := []tract.LaneRow{
		l.Next(tract.TopoCommit{Hash: h("M"), Parent: h("F")}),
		l.Next(tract.TopoCommit{Hash: h("S2"), Parent: h("S1")}),
		l.Next(tract.TopoCommit{Hash: h("S1"), Parent: h("F")}),
		l.Next(tract.TopoCommit{Hash: h("F")}),
	}
	type want struct {
		lane, join   int
		above, after []bool
		edges        []tract.LaneEdge
	}
	for i, w := range []want{
		{0, -1, []bool{true}, []bool{true}, []tract.LaneEdge{{From: 0, To: 0}}},
		{1, -1, []bool{true, true}, []bool{true, true}, []tract.LaneEdge{{From: 0, To: 0}, {From: 1, To: 1}}},
		{1, 0, []bool{true, true}, []bool{true}, []tract.LaneEdge{{From: 0, To: 0}, {From: 1, To: 0}}},
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
