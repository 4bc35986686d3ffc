package tract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
)

// This file holds the message shapes: how an ImportMessage that is more
// than a role and a text (content parts, tool calls, a tool call id, a
// name, members tract has no field for) is kept in its commit, and how
// Compile gives it back. The storage is documented in the dag package
// ("Message shapes").

// message is m as an llm.Message.
func (m *ImportMessage) message() llm.Message {
	return llm.Message{Role: string(m.Role), Content: m.Content, Parts: m.Parts, Name: m.Name,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Extra: m.Extra}
}

// importOwn are the members of an import's message object that are
// tract's, not the message's.
var importOwn = [...]string{"kind", "meta"}

// UnmarshalJSON reads an OpenAI message object (as llm.Message reads it)
// with two more members: "kind" (a string) and "meta" (a JSON object);
// either may be null, as if left out.
func (m *ImportMessage) UnmarshalJSON(data []byte) error {
	if m.plain(data) {
		return nil
	}
	var msg llm.Message
	if err := json.Unmarshal(data, &msg); err != nil {
		return err
	}
	out := ImportMessage{Role: Role(msg.Role), Content: msg.Content, Parts: msg.Parts, Name: msg.Name,
		ToolCalls: msg.ToolCalls, ToolCallID: msg.ToolCallID, Extra: msg.Extra}
	if raw, ok := out.Extra["kind"]; ok && string(raw) != "null" {
		var k string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &k) != nil {
			return &llm.FieldError{Field: "kind", Msg: "must be a string, not " + record.DescribeJSON(raw)}
		}
		out.Kind = Kind(k)
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
func (m *ImportMessage) plain(data []byte) bool {
	if !plainKeys(data) {
		return false
	}
	var p plainImport
	if json.Unmarshal(data, &p) != nil || p.Role == nil || p.Content == nil {
		return false
	}
	*m = ImportMessage{Role: Role(*p.Role), Content: *p.Content}
	if p.Kind != nil {
		m.Kind = Kind(*p.Kind)
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
func (m ImportMessage) MarshalJSON() ([]byte, error) {
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

// stored returns what m's commit keeps: its readable text (the blob) and
// its shape (canonical JSON; nil for a message that is only a role and a
// text).
func (m *ImportMessage) stored() (text string, shape []byte, err error) {
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
var errNoContent = fmt.Errorf("%w: the content is empty, null or missing (only an assistant message with tool_calls may have none)", ErrInvalidText)

// size is about how many bytes m's commit takes, for batching an import.
func (m *ImportMessage) size() int {
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

// checkShape checks a message's shape against the message size limit: the
// shape holds the message's content when it is not the text, and a data:
// URL can be large.
func (l Limits) checkShape(shape []byte) error {
	if n := int64(len(shape)); n > l.MessageSize {
		return &TooLargeError{What: "the message's content parts and tool calls", Size: n, Limit: l.MessageSize, Which: LimitMessageSize}
	}
	return nil
}

// shapedMessage rebuilds the message of a commit of role whose text is
// text and whose shape is shape (the value of MetaShape).
func shapedMessage(role Role, text string, shape json.RawMessage) (Message, error) {
	// Read as an import's message is, member names matched exactly: a
	// struct would take a kept member "Name" for "name".
	var m Message
	if err := json.Unmarshal(shape, &m); err != nil {
		return Message{}, fmt.Errorf("message shape: %w", err)
	}
	if m.Parts == nil && len(m.ToolCalls) == 0 {
		m.Content = text
	}
	m.Role = string(role)
	return m, nil
}

// checkMessage checks a message read for an import against the size
// limits of its text and its shape.
func (l Limits) checkMessage(m *ImportMessage) error {
	text, shape, err := m.stored()
	if err != nil {
		return err
	}
	if err := l.checkText("the text", text); err != nil {
		return err
	}
	return l.checkShape(shape)
}

// answerOf is a model's answer as a turn keeps it: its text, and with tool
// calls, its readable text and the shape that keeps the calls.
func answerOf(resp *llm.Response) (answer, error) {
	a := answer{text: resp.Content, model: resp.Model, usage: resp.Usage}
	if len(resp.ToolCalls) == 0 {
		return a, nil
	}
	m := ImportMessage{Role: RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
	// A server that sends a call without an id or name is refused here,
	// as a failed model call, not when the answer is committed.
	text, shape, err := m.stored()
	if err != nil {
		return answer{}, fmt.Errorf("the answer's tool calls cannot be kept: %w", err)
	}
	a.text, a.calls, a.shape = text, resp.ToolCalls, shape
	return a, nil
}

// Message returns the commit as an OpenAI message: its role, and its text
// as the content, or, for a commit with a shape (see MetaShape), the
// message the shape keeps. Unlike Compile it keeps the commit's own role
// (a steering commit is role user either way).
func (c *CommitInfo) Message() (Message, error) {
	shape, err := record.Shape(c.Meta)
	if err != nil || shape == nil {
		return Message{Role: string(c.Role), Content: c.Text}, err
	}
	return shapedMessage(c.Role, c.Text, shape)
}

// cloneMessage copies m with its parts, tool calls and other members, so
// that changing the copy changes nothing of m.
func cloneMessage(m Message) Message {
	if m.Parts != nil {
		m.Parts = slices.Clone(m.Parts)
		for j := range m.Parts {
			p := &m.Parts[j]
			if p.ImageURL != nil {
				u := *p.ImageURL
				p.ImageURL = &u
			}
			if p.InputAudio != nil {
				a := *p.InputAudio
				p.InputAudio = &a
			}
			if p.File != nil {
				f := *p.File
				p.File = &f
			}
		}
	}
	m.ToolCalls = slices.Clone(m.ToolCalls)
	if m.Extra != nil {
		extra := make(map[string]json.RawMessage, len(m.Extra))
		for k, v := range m.Extra {
			extra[k] = slices.Clone(v)
		}
		m.Extra = extra
	}
	return m
}
