package repl

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract"
)

// interaction is the last interaction of a branch: its last turn (see
// tract.Turn) when that has an answer or an error to replace.
type interaction struct {
	*tract.Turn
}

// what names the interaction as the REPL prints it: "message and answer",
// "message and error" or "error" (a failure before the send).
func (in *interaction) what() string {
	switch {
	case in.State == tract.TurnUnanswered && in.Errors == 0:
		return "message" // only /rewind takes it
	case in.State == tract.TurnUnanswered:
		return "message and error"
	}
	return in.State.String()
}

// lastInteraction reads the branch's last interaction: its last turn as
// Tract.LastTurn reads it (notes after it included), except a lone user
// message, which has no answer or error to replace. Any other tip (or an
// empty branch) is ErrNothingToRetry, saying what the tip is.
func (s *Session) lastInteraction(ctx context.Context) (*interaction, error) {
	turn, err := s.cfg.Tract.LastTurn(ctx)
	if errors.Is(err, tract.ErrNoTurn) {
		return nil, fmt.Errorf("%w: %w", ErrNothingToRetry, err)
	}
	if err != nil {
		return nil, err
	}
	if turn.State == tract.TurnUnanswered && turn.Errors == 0 {
		return nil, &UnansweredError{User: turn.User}
	}
	return &interaction{turn}, nil
}

// UnansweredError is returned by /retry when the branch ends
// in a user message with no answer or error after it (notes aside): a
// turn that ended before either was committed leaves nothing to replace.
// It matches ErrNothingToRetry.
type UnansweredError struct {
	// User is the user message the branch ends in.
	User tract.Hash
}

// Error says what the branch ends in.
func (e *UnansweredError) Error() string {
	return fmt.Sprintf("%v: the branch ends in the user message %s, with no answer or error to replace", ErrNothingToRetry, e.User.Short())
}

// Unwrap returns ErrNothingToRetry.
func (e *UnansweredError) Unwrap() error { return ErrNothingToRetry }

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
