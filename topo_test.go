package tract_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// Topo lists each line of work in one piece above the commit it forked
// from: HEAD's line first, then the other branches, then the orphans, each
// orphan with the fork point of its chain and the chain's end marked.
func TestOutline_TopoDivergingBranchesAndOrphans(t *testing.T) {
	tr := newTract(t)
	ctx := context.Background()
	must := func(h tract.Hash, err error) tract.Hash {
		t.Helper()
		require.NoError(t, err)
		return h
	}
	sys := must(tr.System(ctx, "sys"))
	q := must(tr.User(ctx, "q"))
	must(tr.CreateBranch(ctx, "side", ""))
	bad := must(tr.Assistant(ctx, "bad"))
	steer := must(tr.Commit(ctx, tract.KindSteering, tract.RoleUser, "fix it"))
	_, err := tr.Reset(ctx, q.String(), tract.Soft)
	require.NoError(t, err)
	good := must(tr.Assistant(ctx, "good"))
	side1 := must(tr.OnBranch("side").Assistant(ctx, "side 1"))
	side2 := must(tr.OnBranch("side").User(ctx, "side 2"))
	more := must(tr.User(ctx, "more"))

	o, err := tr.Outline(ctx)
	require.NoError(t, err)
	topo := o.Topo()
	var order []tract.Hash
	for _, tc := range topo {
		order = append(order, tc.Hash)
	}
	assert.Equal(t, []tract.Hash{more, good, side2, side1, steer, bad, q, sys}, order,
		"HEAD's line, then side, then the orphans, above their fork")
	assert.Equal(t, topo, slices.Collect(o.TopoSeq()), "TopoSeq yields Topo's commits")

	byHash := map[tract.Hash]tract.TopoCommit{}
	for _, tc := range topo {
		byHash[tc.Hash] = tc
	}
	assert.Equal(t, q, byHash[bad].Parent)
	assert.True(t, byHash[bad].Orphan)
	assert.True(t, byHash[steer].Orphan)
	assert.Equal(t, q, byHash[steer].Fork, "the orphan chain forked from the question")
	require.NotNil(t, byHash[bad].Ends, "the chain's oldest commit ends it")
	assert.Equal(t, "reset", byHash[bad].Ends.Action)
	assert.Nil(t, byHash[steer].Ends)
	assert.False(t, byHash[side1].Orphan)
	assert.True(t, byHash[sys].Parent.IsZero())
}

func TestWriteGraph_UnknownFormat(t *testing.T) {
	tr := newTract(t)
	err := tr.WriteGraph(context.Background(), nil, "svg")
	assert.ErrorIs(t, err, tract.ErrUnknownGraphFormat)
}
