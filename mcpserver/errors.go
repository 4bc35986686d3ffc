package mcpserver

import (
	"errors"
	"fmt"

	"github.com/tractdag/tract"
)

// explain returns err with what the caller can do about it, in the
// terms of this server's tools: the text of the tool's error result.
func explain(err error) error {
	if advice := adviceFor(err); advice != "" {
		return &toolError{err: err, advice: advice}
	}
	return err
}

// toolError is a tool's error with advice.
type toolError struct {
	err    error
	advice string
}

func (e *toolError) Error() string { return e.err.Error() + ". " + e.advice }
func (e *toolError) Unwrap() error { return e.err }

// adviceFor says what to do about err ("" when there is nothing to say).
func adviceFor(err error) string {
	if c, ok := errorsAs[*tract.ConflictError](err); ok {
		return fmt.Sprintf("Nothing was written. Read the branch again (log or status: its tip is now %s), "+
			"then call again with expect set to that tip if you still want to.", shortOrNone(c.Actual))
	}
	if _, ok := errorsAs[*tract.AnsweredError](err); ok {
		return "One answer wins: the first one given. escalations lists those that still wait."
	}
	if _, ok := errorsAs[*tract.EscalationTakenUpError](err); ok {
		return "log shows how the turn went on; escalations lists those that still wait."
	}
	if _, ok := errorsAs[*tract.AmbiguousError](err); ok {
		return "Give more hex digits of the hash."
	}
	if _, ok := errorsAs[*tract.LockedError](err); ok {
		return "Another program holds the repository's lock: call again in a moment."
	}
	if _, ok := errorsAs[*InputError](err); ok {
		return "Fix the argument and call again."
	}
	switch {
	case errors.Is(err, tract.ErrUnbornBranch):
		return "The branch has no commits yet."
	case errors.Is(err, tract.ErrEscalationNotFound), errors.Is(err, tract.ErrBadEscalationID):
		return "escalations lists the escalations that wait, with their ids."
	case errors.Is(err, tract.ErrUnknownRevision), errors.Is(err, tract.ErrBadRevision):
		return "A revision is a hash (4 or more hex digits), a branch, HEAD or ORIG_HEAD, with ~N or ^ after it: " +
			"log and branches show what there is."
	case errors.Is(err, tract.ErrBranchExists):
		return "Choose another name (branches lists those taken)."
	case errors.Is(err, tract.ErrBranchNotFound):
		return "branches lists the branches; branch creates one."
	case errors.Is(err, tract.ErrDetachedHead):
		return "HEAD is detached: name a branch (branches lists them), or create one with branch."
	case errors.Is(err, tract.ErrReadOnly):
		return "This server opened the repository read-only: it only reads."
	}
	return ""
}

// shortOrNone is h's short form, "(none)" for a zero hash.
func shortOrNone(h tract.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.Short()
}

// errorsAs is errors.As, for the table of explain.
func errorsAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}
