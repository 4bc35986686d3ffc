package dag_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// graph builds small commit graphs by name. Each added commit is one second
// newer than the previous one, so time order is insertion order.
type graph struct {
	t     *testing.T
	all   map[dag.Hash]*dag.Commit
	hash  map[string]dag.Hash
	name  map[dag.Hash]string
	clock time.Time
}

func newGraph(t *testing.T) *graph {
	return &graph{t: t, all: map[dag.Hash]*dag.Commit{}, hash: map[string]dag.Hash{}, name: map[dag.Hash]string{}, clock: fixedTime}
}

func (g *graph) add(name string, parents ...string) dag.Hash {
	g.t.Helper()
	c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blobOf(name), Time: g.clock}
	for _, p := range parents {
		h, ok := g.hash[p]
		require.True(g.t, ok, "parent %s not added yet", p)
		c.Parents = append(c.Parents, h)
	}
	g.clock = g.clock.Add(time.Second)
	h := mustHash(g.t, c)
	g.all[h], g.hash[name], g.name[h] = c, h, name
	return h
}

func (g *graph) get() dag.Getter { return refMapGetter(g.all) }

// chains returns the orphan chains left by tips, from the Graph, after
// checking that the reference walk gives the same.
func (g *graph) chains(tips ...string) []dag.Chain {
	g.t.Helper()
	gr := buildGraph(g.t, g.all)
	var hs []dag.Hash
	for _, n := range tips {
		hs = append(hs, g.hash[n])
	}
	reach, err := gr.Reachable(hs...)
	require.NoError(g.t, err)
	got := gr.OrphanChains(reach)
	assert.Equal(g.t, refOrphanChains(g.all, g.reachable(tips...)), got, "the Graph agrees with the reference")
	return got
}

func (g *graph) names(hs []dag.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = g.name[h]
		if out[i] == "" {
			out[i] = h.Short()
		}
	}
	return out
}

func (g *graph) reachable(tips ...string) map[dag.Hash]bool {
	g.t.Helper()
	var hs []dag.Hash
	for _, n := range tips {
		hs = append(hs, g.hash[n])
	}
	r, err := refReachable(g.get(), hs...)
	require.NoError(g.t, err)
	return r
}

func (g *graph) set(m map[dag.Hash]bool) []string {
	var out []string
	for n, h := range g.hash {
		if m[h] {
			out = append(out, n)
		}
	}
	return out
}

// mergeGraph is
//
//	a ← b ← c ← m
//	     ↖      ↙ (second parent)
//	      x ← y
func mergeGraph(t *testing.T) *graph {
	g := newGraph(t)
	g.add("a")
	g.add("b", "a")
	g.add("c", "b")
	g.add("x", "b")
	g.add("y", "x")
	g.add("m", "c", "y")
	return g
}

func TestWalkFirstParent_FollowsFirstParentsNewestFirst(t *testing.T) {
	g := mergeGraph(t)
	var seen []dag.Hash
	err := dag.WalkFirstParent(g.get(), g.hash["m"], func(h dag.Hash, c *dag.Commit) error {
		assert.Equal(t, g.all[h], c)
		seen = append(seen, h)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"m", "c", "b", "a"}, g.names(seen))
}

func TestWalkFirstParent_ErrStopEndsEarlyWithoutError(t *testing.T) {
	g := mergeGraph(t)
	var seen []dag.Hash
	err := dag.WalkFirstParent(g.get(), g.hash["m"], func(h dag.Hash, _ *dag.Commit) error {
		seen = append(seen, h)
		if len(seen) == 2 {
			return dag.ErrStop
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"m", "c"}, g.names(seen))
}

func TestWalkFirstParent_ReturnsCallbackAndGetterErrors(t *testing.T) {
	g := mergeGraph(t)
	boom := errors.New("boom")
	err := dag.WalkFirstParent(g.get(), g.hash["m"], func(dag.Hash, *dag.Commit) error { return boom })
	assert.ErrorIs(t, err, boom)

	delete(g.all, g.hash["b"])
	err = dag.WalkFirstParent(g.get(), g.hash["m"], func(dag.Hash, *dag.Commit) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), g.hash["b"].Short()+" is missing")
}

func TestWalkFirstParent_ZeroStartVisitsNothing(t *testing.T) {
	called := false
	err := dag.WalkFirstParent(newGraph(t).get(), dag.Hash{}, func(dag.Hash, *dag.Commit) error {
		called = true
		return nil
	})
	require.NoError(t, err)
	assert.False(t, called)
}

func TestReachable_FollowsMergeParents(t *testing.T) {
	g := mergeGraph(t)
	assert.ElementsMatch(t, []string{"a", "b", "c", "x", "y", "m"}, g.set(g.reachable("m")))
	assert.ElementsMatch(t, []string{"a", "b", "x", "y"}, g.set(g.reachable("y")))
	assert.ElementsMatch(t, []string{"a", "b", "c", "x"}, g.set(g.reachable("c", "x")))
}

func TestReachable_IgnoresZeroTipsAndReportsMissingCommits(t *testing.T) {
	g := mergeGraph(t)
	r, err := refReachable(g.get(), dag.Hash{}, dag.Hash{})
	require.NoError(t, err)
	assert.Empty(t, r)

	delete(g.all, g.hash["x"])
	_, err = refReachable(g.get(), g.hash["m"])
	assert.ErrorContains(t, err, "walk reachable")
}

// retryGraph is the shape purify leaves behind: the branch holds
// sys ← u ← clean, and two rounds of failed attempts hang off u, sharing
// their first attempt a1:
//
//	sys ← u ← clean                     (main)
//	      u ← a1 ← s1 ← a2              (orphans, first retry round)
//	           a1 ← s1b ← a2b           (orphans, a second round from a1)
//	lone                                 (an orphan root, e.g. a dropped import)
func retryGraph(t *testing.T) *graph {
	g := newGraph(t)
	g.add("sys")
	g.add("u", "sys")
	g.add("a1", "u")
	g.add("s1", "a1")
	g.add("a2", "s1")
	g.add("s1b", "a1")
	g.add("a2b", "s1b")
	g.add("clean", "u")
	g.add("lone")
	return g
}

func TestOrphans_OldestFirst(t *testing.T) {
	g := retryGraph(t)
	got := refOrphans(g.all, g.reachable("clean"))
	assert.Equal(t, []string{"a1", "s1", "a2", "s1b", "a2b", "lone"}, g.names(got))
}

func TestOrphans_TiesBrokenByHash(t *testing.T) {
	g := newGraph(t)
	hs := []dag.Hash{g.add("p"), g.add("q"), g.add("r")}
	for _, h := range hs {
		g.all[h].Time = fixedTime // same time for all; hashes stay as keys
	}
	got := refOrphans(g.all, nil)
	require.Len(t, got, 3)
	for i := 1; i < len(got); i++ {
		assert.Less(t, got[i-1].String(), got[i].String())
	}
}

func TestForkPoint(t *testing.T) {
	g := retryGraph(t)
	reach := g.reachable("clean")
	assert.Equal(t, g.hash["u"], refForkPoint(g.all, reach, g.hash["a2b"]))
	assert.Equal(t, g.hash["u"], refForkPoint(g.all, reach, g.hash["a1"]))
	assert.Equal(t, g.hash["clean"], refForkPoint(g.all, reach, g.hash["clean"]), "a reachable commit is its own fork point")
	assert.True(t, refForkPoint(g.all, reach, g.hash["lone"]).IsZero(), "an orphan root has no fork point")
	assert.True(t, refForkPoint(g.all, reach, blobOf("not a commit")).IsZero())
}

func TestOrphanChains_SharedRetryTreeListsEachOrphanOnce(t *testing.T) {
	g := retryGraph(t)
	chains := g.chains("clean")
	require.Len(t, chains, 3)

	assert.Equal(t, g.hash["a2"], chains[0].Tip)
	assert.Equal(t, g.hash["u"], chains[0].Fork)
	assert.Equal(t, []string{"a2", "s1", "a1"}, g.names(chains[0].Commits))

	assert.Equal(t, g.hash["a2b"], chains[1].Tip)
	assert.Equal(t, g.hash["u"], chains[1].Fork)
	assert.Equal(t, []string{"a2b", "s1b"}, g.names(chains[1].Commits), "a1 is already listed in the older chain")

	assert.Equal(t, g.hash["lone"], chains[2].Tip)
	assert.True(t, chains[2].Fork.IsZero())
	assert.Equal(t, []string{"lone"}, g.names(chains[2].Commits))
}

func TestOrphanChains_OrphanReachableOnlyThroughSecondParentGetsItsOwnChain(t *testing.T) {
	g := newGraph(t)
	g.add("root")
	g.add("side", "root") // orphan, only a second parent of the orphan merge
	g.add("main", "root")
	g.add("merge", "main", "side")
	chains := g.chains("main")
	require.Len(t, chains, 2)
	assert.Equal(t, []string{"merge"}, g.names(chains[0].Commits))
	assert.Equal(t, g.hash["main"], chains[0].Fork)
	assert.Equal(t, []string{"side"}, g.names(chains[1].Commits))
	assert.Equal(t, g.hash["root"], chains[1].Fork)
}

func TestOrphanChains_NoOrphans(t *testing.T) {
	g := mergeGraph(t)
	assert.Empty(t, g.chains("m"))
}

func TestGenerations(t *testing.T) {
	g := mergeGraph(t)
	gen := refGenerations(g.all)
	want := map[string]int{"a": 1, "b": 2, "c": 3, "x": 3, "y": 4, "m": 5}
	for n, w := range want {
		assert.Equal(t, w, gen[g.hash[n]], n)
	}
	assert.Len(t, gen, len(want))
}

func TestGenerations_MissingParentsCountAsZero(t *testing.T) {
	g := mergeGraph(t)
	delete(g.all, g.hash["b"])
	gen := refGenerations(g.all)
	assert.Equal(t, 1, gen[g.hash["c"]], "c's only parent is missing: c counts as a root")
	assert.Equal(t, 1, gen[g.hash["x"]])
	assert.Equal(t, 3, gen[g.hash["m"]])
	assert.Equal(t, 1, gen[g.hash["a"]])
}

func TestGenerations_ChildAlwaysAboveParentsOnALongChain(t *testing.T) {
	g := newGraph(t)
	prev := "n0"
	g.add(prev)
	for i := 1; i < 2000; i++ {
		name := "n" + time.Duration(i).String()
		g.add(name, prev)
		prev = name
	}
	gen := refGenerations(g.all)
	assert.Equal(t, 2000, gen[g.hash[prev]])
	for h, c := range g.all {
		for _, p := range c.Parents {
			assert.Greater(t, gen[h], gen[p])
		}
	}
}
