package turn

import (
	"fmt"

	"github.com/tractdag/tract/dag"
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
