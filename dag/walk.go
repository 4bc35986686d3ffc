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
