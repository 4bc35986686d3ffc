package turn

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTaskIDLen is the most bytes a task id may hold.
const MaxTaskIDLen = 200

// TaskIDError reports a task id that Task refuses.
type TaskIDError struct {
	// ID is the id as given.
	ID string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns the TaskIDError message, which quotes the start of the id.
func (e *TaskIDError) Error() string {
	id := e.ID
	if len(id) > 40 {
		id = strings.ToValidUTF8(id[:40], "") + "…"
	}
	return fmt.Sprintf("task id %q %s", id, e.Reason)
}

// checkTaskID returns a *TaskIDError when id cannot be a task id.
func checkTaskID(id string) error {
	reason := ""
	switch {
	case id == "":
		reason = "is empty"
	case strings.TrimSpace(id) == "":
		reason = "is only white space"
	case !utf8.ValidString(id):
		reason = "is not valid UTF-8"
	case len(id) > MaxTaskIDLen:
		reason = fmt.Sprintf("is %d bytes, more than the maximum of %d", len(id), MaxTaskIDLen)
	case strings.ContainsAny(id, "\n\r"):
		reason = "is more than one line"
	case strings.ContainsFunc(id, unicode.IsControl):
		reason = "contains a control character"
	}
	if reason != "" {
		return &TaskIDError{ID: id, Reason: reason}
	}
	return nil
}
