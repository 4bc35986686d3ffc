package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/turn"
)

// ActionRetryLast is the reflog action of the move RetryLast makes when
// it takes a failed turn's error commits off the branch.
const ActionRetryLast = "retry-last"

// ErrNoTurn is matched (errors.Is) by the error of LastTurn, and of
// RetryLast, when the branch does not end in a turn of the shape asked
// for; the error's message says what the branch ends in.
var ErrNoTurn = turn.ErrNoTurn

// The last turn of a branch (see package turn).
type (
	// TurnState is the shape of a branch's last turn.
	TurnState = turn.State
	// Turn is the last turn of a branch: its commits from the first (the
	// user message, or the error of a TurnNotSent) to the tip.
	Turn = turn.Last
)

// The shapes of a last turn.
const (
	// TurnAnswered is a user message and the assistant's answer.
	TurnAnswered = turn.Answered
	// TurnUnanswered is a user message followed only by the error
	// commits of its failed turn, or by nothing at all.
	TurnUnanswered = turn.Unanswered
	// TurnNotSent is an error commit with no user message under it.
	TurnNotSent = turn.NotSent
)

// LastTurn reads the branch's last turn (see Turn and TurnState). A
// branch that ends otherwise (an assistant message with no user message
// before it, a lone note, a system prompt) or has no commits gives an
// error wrapping ErrNoTurn that says what the tip is. It reads the
// commits of the turn and two more, not the branch (see turn.ReadLast).
func (t *Tract) LastTurn(ctx context.Context) (*Turn, error) {
	return turn.ReadLast(func(limit int) ([]turn.LastCommit, error) {
		cs, err := t.Log(ctx, LogLimit(limit))
		if err != nil {
			return nil, err
		}
		out := make([]turn.LastCommit, len(cs))
		for i, c := range cs {
			out[i] = turn.LastCommit{Hash: c.Hash, Kind: c.Kind, Role: c.Role, ToolStep: c.MetaValue(record.KeyToolStep) != nil}
			if len(c.Parents) > 0 {
				out[i].Parent = c.Parents[0]
			}
		}
		return out, nil
	})
}

// PendingTurn returns the branch's last turn when it is TurnUnanswered,
// and nil (with no error) when the branch ends in anything else: the
// check to make before committing a new user message.
func (t *Tract) PendingTurn(ctx context.Context) (*Turn, error) {
	last, err := t.LastTurn(ctx)
	switch {
	case errors.Is(err, ErrNoTurn):
		return nil, nil
	case err != nil:
		return nil, err
	case last.State != TurnUnanswered:
		return nil, nil
	}
	return last, nil
}

// RetryLast answers the branch's unanswered user message again (see
// TurnUnanswered) without committing it a second time: it moves the
// branch back to that message in one compare-and-swap (reflog action
// ActionRetryLast; the failed turn's error commits stay listed by LogAll
// as orphans), then runs a turn like Generate's, with the same options,
// validation, retries and purify, whose restore point is the message.
// ChatResult.User is the message.
//
// A branch that does not end in an unanswered message gives an error
// wrapping ErrNoTurn; a branch another writer moves meanwhile, a
// *ConflictError. SystemPrompt is refused: the system message would
// follow the user message it should come before.
func (t *Tract) RetryLast(ctx context.Context, opts ...ChatOption) (*ChatResult, error) {
	cfg, err := t.turnConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.System() != "" {
		return nil, errors.New("retry last: a system prompt cannot be added: it would follow the user message it should precede")
	}
	if cfg.NewConversation() != "" {
		return nil, errors.New("retry last: a new conversation has no message to answer again")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A turn needs a branch to commit on: refuse a detached HEAD before
	// the move, not after it.
	if err := t.view(ctx, func(tx store.Tx) error { _, err := t.requireBranch(tx); return err }); err != nil {
		return nil, fmt.Errorf("retry last: %w", err)
	}
	last, err := t.LastTurn(ctx)
	if err != nil {
		return nil, fmt.Errorf("retry last: nothing to retry: %w", err)
	}
	switch last.State {
	case TurnAnswered:
		return nil, fmt.Errorf("retry last: nothing to retry: %w", turn.NoTurn("the branch's last message, %s, has its answer (%s)",
			last.User.Short(), last.Tip.Short()))
	case TurnNotSent:
		return nil, fmt.Errorf("retry last: nothing to retry: %w", turn.NoTurn("the branch ends in an error (%s) with no message of yours before it",
			last.First.Short()))
	}
	moveBack := func(ctx context.Context) (Hash, error) {
		if last.Tip == last.User {
			return last.User, nil
		}
		msg := fmt.Sprintf("retry-last: dropped %s after message %s to answer it again",
			english.Count(last.Commits-1, "commit", "commits"), last.User.Short())
		_, err := t.Reset(ctx, last.User.String(), Soft, ResetIf(last.Tip), ResetReflog(ActionRetryLast, msg))
		return last.User, err
	}
	if cfg.DeferStart() {
		// The branch moves back once the model was reached; a branch moved
		// meanwhile is a conflict, and the turn goes on off it.
		msgs, err := t.Compile(ctx, CompileAt(last.User.String()))
		if err != nil {
			return nil, fmt.Errorf("retry last: %w", err)
		}
		res, err := turn.RunDeferred(ctx, turnRepo{t}, turn.Start{Messages: msgs, Write: moveBack}, cfg)
		if err != nil {
			err = fmt.Errorf("chat: %w", err) // as runTurn words it
		}
		return res, err
	}
	if _, err := moveBack(ctx); err != nil {
		return nil, fmt.Errorf("retry last: %w", err)
	}
	res, err := t.runTurn(ctx, last.User, cfg)
	if res != nil {
		res.User = last.User
	}
	return res, err
}
