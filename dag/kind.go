package dag

import (
	"fmt"
	"unicode/utf8"
)

// Kind says what a commit is for and whether Compile sends it to a model.
type Kind string

// The commit kinds.
const (
	// KindMessage is an ordinary conversation turn.
	KindMessage Kind = "message"
	// KindSteering is the correction committed after a failed validation.
	KindSteering Kind = "steering"
	// KindSummary is the result of compressing a range of history.
	KindSummary Kind = "summary"
	// KindNote records provenance or an annotation; not sent to the model by default.
	KindNote Kind = "note"
	// KindError records a failed interaction; never sent to the model.
	KindError Kind = "error"
)

// kinds are the defined kinds; a kind's position here is its code.
var kinds = [...]Kind{KindMessage, KindSteering, KindSummary, KindNote, KindError}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	_, ok := k.code()
	return ok
}

// code returns k's position among the defined kinds.
func (k Kind) code() (uint8, bool) {
	for i, d := range kinds {
		if d == k {
			return uint8(i), true
		}
	}
	return 0, false
}

// Compiled reports whether Compile sends commits of kind k to a model by
// default: messages, summaries and steering do; notes and errors do not.
func (k Kind) Compiled() bool {
	switch k {
	case KindMessage, KindSummary, KindSteering:
		return true
	}
	return false
}

// SentRole returns the role Compile sends a commit of kind k and role r
// to a model as: r for a message or a summary (and, with notes, a note),
// user for steering; ok is false for a commit it does not send.
func SentRole(k Kind, r Role, notes bool) (role Role, ok bool) {
	switch k {
	case KindMessage, KindSummary:
		return r, true
	case KindSteering:
		return RoleUser, true
	case KindNote:
		return r, notes
	}
	return "", false
}

// ParseKind returns the kind named s, or an error listing the valid kinds.
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); k.Valid() {
		return k, nil
	}
	return "", fmt.Errorf("%w %q: use one of message, steering, summary, note, error", ErrInvalidKind, s)
}

// Role is the speaker of a commit in the OpenAI chat sense.
type Role string

// The roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// roles are the defined roles; a role's position here is its code.
var roles = [...]Role{RoleSystem, RoleUser, RoleAssistant, RoleTool}

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool {
	_, ok := r.Code()
	return ok
}

// Code returns a one-byte code for r, for compact in-memory records
// (RoleFromCode reverses it); ok is false for a role that is not defined.
// Codes are not stored anywhere: they may change between versions.
func (r Role) Code() (c uint8, ok bool) {
	for i, d := range roles {
		if d == r {
			return uint8(i), true
		}
	}
	return 0, false
}

// RoleFromCode returns the role whose Code is c.
func RoleFromCode(c uint8) Role { return roles[c] }

// ParseRole returns the role named s, or an error listing the valid roles.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	return "", fmt.Errorf("%w %q: use one of system, user, assistant, tool", ErrInvalidRole, s)
}

// EstimateTokens estimates the tokens of text as one per four characters
// (Unicode code points, not bytes), rounded up: ceil(runes/4). That is the
// usual rule of thumb for English with OpenAI's tokenizers; code, numbers
// and most other languages take more tokens than it says. Counts made with
// it are estimates and should be labelled so.
func EstimateTokens(text []byte) int {
	return (utf8.RuneCount(text) + 3) / 4
}
