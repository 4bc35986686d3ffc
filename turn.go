package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/store"
)

// ActionRetryLast is the reflog action of the move RetryLast makes when
// it takes a failed turn's error commits off the branch.
const ActionRetryLast = "retry-last"

// ErrNoTurn is matched (errors.Is) by the error of LastTurn, and of
// RetryLast, when the branch does not end in a turn of the shape asked
// for; the error's message says what the branch ends in.
var ErrNoTurn = errors.New("the branch does not end in a turn")

// noTurnError is an error that matches ErrNoTurn and says only what the
// branch ends in: "the branch does not end in a turn" would say it twice.
type noTurnError struct{ msg string }

func (e *noTurnError) Error() string        { return e.msg }
func (e *noTurnError) Is(target error) bool { return target == ErrNoTurn }

func noTurn(format string, args ...any) error { return &noTurnError{fmt.Sprintf(format, args...)} }

// TurnState is the shape of a branch's last turn.
type TurnState int

// The shapes of a last turn.
const (
	// TurnAnswered is a user message and the assistant's answer.
	TurnAnswered TurnState = iota + 1
	// TurnUnanswered is a user message followed only by the error
	// commits of its failed turn (exhausted validation, a failed model
	// call), or by nothing at all (an interrupted turn, or a message
	// committed without an answer). A new user message would follow it
	// directly, so the model would see two user messages in a row.
	TurnUnanswered
	// TurnNotSent is an error commit with no user message under it: a
	// failure before anything was sent (no model configured).
	TurnNotSent
)

// String names the state as the CLI and the REPL print it.
func (s TurnState) String() string {
	switch s {
	case TurnAnswered:
		return "message and answer"
	case TurnUnanswered:
		return "unanswered message"
	case TurnNotSent:
		return "error"
	}
	return fmt.Sprintf("TurnState(%d)", int(s))
}

// Turn is the last turn of a branch: its commits from the first (the
// user message, or the error of a TurnNotSent) to the tip. Notes after
// them (a provenance note, the note of a skipped task) belong to the turn.
type Turn struct {
	// State is the turn's shape.
	State TurnState
	// User is the turn's user message (zero for TurnNotSent).
	User Hash
	// First is the turn's first commit: User, or the earliest error of a
	// TurnNotSent.
	First Hash
	// Tip is the branch tip, the turn's last commit.
	Tip Hash
	// Base is the commit before First (zero: the turn starts at a root).
	Base Hash
	// Commits is how many commits the turn has, First and Tip included:
	// 'tract reset --soft HEAD~Commits' takes the turn off the branch.
	Commits int
	// Errors is how many of them are error commits.
	Errors int
}

// turnScan is how many commits LastTurn reads in its first look: a
// turn's commits after its message are an error and a few notes at most.
const turnScan = 8

// LastTurn reads the branch's last turn (see Turn and TurnState). A
// branch that ends otherwise (an assistant message with no user message
// before it, a lone note, a system prompt) or has no commits gives an
// error wrapping ErrNoTurn that says what the tip is. It reads the
// commits of the turn and two more, not the branch.
func (t *Tract) LastTurn(ctx context.Context) (*Turn, error) {
	var cs []*CommitInfo
	for limit := turnScan; ; limit *= 4 {
		var err error
		if cs, err = t.Log(ctx, LogLimit(limit)); err != nil {
			return nil, err
		}
		// Enough when the branch has no more, or when the commits read
		// reach past the run of errors and notes at the tip by two (a
		// message and the one before it).
		if len(cs) < limit || trailing(cs)+2 <= len(cs) {
			break
		}
	}
	if len(cs) == 0 {
		return nil, noTurn("the branch has no commits yet")
	}
	turn := &Turn{Tip: cs[0].Hash}
	i := 0
	for i < len(cs) && (cs[i].Kind == KindError || cs[i].Kind == KindNote) {
		if cs[i].Kind == KindError {
			turn.Errors++
		}
		i++
	}
	isUser := func(i int) bool {
		return i < len(cs) && cs[i].Kind == KindMessage && cs[i].Role == RoleUser
	}
	switch {
	case isUser(i):
		turn.State = TurnUnanswered
	case turn.Errors > 0:
		// A failure before the send: the turn is the errors (and the
		// notes above them), down to the earliest of the run.
		for i > 0 && cs[i-1].Kind != KindError {
			i--
		}
		turn.State, turn.First, turn.Commits = TurnNotSent, cs[i-1].Hash, i
		turn.Base = firstParent(cs[i-1])
		return turn, nil
	case i < len(cs) && cs[i].Kind == KindMessage && cs[i].Role == RoleAssistant && isUser(i+1):
		i++
		turn.State = TurnAnswered
	default:
		return nil, noTurn("the branch ends in %s (%s), not in a user message, its answer or an error",
			english.A(string(cs[0].Role)+" "+string(cs[0].Kind)), cs[0].Hash.Short())
	}
	turn.User, turn.First, turn.Commits = cs[i].Hash, cs[i].Hash, i+1
	turn.Base = firstParent(cs[i])
	return turn, nil
}

// PendingTurn returns the branch's last turn when it is TurnUnanswered,
// and nil (with no error) when the branch ends in anything else: the
// check to make before committing a new user message.
func (t *Tract) PendingTurn(ctx context.Context) (*Turn, error) {
	turn, err := t.LastTurn(ctx)
	switch {
	case errors.Is(err, ErrNoTurn):
		return nil, nil
	case err != nil:
		return nil, err
	case turn.State != TurnUnanswered:
		return nil, nil
	}
	return turn, nil
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
	cfg, err := t.chatConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.system != "" {
		return nil, errors.New("retry last: a system prompt cannot be added: it would follow the user message it should precede")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A turn needs a branch to commit on: refuse a detached HEAD before
	// the move, not after it.
	if err := t.view(func(tx store.Tx) error { _, err := t.requireBranch(tx); return err }); err != nil {
		return nil, fmt.Errorf("retry last: %w", err)
	}
	turn, err := t.LastTurn(ctx)
	if err != nil {
		return nil, fmt.Errorf("retry last: nothing to retry: %w", err)
	}
	switch turn.State {
	case TurnAnswered:
		return nil, fmt.Errorf("retry last: nothing to retry: %w", noTurn("the branch's last message, %s, has its answer (%s)",
			turn.User.Short(), turn.Tip.Short()))
	case TurnNotSent:
		return nil, fmt.Errorf("retry last: nothing to retry: %w", noTurn("the branch ends in an error (%s) with no message of yours before it",
			turn.First.Short()))
	}
	if turn.Tip != turn.User {
		msg := fmt.Sprintf("retry-last: dropped %s after message %s to answer it again",
			english.Count(turn.Commits-1, "commit", "commits"), turn.User.Short())
		if _, err := t.Reset(ctx, turn.User.String(), Soft, ResetIf(turn.Tip), ResetReflog(ActionRetryLast, msg)); err != nil {
			return nil, fmt.Errorf("retry last: %w", err)
		}
	}
	res, err := t.generate(ctx, turn.User, cfg)
	if res != nil {
		res.User = turn.User
	}
	return res, err
}

// trailing is how many of cs (newest first) are errors and notes before
// the first commit of another kind.
func trailing(cs []*CommitInfo) int {
	for i, c := range cs {
		if c.Kind != KindError && c.Kind != KindNote {
			return i
		}
	}
	return len(cs)
}

// firstParent is c's first parent, zero for a root.
func firstParent(c *CommitInfo) Hash {
	if len(c.Parents) == 0 {
		return Hash{}
	}
	return c.Parents[0]
}
