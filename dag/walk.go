package dag

import (
	"errors"
	"fmt"
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
