package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// The columns for the shapes Topo's order produces, drawn from hand-made
// commits: each body is the commit's name.
func TestLanes_Shapes(t *testing.T) {
	h := func(name string) tract.Hash {
		var x tract.Hash
		copy(x[:], name)
		return x
	}
	type c struct {
		name, parent string
		orphan       bool
		fork         string
		ends         *tract.OrphanOutline
	}
	reset := &tract.OrphanOutline{Fork: h("F"), Commits: []tract.Hash{h("X")}, Action: "reset", Reason: "reset --soft: moving to HEAD~1"}
	lost := &tract.OrphanOutline{Commits: []tract.Hash{h("A")}}
	cases := []struct {
		name    string
		commits []c
		want    string
	}{
		{"a line", []c{{name: "B", parent: "A"}, {name: "A"}}, "* B\n* A\n"},
		{
			"two branches",
			[]c{{name: "M", parent: "F"}, {name: "S2", parent: "S1"}, {name: "S1", parent: "F"}, {name: "F"}},
			"* M\n| * S2\n| * S1\n|/\n* F\n",
		},
		{
			"an orphan above a branch's tip",
			[]c{{name: "X", parent: "F", orphan: true, fork: "F", ends: reset}, {name: "F", parent: "R"}, {name: "R"}},
			"| * X\n|/  orphaned by reset --soft: moving to HEAD~1 (1 commit)\n* F\n* R\n",
		},
		{
			"orphans off orphans",
			[]c{
				{name: "M", parent: "F"},
				{name: "A2", parent: "A1", orphan: true, fork: "F"},
				{name: "B1", parent: "A1", orphan: true, fork: "F"},
				{name: "A1", parent: "F", orphan: true, fork: "F"},
				{name: "F"},
			},
			"* M\n| * A2\n| | * B1\n| |/\n| * A1\n|/\n* F\n",
		},
		{
			"an orphan with no reachable ancestor",
			[]c{{name: "M"}, {name: "A", orphan: true, ends: lost}},
			"* M\n* A\n  orphaned (1 commit) (no reachable ancestor)\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			l := &lanes{w: &b}
			for _, cm := range tc.commits {
				tcm := tract.TopoCommit{LaneCommit: tract.LaneCommit{Hash: h(cm.name), Orphan: cm.orphan}, Ends: cm.ends}
				if cm.parent != "" {
					tcm.Parent = h(cm.parent)
				}
				if cm.fork != "" {
					tcm.Fork = h(cm.fork)
				}
				require.NoError(t, l.commit(tcm, cm.name, chainNote(tcm)))
			}
			assert.Equal(t, tc.want, b.String(), "\n"+b.String())
			assert.Zero(t, l.layout.Width(), "every column ended")
			assert.False(t, strings.Contains(b.String(), " \n"), "no trailing spaces")
		})
	}
}
