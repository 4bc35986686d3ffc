package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
)

// Message is one commit of a bulk import: an OpenAI
// message (see llm.Message for the fields it shares) with tract's kind and
// metadata. Its JSON is the message object with two more members, "kind"
// and "meta" (see ReadMessages).
type Message struct {
	// Kind defaults to dag.KindMessage.
	Kind dag.Kind
	Role dag.Role
	// Content is the text. It must be empty when Parts is set.
	Content string
	// Meta is optional metadata (a JSON object).
	Meta json.RawMessage
	// Parts, Name, ToolCalls, ToolCallID and Extra are the rest of the
	// message, as in llm.Message; a commit keeps them as its shape (see
	// "Message shapes" in docs/encoding.md), and Compile (package tract)
	// gives them back.
	Parts      []llm.Part
	Name       string
	ToolCalls  []llm.ToolCall
	ToolCallID string
	Extra      map[string]json.RawMessage
}

// CommitKind returns m's kind, dag.KindMessage when it has none.
func (m *Message) CommitKind() dag.Kind {
	if m.Kind == "" {
		return dag.KindMessage
	}
	return m.Kind
}

// message is m as an llm.Message.
func (m *Message) message() llm.Message {
	return llm.Message{Role: string(m.Role), Content: m.Content, Parts: m.Parts, Name: m.Name,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Extra: m.Extra}
}

// importOwn are the members of an import's message object that are
// tract's, not the message's.
var importOwn = [...]string{"kind", "meta"}

// UnmarshalJSON reads an OpenAI message object (as llm.Message reads it)
// with two more members: "kind" (a string) and "meta" (a JSON object);
// either may be null, as if left out.
func (m *Message) UnmarshalJSON(data []byte) error {
	if m.plain(data) {
		return nil
	}
	var msg llm.Message
	if err := json.Unmarshal(data, &msg); err != nil {
		return err
	}
	out := Message{Role: dag.Role(msg.Role), Content: msg.Content, Parts: msg.Parts, Name: msg.Name,
		ToolCalls: msg.ToolCalls, ToolCallID: msg.ToolCallID, Extra: msg.Extra}
	if raw, ok := out.Extra["kind"]; ok && string(raw) != "null" {
		var k string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &k) != nil {
			return &llm.FieldError{Field: "kind", Msg: "must be a string, not " + record.DescribeJSON(raw)}
		}
		out.Kind = dag.Kind(k)
	}
	if raw, ok := out.Extra["meta"]; ok && string(raw) != "null" {
		out.Meta = raw
	}
	for _, k := range importOwn {
		delete(out.Extra, k)
	}
	if len(out.Extra) == 0 {
		out.Extra = nil
	}
	*m = out
	return nil
}

// plainImport is an import's message that is a role and a text, with
// tract's kind and metadata: what almost every import holds.
type plainImport struct {
	Kind    *string         `json:"kind"`
	Role    *string         `json:"role"`
	Content *string         `json:"content"`
	Meta    json.RawMessage `json:"meta"`
}

// plain decodes data into m when it is a plainImport, without the
// member-by-member decoding a shape needs (which makes reading such lines
// half as fast); it reports false, leaving m alone, for anything else.
func (m *Message) plain(data []byte) bool {
	if !plainKeys(data) {
		return false
	}
	var p plainImport
	if json.Unmarshal(data, &p) != nil || p.Role == nil || p.Content == nil {
		return false
	}
	*m = Message{Role: dag.Role(*p.Role), Content: *p.Content}
	if p.Kind != nil {
		m.Kind = dag.Kind(*p.Kind)
	}
	if len(p.Meta) > 0 && string(p.Meta) != "null" {
		m.Meta = p.Meta
	}
	return true
}

// plainKeys reports whether data is an object whose members are all named
// exactly "role", "content", "kind" or "meta", each at most once (a
// struct would also take "ROLE", and keep the last of two "role"s). It
// reads the keys only, jumping over values, and checks no more syntax
// than that: json.Unmarshal does.
func plainKeys(data []byte) bool {
	var seen [4]bool
	i := 0
	skipSpace := func() {
		for i < len(data) && isJSONSpace(data[i]) {
			i++
		}
	}
	// endString returns the index after the string starting at data[i].
	endString := func(i int) int {
		for j := i + 1; j < len(data); {
			k := bytes.IndexAny(data[j:], `"\`)
			if k < 0 {
				return -1
			}
			if data[j+k] == '"' {
				return j + k + 1
			}
			j += k + 2 // an escape and the byte it escapes
		}
		return -1
	}
	skipSpace()
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for {
		skipSpace()
		if i >= len(data) || data[i] != '"' {
			return false // "}" at once: no role, not plain
		}
		end := endString(i)
		if end < 0 {
			return false
		}
		k := -1
		switch string(data[i:end]) { // no allocation: a switch compares in place
		case `"role"`:
			k = 0
		case `"content"`:
			k = 1
		case `"kind"`:
			k = 2
		case `"meta"`:
			k = 3
		}
		if k < 0 || seen[k] {
			return false
		}
		seen[k] = true
		i = end
		skipSpace()
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i++
		// Jump over the value, to the "," after it, or the object's end.
		depth := 0
	value:
		for ; i < len(data); i++ {
			switch c := data[i]; c {
			case '"':
				if end = endString(i); end < 0 {
					return false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					return c == '}'
				}
				depth--
			case ',':
				if depth == 0 {
					break value
				}
			}
		}
		if i >= len(data) {
			return false
		}
		i++ // the ","
	}
}

// MarshalJSON writes m as UnmarshalJSON reads it: the message object (in
// llm.Message's order), then "kind" when set and "meta" when set.
func (m Message) MarshalJSON() ([]byte, error) {
	for _, k := range importOwn {
		if _, ok := m.Extra[k]; ok {
			return nil, &llm.FieldError{Field: k, Msg: "is tract's and cannot be an extra member"}
		}
	}
	b, err := m.message().MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	if m.Kind != "" {
		k, _ := json.Marshal(string(m.Kind))
		b = append(append(b, `,"kind":`...), k...)
	}
	if len(m.Meta) > 0 {
		if !json.Valid(m.Meta) {
			return nil, &llm.FieldError{Field: "meta", Msg: "is not valid JSON"}
		}
		b = append(append(b, `,"meta":`...), m.Meta...)
	}
	return append(b, '}'), nil
}

// Stored returns what m's commit keeps: its readable text (the blob) and
// its shape (canonical JSON; nil for a message that is only a role and a
// text).
func (m *Message) Stored() (text string, shape []byte, err error) {
	if m.Parts == nil && len(m.ToolCalls) == 0 && m.Content == "" {
		return "", nil, errNoContent
	}
	if m.Parts == nil && m.Name == "" && len(m.ToolCalls) == 0 && m.ToolCallID == "" && len(m.Extra) == 0 {
		return m.Content, nil, nil // the common case, as before shapes
	}
	msg := m.message()
	raw, err := msg.MarshalJSON()
	if err == nil {
		// Only a message that reads back can be compiled back: check it
		// as an import's input is checked (a tool call needs an id, …).
		var check llm.Message
		err = json.Unmarshal(raw, &check)
	}
	if err != nil {
		return "", nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", nil, err
	}
	delete(fields, "role")
	if msg.Parts == nil && len(msg.ToolCalls) == 0 {
		delete(fields, "content") // the text is the content
	}
	raw, err = json.Marshal(fields)
	if err != nil {
		return "", nil, err
	}
	if shape, err = dag.CanonicalMeta(raw); err != nil {
		return "", nil, fmt.Errorf("message shape: %w", err)
	}
	return msg.Text(), shape, nil
}

// errNoContent refuses a message without content, which only an
// assistant's tool calls may be.
var errNoContent = fmt.Errorf("%w: the content is empty, null or missing (only an assistant message with tool_calls may have none)", dag.ErrInvalidText)

// Size is about how many bytes m's commit takes, for batching an import.
func (m *Message) Size() int {
	n := len(m.Content)
	for _, p := range m.Parts {
		n += len(p.Text)
		switch {
		case p.ImageURL != nil:
			n += len(p.ImageURL.URL)
		case p.InputAudio != nil:
			n += len(p.InputAudio.Data)
		case p.File != nil:
			n += len(p.File.FileData)
		}
	}
	for _, c := range m.ToolCalls {
		n += len(c.Function.Arguments)
	}
	return n
}

// CommitMessage returns the message of commit c, sent as role, whose
// text is text: from the shape in its metadata (record.Shape), or text as
// is when it has none.
func CommitMessage(c *dag.Commit, role dag.Role, text string) (llm.Message, error) {
	shape, err := record.Shape(c.Meta)
	if err != nil || shape == nil {
		return llm.Message{Role: string(role), Content: text}, err
	}
	return ShapedMessage(role, text, shape)
}

// ShapedMessage rebuilds the message of a commit of role whose text is
// text and whose shape is shape (the value of record.KeyShape).
func ShapedMessage(role dag.Role, text string, shape json.RawMessage) (llm.Message, error) {
	// Read as an import's message is, member names matched exactly: a
	// struct would take a kept member "Name" for "name".
	var m llm.Message
	if err := json.Unmarshal(shape, &m); err != nil {
		return llm.Message{}, fmt.Errorf("message shape: %w", err)
	}
	if m.Parts == nil && len(m.ToolCalls) == 0 {
		m.Content = text
	}
	m.Role = string(role)
	return m, nil
}
