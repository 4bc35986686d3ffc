package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Commit is an immutable node of the conversation DAG. Its hash is the
// BLAKE3-256 of its canonical encoding (see Encode), so every field below is
// part of its identity. The text lives in the blob named by Blob.
type Commit struct {
	// Parents are the parent commits in order; the first is the first parent
	// that Log and Compile follow. A root commit has none.
	Parents []Hash
	// Kind says what the commit is for.
	Kind Kind
	// Role is the speaker.
	Role Role
	// Blob is the hash of the commit's text.
	Blob Hash
	// Meta is the metadata as canonical JSON (an object with sorted keys and
	// no insignificant white space), or nil when there is none.
	Meta []byte
	// Time is when the commit was made; it is stored in UTC with nanoseconds.
	Time time.Time
}

// Parent returns the first parent, or the zero hash for a root commit.
func (c *Commit) Parent() Hash {
	if len(c.Parents) == 0 {
		return Hash{}
	}
	return c.Parents[0]
}

// MetaMap decodes the metadata into a map (nil when there is none). Numbers
// are json.Number so they round-trip exactly.
func (c *Commit) MetaMap() (map[string]any, error) {
	if len(c.Meta) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(c.Meta))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	return m, nil
}

// Sentinel errors of package dag.
var (
	// ErrInvalidMeta is returned for metadata that is not a JSON object.
	ErrInvalidMeta = errors.New("metadata must be a JSON object")
	// ErrInvalidText is returned for text that is empty or not valid UTF-8.
	ErrInvalidText = errors.New("invalid text")
	// ErrInvalidKind is returned for a kind that is not one of the defined kinds.
	ErrInvalidKind = errors.New("invalid kind")
	// ErrInvalidRole is returned for a role that is not one of the defined roles.
	ErrInvalidRole = errors.New("invalid role")
	// ErrBadEncoding is returned when bytes are not a canonical commit encoding.
	ErrBadEncoding = errors.New("not a canonical commit encoding")
)

// CanonicalMeta validates raw metadata and returns its canonical form: a JSON
// object re-encoded with sorted keys, no insignificant white space and no HTML
// escaping. Empty input and "{}" give nil. Anything but a single JSON object
// is ErrInvalidMeta.
func CanonicalMeta(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if i := InvalidJSONText(raw); i >= 0 {
		if raw[i] == '\\' {
			// Valid UTF-8 that decodes to what is not a character: said
			// as import says it.
			return nil, fmt.Errorf("%w: the escape %s is half of a UTF-16 surrogate pair, not a character, at byte %d", ErrInvalidMeta, raw[i:i+6], i)
		}
		return nil, fmt.Errorf("%w: not valid UTF-8 at byte %d", ErrInvalidMeta, i)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMeta, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrInvalidMeta)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w, got %s", ErrInvalidMeta, jsonTypeName(v))
	}
	if len(m) == 0 {
		return nil, nil
	}
	return marshalCanonical(m)
}

// MetaFromMap returns the canonical metadata of m (nil for an empty map).
func MetaFromMap(m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMeta, err)
	}
	return CanonicalMeta(raw)
}

func marshalCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMeta, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// Header is c's header: what a walk of first parents needs of it.
func (c *Commit) Header() Header {
	return Header{Parent: c.Parent(), Kind: c.Kind, Role: c.Role, Blob: c.Blob, Shaped: MayHoldShape(c.Meta)}
}
