package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
)

// Meta is the metadata of a commit of a validated turn, as written: each
// field under its key, left out when empty.
type Meta struct {
	Attempt        int             `json:"attempt,omitempty"`
	Valid          *bool           `json:"valid,omitempty"`
	Diagnosis      string          `json:"diagnosis,omitempty"`
	ValidatorError string          `json:"validator_error,omitempty"`
	Model          string          `json:"model,omitempty"`
	Usage          *llm.Usage      `json:"usage,omitempty"`
	Provenance     *Provenance     `json:"provenance,omitempty"`
	Error          string          `json:"error,omitempty"`
	Task           string          `json:"task,omitempty"`
	Failure        *Failure        `json:"failure,omitempty"`
	Escalation     *Escalation     `json:"escalation,omitempty"`
	DurationMS     int64           `json:"duration_ms,omitempty"`
	Provider       string          `json:"provider,omitempty"`
	Restore        *dag.Hash       `json:"restore,omitempty"`
	Validators     []string        `json:"validators,omitempty"`
	Structured     *Structured     `json:"structured_output,omitempty"`
	Shape          json.RawMessage `json:"shape,omitempty"`
	Fix            *Fix            `json:"fixed,omitempty"`
	ToolStep       *ToolStep       `json:"tool_step,omitempty"`
}

// TaskMeta is the metadata of a commit of a turn that records only its
// task id; nil without one.
func TaskMeta(task string) *Meta {
	if task == "" {
		return nil
	}
	return &Meta{Task: task}
}

// Field decodes the value under key of the metadata meta (a JSON object)
// into a T; ok is false when meta has no such key or its value is no T.
func Field[T any](meta []byte, key string) (v T, ok bool) {
	if len(meta) == 0 {
		return v, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return v, false
	}
	raw, ok := m[key]
	if !ok || json.Unmarshal(raw, &v) != nil {
		return v, false
	}
	return v, true
}

// Pinned reports metadata that pins its commit (KeyPinned is true).
func Pinned(meta []byte) bool {
	if len(meta) == 0 || !bytes.Contains(meta, []byte(`"`+KeyPinned+`"`)) {
		return false
	}
	v, _ := Field[bool](meta, KeyPinned)
	return v
}

// ErrorLine is a failure record's one-line summary of text: its first line
// that is not blank, cut to 200 characters.
func ErrorLine(text string) string {
	return english.FirstLine(strings.TrimSpace(text), 200)
}

// errShapeTwice refuses metadata that has a shape of its own for a
// message whose fields make one.
var errShapeTwice = fmt.Errorf("%w: the metadata has a %q key, and the message's fields (parts, tool calls, name, …) make one: give them once", dag.ErrInvalidMeta, KeyShape)

// WithShape returns the canonical metadata meta with shape added under
// KeyShape. Metadata that has a shape already is refused.
func WithShape(meta, shape []byte) ([]byte, error) {
	if len(meta) == 0 {
		return append(append([]byte(`{"`+KeyShape+`":`), shape...), '}'), nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(meta, &fields); err != nil {
		return nil, fmt.Errorf("%w: %v", dag.ErrInvalidMeta, err)
	}
	if _, ok := fields[KeyShape]; ok {
		return nil, errShapeTwice
	}
	fields[KeyShape] = shape
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return dag.CanonicalMeta(raw)
}

// Shape returns the shape in a commit's metadata, nil when it has none.
// (A map, not a struct: a struct field would also take a key "Shape",
// which is the caller's.)
func Shape(meta []byte) (json.RawMessage, error) {
	if !bytes.Contains(meta, []byte(`"`+KeyShape+`"`)) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(meta, &fields); err != nil {
		return nil, fmt.Errorf("%w: %v", dag.ErrInvalidMeta, err)
	}
	return fields[KeyShape], nil
}
