package dag_test

import (
	"fmt"
	"sort"

	"github.com/tractdag/tract/dag"
)

// The map-based walks below are the reference the Graph's are checked
// against: simple, and obviously what log --all and gc mean.

// refOrphans returns the commits of all that are not in reachable, oldest first
// (ties broken by hash so the order is stable).
func refOrphans(all map[dag.Hash]*dag.Commit, reachable map[dag.Hash]bool) []dag.Hash {
	var out []dag.Hash
	for h := range all {
		if !reachable[h] {
			out = append(out, h)
		}
	}
	refSortByTime(all, out)
	return out
}

// refForkPoint returns the first reachable commit on the first-parent chain of
// the orphan h: the commit its side chain hangs off. It is the zero hash when
// the chain reaches a root (or a missing commit) without meeting a reachable
// commit.
func refForkPoint(all map[dag.Hash]*dag.Commit, reachable map[dag.Hash]bool, h dag.Hash) dag.Hash {
	for !h.IsZero() {
		if reachable[h] {
			return h
		}
		c, ok := all[h]
		if !ok {
			return dag.Hash{}
		}
		h = c.Parent()
	}
	return dag.Hash{}
}

// refOrphanChains groups the orphans of all into side chains by fork point. The
// chains come in the order of their tips' times, oldest first.
func refOrphanChains(all map[dag.Hash]*dag.Commit, reachable map[dag.Hash]bool) []dag.Chain {
	orphans := refOrphans(all, reachable)
	hasOrphanChild := make(map[dag.Hash]bool, len(orphans))
	for _, h := range orphans {
		for _, p := range all[h].Parents {
			if !reachable[p] {
				hasOrphanChild[p] = true
			}
		}
	}
	listed := make(map[dag.Hash]bool, len(orphans))
	var chains []dag.Chain
	for _, tip := range orphans {
		if hasOrphanChild[tip] {
			continue
		}
		ch := dag.Chain{Tip: tip}
		h := tip
		for !h.IsZero() && !reachable[h] {
			c, ok := all[h]
			if !ok {
				break
			}
			if !listed[h] {
				ch.Commits = append(ch.Commits, h)
				listed[h] = true
			}
			h = c.Parent()
		}
		if reachable[h] {
			ch.Fork = h
		}
		chains = append(chains, ch)
	}
	// Orphans only reachable through non-first parents of other orphans, or
	// cycles of missing parents, are still listed: each becomes its own chain.
	for _, h := range orphans {
		if !listed[h] {
			listed[h] = true
			chains = append(chains, dag.Chain{Tip: h, Commits: []dag.Hash{h}, Fork: refForkPoint(all, reachable, h)})
		}
	}
	return chains
}

func refSortByTime(all map[dag.Hash]*dag.Commit, hs []dag.Hash) {
	sort.Slice(hs, func(i, j int) bool {
		ti, tj := all[hs[i]].Time, all[hs[j]].Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return string(hs[i][:]) < string(hs[j][:])
	})
}

// refGenerations returns each commit's generation number: 1 for a root, else
// one more than its highest parent (missing parents count as 0). A child
// always has a higher generation than its parents, which makes it a
// tie-breaker for time-ordered listings.
func refGenerations(all map[dag.Hash]*dag.Commit) map[dag.Hash]int {
	gen := make(map[dag.Hash]int, len(all))
	var stack []dag.Hash
	for start := range all {
		if gen[start] != 0 {
			continue
		}
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			c := all[h]
			g, pending := 0, false
			for _, p := range c.Parents {
				if _, ok := all[p]; !ok {
					continue
				}
				switch pg := gen[p]; {
				case pg == 0:
					stack = append(stack, p)
					pending = true
				case pg > g:
					g = pg
				}
			}
			if pending {
				continue
			}
			gen[h] = g + 1
			stack = stack[:len(stack)-1]
		}
	}
	return gen
}

// refReachable returns every commit reachable from tips through all parents,
// tips included. Zero tips are ignored.
func refReachable(get dag.Getter, tips ...dag.Hash) (map[dag.Hash]bool, error) {
	seen := make(map[dag.Hash]bool)
	stack := make([]dag.Hash, 0, len(tips))
	for _, t := range tips {
		if !t.IsZero() {
			stack = append(stack, t)
		}
	}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := get(h)
		if err != nil {
			return nil, fmt.Errorf("walk reachable: %w", err)
		}
		for _, p := range c.Parents {
			if !seen[p] {
				stack = append(stack, p)
			}
		}
	}
	return seen, nil
}

// refMapGetter returns a Getter over an in-memory set of commits.
func refMapGetter(all map[dag.Hash]*dag.Commit) dag.Getter {
	return func(h dag.Hash) (*dag.Commit, error) {
		if c, ok := all[h]; ok {
			return c, nil
		}
		return nil, fmt.Errorf("commit %s is missing", h.Short())
	}
}
