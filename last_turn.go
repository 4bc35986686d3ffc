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
var ErrNoTurn = errors.New("the branch does not end in a turn")

// noTurnError is an error that matches ErrNoTurn and says only what the
// branch ends in: "the branch does not end in a turn" would say it twice.
type noTurnError struct{ msg string }

func (e *noTurnError) Error() string        { return e.msg }
func (e *noTurnError) Is(target error) bool { return target == ErrNoTurn }

func noTurn(format string, args ...any) error { return &noTurnError{fmt.Sprintf(format, args...)} }

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
		if len(cs) < limit || skipToolSteps(cs, min(trailing(cs)+1, len(cs)))+1 <= len(cs) {
			break
		}
	}
	if len(cs) == 0 {
		return nil, noTurn("the branch has no commits yet")
	}
	last := &Turn{Tip: cs[0].Hash}
	i := 0
	for i < len(cs) && (cs[i].Kind == KindError || cs[i].Kind == KindNote) {
		if cs[i].Kind == KindError {
			last.Errors++
		}
		i++
	}
	i = skipToolSteps(cs, i) // a turn stopped amid its tool loop, without purify
	isUser := func(i int) bool {
		return i < len(cs) && cs[i].Kind == KindMessage && cs[i].Role == RoleUser
	}
	switch {
	case isUser(i):
		last.State = TurnUnanswered
	case last.Errors > 0:
		// A failure before the send: the turn is the errors (and the
		// notes above them), down to the earliest of the run.
		for i > 0 && cs[i-1].Kind != KindError {
			i--
		}
		last.State, last.First, last.Commits = TurnNotSent, cs[i-1].Hash, i
		last.Base = firstParent(cs[i-1])
		return last, nil
	case i < len(cs) && cs[i].Kind == KindMessage && cs[i].Role == RoleAssistant && isUser(skipToolSteps(cs, i+1)):
		i = skipToolSteps(cs, i+1)
		last.State = TurnAnswered
	default:
		return nil, noTurn("the branch ends in %s (%s), not in a user message, its answer or an error",
			english.A(string(cs[0].Role)+" "+string(cs[0].Kind)), cs[0].Hash.Short())
	}
	last.User, last.First, last.Commits = cs[i].Hash, cs[i].Hash, i+1
	last.Base = firstParent(cs[i])
	return last, nil
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
		return nil, fmt.Errorf("retry last: nothing to retry: %w", noTurn("the branch's last message, %s, has its answer (%s)",
			last.User.Short(), last.Tip.Short()))
	case TurnNotSent:
		return nil, fmt.Errorf("retry last: nothing to retry: %w", noTurn("the branch ends in an error (%s) with no message of yours before it",
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

// skipToolSteps is the index of the first of cs (newest first) from i on
// that is no commit of a turn's tool step (see turn.Tools).
func skipToolSteps(cs []*CommitInfo, i int) int {
	for i < len(cs) && cs[i].MetaValue(record.KeyToolStep) != nil {
		i++
	}
	return i
}

// firstParent is c's first parent, zero for a root.
func firstParent(c *CommitInfo) Hash {
	if len(c.Parents) == 0 {
		return Hash{}
	}
	return c.Parents[0]
}
