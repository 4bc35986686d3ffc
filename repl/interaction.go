package repl

import (
	"context"
	"errors"
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
	in := &interaction{tip: turn.Tip, first: turn.First, base: turn.Base}
	switch {
	case turn.State == tract.TurnAnswered:
		in.shape = UserAnswer
	case turn.State == tract.TurnNotSent:
		in.shape = StandaloneError
	case turn.Errors > 0:
		in.shape = UserError
	default:
		return nil, &UnansweredError{User: turn.User}
	}
	return in, nil
}

// UnansweredError is returned by /retry and /rewind when the branch ends
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
