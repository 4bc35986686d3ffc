package dag_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/dag"
)

// Leaves keeps the tips no other tip's first-parent chain passes
// through, in order, each once.
func TestGraph_Leaves(t *testing.T) {
	all := map[dag.Hash]*dag.Commit{}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(name string, parent dag.Hash) dag.Hash {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum([]byte(name)), Time: at}
		if !parent.IsZero() {
			c.Parents = []dag.Hash{parent}
		}
		h := mustHash(t, c)
		all[h] = c
		return h
	}
	// root - a - b (main)
	//         \
	//          c (side)
	root := commit("root", dag.Hash{})
	a := commit("a", root)
	b := commit("b", a)
	c := commit("c", a)
	g := buildGraph(t, all)
	absent := dag.Sum([]byte("absent"))
	for _, tc := range []struct {
		tips, want []dag.Hash
	}{
		{nil, nil},
		{[]dag.Hash{b}, []dag.Hash{b}},
		{[]dag.Hash{a, b}, []dag.Hash{b}},
		{[]dag.Hash{b, a}, []dag.Hash{b}},
		{[]dag.Hash{b, c, root}, []dag.Hash{b, c}},
		{[]dag.Hash{c, b, c}, []dag.Hash{c, b}},
		{[]dag.Hash{absent, b}, []dag.Hash{b}},
	} {
		t.Run(fmt.Sprint(len(tc.tips)), func(t *testing.T) {
			assert.Equal(t, tc.want, g.Leaves(tc.tips))
		})
	}
}
