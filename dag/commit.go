package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/internal/jsonscan"
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
	if ms, ok := jsonscan.Members(raw); ok && len(ms) > 0 {
		if canon, ok := appendObject(make([]byte, 0, len(raw)), ms, 1); ok {
			return canon, nil
		}
	}
	return canonicalMetaSlow(raw)
}

// canonicalMetaSlow is CanonicalMeta through encoding/json: for what the
// one-pass path leaves (an empty object, nesting past maxCanonicalDepth,
// and every error, worded as encoding/json words it).
func canonicalMetaSlow(raw []byte) ([]byte, error) {
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

// maxCanonicalDepth is how deeply the one-pass canonical form reads
// nested objects and arrays (each level is read again by the one below
// it); deeper metadata takes encoding/json's path.
const maxCanonicalDepth = 16

// appendObject appends to b the canonical form of an object of members
// ms, as encoding/json writes the map it decodes them into: keys sorted,
// the last of a key winning, values canonical. ok is false when a value
// nests past maxCanonicalDepth.
func appendObject(b []byte, ms []jsonscan.Member, depth int) (_ []byte, ok bool) {
	slices.SortStableFunc(ms, func(a, b jsonscan.Member) int { return strings.Compare(a.Key, b.Key) })
	b = append(b, '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].Key == m.Key {
			continue // a later one wins
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, m.Key)
		b = append(b, ':')
		if b, ok = appendValue(b, m.Val, depth); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendValue appends to b the canonical form of v, a valid JSON value
// nested depth deep.
func appendValue(b, v []byte, depth int) (_ []byte, ok bool) {
	if (v[0] == '{' || v[0] == '[') && depth >= maxCanonicalDepth {
		return nil, false
	}
	switch v[0] {
	case '{':
		ms, ok := jsonscan.Members(v)
		if !ok {
			return nil, false
		}
		return appendObject(b, ms, depth+1)
	case '[':
		elems, ok := jsonscan.Elements(v)
		if !ok {
			return nil, false
		}
		b = append(b, '[')
		for i, e := range elems {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendValue(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return append(b, ']'), true
	case '"':
		if plainString(v) {
			return append(b, v...), true
		}
		s, ok := jsonscan.Unquote(v)
		if !ok {
			return nil, false
		}
		return appendString(b, s), true
	}
	return append(b, v...), true // a number as written (json.Number), true, false or null
}

// appendString appends s as encoding/json writes a string without HTML
// escaping.
func appendString(b []byte, s string) []byte {
	if plain(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	enc, err := marshalCanonical(s)
	if err != nil {
		panic(err) // a string always encodes
	}
	return append(b, enc...)
}

// plainString reports whether q, a JSON string literal, is written as
// encoding/json writes the string it holds (see plain).
func plainString(q []byte) bool { return plain(string(q[1 : len(q)-1])) }

// plain reports whether encoding/json writes s as it is, between quotes:
// no quote, backslash or control character, valid UTF-8, and neither
// U+2028 nor U+2029 (which it escapes).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' || c == '"' || c >= 0x80 {
			return !strings.ContainsAny(s, "\\\"\u2028\u2029") && !hasControl(s) && utf8.ValidString(s)
		}
	}
	return true
}

// hasControl reports whether s holds a byte below 0x20.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
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
