package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
)

// StepKind is the part a commit plays in a validated turn.
type StepKind int

// The parts a commit plays in a validated turn.
const (
	StepAttempt      StepKind = iota + 1 // an answer, numbered from 1
	StepSteering                         // the steering after a failed attempt
	StepModelFailure                     // the error commit of a failed model call: a failed attempt too (with an abort answer, see StepEnd)
	StepAccepted                         // the clean copy purify committed on the restore point
	StepEnd                              // the error commit of a turn whose validation failed; it records the escalation's answer when that was abort
	StepResponse                         // the note that records the answer to an escalation
)

// Step is one commit of a validated turn, as written: what the turn's
// events are derived from.
type Step struct {
	// Hash is the commit, Parent its first parent (zero for a root).
	Hash, Parent dag.Hash
	// Kind is the part it plays in its turn.
	Kind StepKind
	// Time is the commit's time.
	Time time.Time
	// Meta is the commit's metadata.
	Meta record.Meta
	// Lines is the number of lines of a steering message's text.
	Lines int
	// content is the commit without its parents: the copy of it that a
	// compress replays onto a new chain has the same.
	content content
}

// content is what a commit holds besides its parents (its metadata by
// hash).
type content struct {
	kind       dag.Kind
	role       dag.Role
	blob, meta dag.Hash
	time       int64
}

// StepOf reads commit h (c) as a step of a validated turn; ok is false for
// any other commit. text reads the commit's text; it is called only for a
// steering message (to count its lines), so a caller can read the texts of
// the few commits that need it and no other.
func StepOf(h dag.Hash, c *dag.Commit, text func() (string, error)) (s *Step, ok bool, err error) {
	if !bytes.Contains(c.Meta, []byte(`"`+record.KeyAttempt+`"`)) && !bytes.Contains(c.Meta, []byte(`"`+record.KeyProvenance+`"`)) &&
		!bytes.Contains(c.Meta, []byte(`"`+record.KeyFailure+`"`)) && !bytes.Contains(c.Meta, []byte(`"`+record.KeyEscalation+`"`)) {
		return nil, false, nil
	}
	s = &Step{Hash: h, Time: c.Time}
	if json.Unmarshal(c.Meta, &s.Meta) != nil {
		return nil, false, nil
	}
	s.Parent = c.Parent()
	m := &s.Meta
	switch {
	case m.ToolStep != nil:
		return nil, false, nil // a tool step's call or result: no attempt (see turn.Tools)
	case c.Kind == dag.KindMessage && c.Role == dag.RoleAssistant && m.Attempt >= 1:
		s.Kind = StepAttempt
	case c.Kind == dag.KindMessage && c.Role == dag.RoleAssistant && m.Provenance != nil:
		s.Kind = StepAccepted
	case c.Kind == dag.KindSteering && m.Attempt >= 1:
		s.Kind = StepSteering
		t, err := text()
		if err != nil {
			return nil, false, fmt.Errorf("commit %s: %w", h.Short(), err)
		}
		s.Lines = strings.Count(strings.TrimRight(t, "\n"), "\n") + 1
	case c.Kind == dag.KindError && m.Failure != nil:
		s.Kind = StepModelFailure
	case c.Kind == dag.KindError && m.Provenance != nil:
		s.Kind = StepEnd
	case c.Kind == dag.KindNote && m.Escalation != nil:
		s.Kind = StepResponse
	default:
		return nil, false, nil // a provenance note, or someone else's metadata
	}
	s.content = content{kind: c.Kind, role: c.Role, blob: c.Blob, time: c.Time.UnixNano(), meta: dag.Sum(c.Meta)}
	return s, true, nil
}

// firstAttempt reports a step that starts a turn.
func (s *Step) firstAttempt() bool {
	return s.Kind == StepAttempt && s.Meta.Attempt == 1 ||
		s.Kind == StepModelFailure && s.Meta.Failure.Attempt == 1
}

// seq orders the steps of a turn written at the same instant (an
// import): the attempts and their steering in turn, then what ends it.
func (s *Step) seq() int {
	switch s.Kind {
	case StepAttempt:
		return 2 * s.Meta.Attempt
	case StepSteering:
		return 2*s.Meta.Attempt + 1
	case StepModelFailure:
		return 2 * s.Meta.Failure.Attempt
	}
	return 1 << 30
}
