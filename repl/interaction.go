package repl

import (
	"context"
	"fmt"

	"github.com/tractdag/tract"
)

// Shape is the form of the last interaction.
type Shape int

// The shapes of an interaction.
const (
	// UserAnswer is a user message and the assistant's answer.
	UserAnswer Shape = iota + 1
	// UserError is a user message and the error commit of its failed turn.
	UserError
	// StandaloneError is an error commit of a failure before the send.
	StandaloneError
)

// String names the shape as the REPL prints it.
func (s Shape) String() string {
	switch s {
	case UserAnswer:
		return "message and answer"
	case UserError:
		return "message and error"
	case StandaloneError:
		return "error"
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

// interaction is the last interaction of a branch.
type interaction struct {
	shape Shape
	// tip is the branch tip, the interaction's last commit; first its
	// first commit (the user message, or the error).
	tip, first tract.Hash
	// base is the commit before the interaction (zero: it starts at a
	// root).
	base tract.Hash
}

// lastInteraction reads the branch's last interaction. Any other tip (or
// an empty branch) is ErrNothingToRetry, saying what the tip is.
func (s *Session) lastInteraction(ctx context.Context) (*interaction, error) {
	cs, err := s.cfg.Tract.Log(ctx, tract.LogLimit(2))
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: the branch has no commits yet", ErrNothingToRetry)
	}
	tip := cs[0]
	isUser := func(i int) bool {
		return i < len(cs) && cs[i].Kind == tract.KindMessage && cs[i].Role == tract.RoleUser
	}
	in := &interaction{tip: tip.Hash}
	switch {
	case tip.Kind == tract.KindError && isUser(1):
		in.shape = UserError
	case tip.Kind == tract.KindError:
		in.shape, in.first = StandaloneError, tip.Hash
		in.base = parent(tip)
		return in, nil
	case tip.Kind == tract.KindMessage && tip.Role == tract.RoleAssistant && isUser(1):
		in.shape = UserAnswer
	default:
		return nil, fmt.Errorf("%w: the branch ends in a %s %s (%s), not in a message and its answer or an error",
			ErrNothingToRetry, tip.Role, tip.Kind, tip.Hash.Short())
	}
	in.first, in.base = cs[1].Hash, parent(cs[1])
	return in, nil
}

// parent is c's first parent, zero for a root.
func parent(c *tract.CommitInfo) tract.Hash {
	if len(c.Parents) == 0 {
		return tract.Hash{}
	}
	return c.Parents[0]
}

// shortOr is h abbreviated, or "(root)" for zero.
func shortOr(h tract.Hash) string {
	if h.IsZero() {
		return "(root)"
	}
	return h.Short()
}
