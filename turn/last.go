package turn

import (
	"errors"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
)

// State is the shape of a branch's last turn.
type State int

// The shapes of a last turn.
const (
	// Answered is a user message and the assistant's answer (after
	// the tool steps it rests on, if any).
	Answered State = iota + 1
	// Unanswered is a user message followed only by the error
	// commits of its failed turn (exhausted validation, a failed model
	// call), or by nothing at all (an interrupted turn, or a message
	// committed without an answer), the tool steps of a turn that ended
	// amid its tool loop without purify aside. A new user message would
	// follow it directly, so the model would see two user messages in a
	// row.
	Unanswered
	// NotSent is an error commit with no user message under it: a
	// failure before anything was sent (no model configured).
	NotSent
)

// String names the state as the CLI and the REPL print it.
func (s State) String() string {
	switch s {
	case Answered:
		return "message and answer"
	case Unanswered:
		return "unanswered message"
	case NotSent:
		return "error"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Last is the last turn of a branch (package tract's Turn, read by
// LastTurn): its commits from the first (the
// user message, or the error of a NotSent) to the tip. Notes after
// them (a provenance note, the note of a skipped task) belong to the turn.
type Last struct {
	// State is the turn's shape.
	State State
	// User is the turn's user message (zero for NotSent).
	User dag.Hash
	// First is the turn's first commit: User, or the earliest error of a
	// NotSent.
	First dag.Hash
	// Tip is the branch tip, the turn's last commit.
	Tip dag.Hash
	// Base is the commit before First (zero: the turn starts at a root).
	Base dag.Hash
	// Commits is how many commits the turn has, First and Tip included:
	// a soft reset to Base (HEAD~Commits) takes the turn off the branch.
	Commits int
	// Errors is how many of them are error commits.
	Errors int
}

// ErrNoTurn is matched (errors.Is) by the error of ReadLast when the
// branch does not end in a turn; the error's message says what the
// branch ends in.
var ErrNoTurn = errors.New("the branch does not end in a turn")

// noTurnError is an error that matches ErrNoTurn and says only what the
// branch ends in: "the branch does not end in a turn" would say it twice.
type noTurnError struct{ msg string }

func (e *noTurnError) Error() string        { return e.msg }
func (e *noTurnError) Is(target error) bool { return target == ErrNoTurn }

// NoTurn returns an error that matches ErrNoTurn with the message
// format and args say (what the branch ends in).
func NoTurn(format string, args ...any) error {
	return &noTurnError{fmt.Sprintf(format, args...)}
}

// LastCommit is what ReadLast needs of one of a branch's commits.
type LastCommit struct {
	Hash dag.Hash
	// Parent is the commit's first parent, zero for a root.
	Parent dag.Hash
	Kind   dag.Kind
	Role   dag.Role
	// ToolStep says the commit is one of a turn's tool steps (it
	// records record.KeyToolStep).
	ToolStep bool
}

// lastScan is how many commits ReadLast reads in its first look: a
// turn's commits after its message are an error and a few notes at most.
const lastScan = 8

// ReadLast reads a branch's last turn from its commits, newest first,
// as log returns them: the first limit of them (all when fewer). It
// reads the turn's commits and two more, not the branch: limit starts
// small and grows until the commits read reach past the turn. A branch
// that ends otherwise (an assistant message with no user message before
// it, a lone note, a system prompt) or has no commits gives an error
// wrapping ErrNoTurn that says what the tip is.
func ReadLast(log func(limit int) ([]LastCommit, error)) (*Last, error) {
	var cs []LastCommit
	for limit := lastScan; ; limit *= 4 {
		var err error
		if cs, err = log(limit); err != nil {
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
		return nil, NoTurn("the branch has no commits yet")
	}
	last := &Last{Tip: cs[0].Hash}
	i := 0
	for i < len(cs) && (cs[i].Kind == dag.KindError || cs[i].Kind == dag.KindNote) {
		if cs[i].Kind == dag.KindError {
			last.Errors++
		}
		i++
	}
	i = skipToolSteps(cs, i) // a turn stopped amid its tool loop, without purify
	isUser := func(i int) bool {
		return i < len(cs) && cs[i].Kind == dag.KindMessage && cs[i].Role == dag.RoleUser
	}
	switch {
	case isUser(i):
		last.State = Unanswered
	case last.Errors > 0:
		// A failure before the send: the turn is the errors (and the
		// notes above them), down to the earliest of the run.
		for i > 0 && cs[i-1].Kind != dag.KindError {
			i--
		}
		last.State, last.First, last.Commits = NotSent, cs[i-1].Hash, i
		last.Base = cs[i-1].Parent
		return last, nil
	case i < len(cs) && cs[i].Kind == dag.KindMessage && cs[i].Role == dag.RoleAssistant && isUser(skipToolSteps(cs, i+1)):
		i = skipToolSteps(cs, i+1)
		last.State = Answered
	default:
		return nil, NoTurn("the branch ends in %s (%s), not in a user message, its answer or an error",
			english.A(string(cs[0].Role)+" "+string(cs[0].Kind)), cs[0].Hash.Short())
	}
	last.User, last.First, last.Commits = cs[i].Hash, cs[i].Hash, i+1
	last.Base = cs[i].Parent
	return last, nil
}

// trailing is how many of cs (newest first) are errors and notes before
// the first commit of another kind.
func trailing(cs []LastCommit) int {
	for i, c := range cs {
		if c.Kind != dag.KindError && c.Kind != dag.KindNote {
			return i
		}
	}
	return len(cs)
}

// skipToolSteps is the index of the first of cs (newest first) from i on
// that is no commit of a turn's tool step (see Tools).
func skipToolSteps(cs []LastCommit, i int) int {
	for i < len(cs) && cs[i].ToolStep {
		i++
	}
	return i
}
