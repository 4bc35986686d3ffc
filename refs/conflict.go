package refs

import (
	"fmt"

	"github.com/tractdag/tract/dag"
)

// ConflictError is returned when the branch (or detached HEAD) an operation
// works on moved while it ran: another process, goroutine or view committed
// or reset it first. The move did not happen. What the operation had made
// by then is not lost: the commits before the conflict are where they were
// written, and the result that could not be put on the branch was stored
// anyway and recorded in the reflog named Stranded, so a listing of every
// commit shows it (action "conflict") and GC keeps it for the usual expiry.
//
// errors.Is(err, ErrReferenceChanged) holds for it.
type ConflictError struct {
	// Ref is the full name of the ref that moved ("refs/heads/main", or
	// "HEAD" when detached).
	Ref string
	// Expected is where the operation expected the ref; Actual is where it
	// found it.
	Expected, Actual dag.Hash
	// Kept is the commit that was stored off the branch (the answer of a
	// chat turn, a compressed chain's tip); zero when nothing was.
	Kept dag.Hash
	// What names what Kept is: "answer", "accepted answer", "summary"….
	What string
}

// Error returns the ConflictError message.
func (e *ConflictError) Error() string {
	name := e.Ref
	if b, ok := BranchName(e.Ref); ok {
		name = "branch " + b
	}
	msg := fmt.Sprintf("%s moved from %s to %s while the operation ran (another writer got there first)", name, shortOrNone(e.Expected), shortOrNone(e.Actual))
	if e.Kept.IsZero() {
		return msg + "; nothing was written"
	}
	return fmt.Sprintf("%s; the %s was kept off the branch as commit %s", msg, e.What, e.Kept.Short())
}

// Is makes errors.Is(err, ErrReferenceChanged) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrReferenceChanged }

// shortOrNone is h's short form, "(none)" for a zero hash.
func shortOrNone(h dag.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.Short()
}
