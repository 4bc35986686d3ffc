package ingest

import (
	"fmt"
	"math"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
)

// Default size limits (see Limits).
const (
	// DefaultMaxMessageSize is the most text one commit may hold: 16 MiB.
	DefaultMaxMessageSize int64 = 16 << 20
	// DefaultMaxMetaSize is the most metadata a caller may give one
	// commit: 1 MiB of JSON.
	DefaultMaxMetaSize int64 = 1 << 20
	// DefaultMaxInputSize is the most input ReadMessages reads: 4 GiB.
	DefaultMaxInputSize int64 = 4 << 30
)

// Limits bound the size of what enters a repository, so that one
// runaway input is refused with a *TooLargeError, before anything is
// written, instead of filling memory and the file. A field of 0 (or less)
// takes its default. Package tract takes them with
// WithLimits; ReadMessages and ReadConversations with ReadLimits.
type Limits struct {
	// MessageSize is the most text, in bytes, one commit may hold, however
	// it comes in: a commit, each message of an import, the user
	// message and every answer of a validated turn, and the summaries of
	// a compress. Default DefaultMaxMessageSize.
	MessageSize int64
	// MetaSize is the most metadata, in bytes of JSON, a caller may give
	// one commit (an imported message's "meta", say).
	// The metadata tract writes itself is not bound by it: a summary's
	// record lists every commit it replaces. Default DefaultMaxMetaSize.
	MetaSize int64
	// LineSize is the longest JSON value ReadMessages reads for one
	// message: a line of JSON lines input, or an element of a JSON array.
	// It defaults to 4 × MessageSize + MetaSize, so that a message at the
	// limit fits with its metadata even when its JSON escapes every
	// character: a \uXXXX escape takes at most three times the UTF-8 bytes
	// it stands for (only control characters, as \u0001, take more).
	LineSize int64
	// InputSize is the most bytes ReadMessages reads in all. Default
	// DefaultMaxInputSize.
	InputSize int64
}

// WithDefaults returns l with each unset field at its default.
func (l Limits) WithDefaults() Limits {
	if l.MessageSize <= 0 {
		l.MessageSize = DefaultMaxMessageSize
	}
	if l.MetaSize <= 0 {
		l.MetaSize = DefaultMaxMetaSize
	}
	if l.LineSize <= 0 {
		l.LineSize = math.MaxInt64 // a limit that large is none
		if l.MessageSize <= (math.MaxInt64-l.MetaSize)/4 {
			l.LineSize = 4*l.MessageSize + l.MetaSize
		}
	}
	if l.InputSize <= 0 {
		l.InputSize = DefaultMaxInputSize
	}
	return l
}

// Merge returns l with the fields set in o replacing its own.
func (l Limits) Merge(o Limits) Limits {
	for _, f := range []struct{ dst, src *int64 }{
		{&l.MessageSize, &o.MessageSize}, {&l.MetaSize, &o.MetaSize},
		{&l.LineSize, &o.LineSize}, {&l.InputSize, &o.InputSize},
	} {
		if *f.src > 0 {
			*f.dst = *f.src
		}
	}
	return l
}

// CheckText checks text against the rules of every commit's text: within
// the message size limit (what names it in the error), non-empty and
// valid UTF-8 (dag.ValidateText). The size comes first, so a huge text is
// refused without being read.
func (l Limits) CheckText(what, text string) error {
	if n := int64(len(text)); n > l.MessageSize {
		return &TooLargeError{What: what, Size: n, Limit: l.MessageSize, Which: LimitMessageSize}
	}
	return dag.ValidateText(text)
}

// CheckMeta checks caller-given metadata against the metadata size limit.
func (l Limits) CheckMeta(raw []byte) error {
	if n := int64(len(raw)); n > l.MetaSize {
		return &TooLargeError{What: "the metadata", Size: n, Limit: l.MetaSize, Which: LimitMetaSize}
	}
	return nil
}

// A SizeLimit names one of the size limits of Limits.
type SizeLimit string

// The size limits, each with the field of Limits that sets it.
const (
	LimitMessageSize SizeLimit = "message size"  // Limits.MessageSize
	LimitMetaSize    SizeLimit = "metadata size" // Limits.MetaSize
	LimitLineSize    SizeLimit = "line size"     // Limits.LineSize
	LimitInputSize   SizeLimit = "input size"    // Limits.InputSize
)

// TooLargeError is returned for input over one of the size limits (see
// Limits), before anything of it is written.
type TooLargeError struct {
	// What names what was too large: "the text", "the metadata", "the
	// line", "the array element", "the input", "standard input", "the
	// model's answer (attempt 2)", "the summary".
	What string
	// Size is its size in bytes. When More is set, reading stopped at the
	// limit: Size is what was read, and the whole is larger.
	Size int64
	More bool
	// Limit is the limit it broke, in bytes, and Which names it.
	Limit int64
	Which SizeLimit
}

// Error says what is too large, by how much, and which limit it is over.
func (e *TooLargeError) Error() string {
	size := english.Bytes(e.Size)
	switch {
	case e.More:
		size = "more than " + size
	case !isWholeUnit(e.Size):
		size = fmt.Sprintf("%s (%d bytes)", size, e.Size)
	}
	return fmt.Sprintf("%s is %s, over the %s limit (%s)", e.What, size, e.Which, english.Bytes(e.Limit))
}

// isWholeUnit reports whether english.Bytes says n exactly: n is under
// 1 KiB or a whole number of KiB, MiB, ….
func isWholeUnit(n int64) bool {
	for n >= 1024 && n%1024 == 0 {
		n /= 1024
	}
	return n < 1024
}

// CheckShape checks a message's shape against the message size limit: the
// shape holds the message's content when it is not the text, and a data:
// URL can be large.
func (l Limits) CheckShape(shape []byte) error {
	if n := int64(len(shape)); n > l.MessageSize {
		return &TooLargeError{What: "the message's content parts and tool calls", Size: n, Limit: l.MessageSize, Which: LimitMessageSize}
	}
	return nil
}

// CheckMessage checks a message read for an import against the size
// limits of its text and its shape.
func (l Limits) CheckMessage(m *Message) error {
	text, shape, err := m.Stored()
	if err != nil {
		return err
	}
	if err := l.CheckText("the text", text); err != nil {
		return err
	}
	return l.CheckShape(shape)
}

// CheckKindRole checks a commit's kind and role.
func CheckKindRole(kind dag.Kind, role dag.Role) error {
	if !kind.Valid() {
		return fmt.Errorf("%w %q: use one of message, steering, summary, note, error", dag.ErrInvalidKind, kind)
	}
	if !role.Valid() {
		return fmt.Errorf("%w %q: use one of system, user, assistant, tool", dag.ErrInvalidRole, role)
	}
	return nil
}
