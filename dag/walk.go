package dag

import (
	"errors"
	"fmt"
	"sort"
)

// Getter looks a commit up by hash. Walks take one so they work over any
// store (a bbolt transaction, an in-memory map).
type Getter func(Hash) (*Commit, error)

// ErrStop may be returned by a walk callback to end the walk early without error.
var ErrStop = errors.New("stop walk")

// WalkFirstParent calls fn for from and each first parent after it, newest
// first, until the root or until fn returns ErrStop (which WalkFirstParent
// turns into nil) or another error (which it returns).
func WalkFirstParent(get Getter, from Hash, fn func(Hash, *Commit) error) error {
	for h := from; !h.IsZero(); {
		c, err := get(h)
		if err != nil {
			return fmt.Errorf("walk first parents: %w", err)
		}
		if err := fn(h, c); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
		h = c.Parent()
	}
	return nil
}

// Reachable returns every commit reachable from tips through all parents,
// tips included. Zero tips are ignored.
func Reachable(get Getter, tips ...Hash) (map[Hash]bool, error) {
	seen := make(map[Hash]bool)
	stack := make([]Hash, 0, len(tips))
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

// MapGetter returns a Getter over an in-memory set of commits.
func MapGetter(all map[Hash]*Commit) Getter {
	return func(h Hash) (*Commit, error) {
		if c, ok := all[h]; ok {
			return c, nil
		}
		return nil, fmt.Errorf("commit %s is missing", h.Short())
	}
}

// Orphans returns the commits of all that are not in reachable, oldest first
// (ties broken by hash so the order is stable).
func Orphans(all map[Hash]*Commit, reachable map[Hash]bool) []Hash {
	var out []Hash
	for h := range all {
		if !reachable[h] {
			out = append(out, h)
		}
	}
	sortByTime(all, out)
	return out
}

// ForkPoint returns the first reachable commit on the first-parent chain of
// the orphan h: the commit its side chain hangs off. It is the zero hash when
// the chain reaches a root (or a missing commit) without meeting a reachable
// commit.
func ForkPoint(all map[Hash]*Commit, reachable map[Hash]bool, h Hash) Hash {
	for !h.IsZero() {
		if reachable[h] {
			return h
		}
		c, ok := all[h]
		if !ok {
			return Hash{}
		}
		h = c.Parent()
	}
	return Hash{}
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

// OrphanChains groups the orphans of all into side chains by fork point. The
// chains come in the order of their tips' times, oldest first.
func OrphanChains(all map[Hash]*Commit, reachable map[Hash]bool) []Chain {
	orphans := Orphans(all, reachable)
	hasOrphanChild := make(map[Hash]bool, len(orphans))
	for _, h := range orphans {
		for _, p := range all[h].Parents {
			if !reachable[p] {
				hasOrphanChild[p] = true
			}
		}
	}
	listed := make(map[Hash]bool, len(orphans))
	var chains []Chain
	for _, tip := range orphans {
		if hasOrphanChild[tip] {
			continue
		}
		ch := Chain{Tip: tip}
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
			chains = append(chains, Chain{Tip: h, Commits: []Hash{h}, Fork: ForkPoint(all, reachable, h)})
		}
	}
	return chains
}

func sortByTime(all map[Hash]*Commit, hs []Hash) {
	sort.Slice(hs, func(i, j int) bool {
		ti, tj := all[hs[i]].Time, all[hs[j]].Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return string(hs[i][:]) < string(hs[j][:])
	})
}

// Generations returns each commit's generation number: 1 for a root, else
// one more than its highest parent (missing parents count as 0). A child
// always has a higher generation than its parents, which makes it a
// tie-breaker for time-ordered listings.
func Generations(all map[Hash]*Commit) map[Hash]int {
	gen := make(map[Hash]int, len(all))
	var stack []Hash
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
