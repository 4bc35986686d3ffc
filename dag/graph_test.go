package dag_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// buildGraph adds every commit of all to a Graph, in hash order.
func buildGraph(t *testing.T, all map[dag.Hash]*dag.Commit) *dag.Graph {
	t.Helper()
	hs := make([]dag.Hash, 0, len(all))
	for h := range all {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
	var g dag.Graph
	for _, h := range hs {
		raw, err := dag.Encode(all[h])
		require.NoError(t, err)
		require.NoError(t, g.Add(h, raw))
	}
	g.Link()
	return &g
}

// randomHistory makes n commits: chains, forks, merges, same-instant
// commits, metadata, and (with missing) a commit whose parent is absent.
func randomHistory(t *testing.T, seed uint64, n int, missing bool) (map[dag.Hash]*dag.Commit, []dag.Hash) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	all := map[dag.Hash]*dag.Commit{}
	var order []dag.Hash
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum([]byte(fmt.Sprint(i))), Time: clock}
		if rng.IntN(4) > 0 { // ties in time a quarter of the time
			clock = clock.Add(time.Second)
		}
		if i%9 == 4 {
			c.Meta = []byte(`{"n":1}`)
			c.Kind, c.Role = dag.KindSteering, dag.RoleAssistant
		}
		if len(order) > 0 && rng.IntN(10) > 0 {
			c.Parents = append(c.Parents, order[len(order)-1-rng.IntN(min(len(order), 5))])
			if rng.IntN(12) == 0 {
				c.Parents = append(c.Parents, order[rng.IntN(len(order))])
			}
		}
		if missing && i == n/2 {
			c.Parents = []dag.Hash{dag.Sum([]byte("never stored"))}
		}
		h := mustHash(t, c)
		all[h] = c
		order = append(order, h)
	}
	return all, order
}

// The Graph's walks agree with the map-based ones on random histories.
func TestGraph_AgreesWithMapWalks(t *testing.T) {
	for seed := range uint64(20) {
		all, order := randomHistory(t, seed, 300, false)
		g := buildGraph(t, all)
		require.Equal(t, len(all), g.Len())
		tips := []dag.Hash{order[len(order)-1], order[len(order)/3], {}}

		want, err := refReachable(refMapGetter(all), tips...)
		require.NoError(t, err)
		got, err := g.Reachable(tips...)
		require.NoError(t, err)
		var reach []int32
		for i, r := range got {
			assert.Equal(t, want[g.Hash(i)], r)
			if r {
				reach = append(reach, int32(i))
			}
		}

		// Newest first, ties children first, then by hash descending.
		gen := refGenerations(all)
		sorted := g.NewestFirst(reach)
		for k := 1; k < len(sorted); k++ {
			a, b := all[g.Hash(int(sorted[k-1]))], all[g.Hash(int(sorted[k]))]
			ha, hb := g.Hash(int(sorted[k-1])), g.Hash(int(sorted[k]))
			switch {
			case !a.Time.Equal(b.Time):
				assert.True(t, a.Time.After(b.Time))
			case gen[ha] != gen[hb]:
				assert.Greater(t, gen[ha], gen[hb])
			default:
				assert.Positive(t, bytes.Compare(ha[:], hb[:]))
			}
		}

		assert.Equal(t, refOrphanChains(all, want), g.OrphanChains(got), "seed %d", seed)

		for i := range g.Len() {
			h := g.Hash(i)
			c, err := g.Commit(i, refMapGetter(all))
			require.NoError(t, err)
			full := *all[h]
			assert.Equal(t, full.Meta != nil, g.HasMeta(i))
			full.Meta = nil
			assert.Equal(t, &full, c)
			j, ok := g.Index(h)
			assert.True(t, ok)
			assert.Equal(t, i, j)
		}
	}
}

func TestGraph_MissingParents(t *testing.T) {
	all, order := randomHistory(t, 3, 50, true)
	g := buildGraph(t, all)
	_, err := g.Reachable(order[25])
	assert.ErrorContains(t, err, "is missing")
	i, ok := g.Index(order[25])
	require.True(t, ok)
	c, err := g.Commit(i, refMapGetter(all))
	require.NoError(t, err)
	assert.Equal(t, []dag.Hash{dag.Sum([]byte("never stored"))}, c.Parents, "a missing parent is still named")
	_, ok = g.Index(dag.Sum([]byte("never stored")))
	assert.False(t, ok)
	reach := make([]bool, g.Len())
	assert.Equal(t, refOrphanChains(all, map[dag.Hash]bool{}), g.OrphanChains(reach))
}

func TestGraph_RefusesBadInput(t *testing.T) {
	var g dag.Graph
	c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Time: fixedTime}
	raw, err := dag.Encode(c)
	require.NoError(t, err)
	require.NoError(t, g.Add(dag.Hash{2}, raw))
	assert.ErrorContains(t, g.Add(dag.Hash{1}, raw), "out of order")
	assert.ErrorIs(t, g.Add(dag.Hash{3}, raw[:len(raw)-2]), dag.ErrBadEncoding)
	assert.ErrorIs(t, g.Add(dag.Hash{4}, []byte{99}), dag.ErrBadEncoding)
}

// Descendants marks what descends from the marked commits, not passing
// through stopped ones: the reference is a fixed point over parents.
func TestGraph_Descendants(t *testing.T) {
	for seed := range uint64(10) {
		all, order := randomHistory(t, seed, 200, false)
		g := buildGraph(t, all)
		from, stop := make([]bool, g.Len()), make([]bool, g.Len())
		want := map[dag.Hash]bool{}
		stopped := map[dag.Hash]bool{}
		for k, h := range order {
			i, _ := g.Index(h)
			switch {
			case k%37 == 5:
				from[i], want[h] = true, true
			case k%23 == 7:
				stop[i], stopped[h] = true, true
			}
		}
		for changed := true; changed; {
			changed = false
			for h, c := range all {
				if want[h] || stopped[h] {
					continue
				}
				for _, p := range c.Parents {
					if want[p] {
						want[h], changed = true, true
						break
					}
				}
			}
		}
		got := g.Descendants(from, stop)
		for i := range g.Len() {
			assert.Equal(t, want[g.Hash(i)], got[i], "seed %d, commit %d", seed, i)
		}
	}
}
