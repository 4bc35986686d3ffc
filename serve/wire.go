package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/internal/jsonscan"
	"github.com/tractdag/tract/llm"
)

// A wire is one of the two protocols the proxy speaks.
type wire int

const (
	wireOpenAI wire = iota
	wireAnthropic
)

// provider names the wire as record.Meta's provider does.
func (w wire) provider() string {
	if w == wireAnthropic {
		return llm.ProviderAnthropic
	}
	return llm.ProviderOpenAI
}

// request is what the proxy reads of a request's body: the rest goes to
// the upstream as it came.
type request struct {
	Model  string
	Stream bool
	// Tools is whether the request offers tools; Temperature and
	// MaxTokens are its sampling temperature and max_tokens (or
	// max_completion_tokens), when it sets them: what a validated turn
	// sends on (see validated).
	Tools       bool
	Temperature *float64
	MaxTokens   int
	// IncludeUsage is an OpenAI stream's stream_options.include_usage:
	// the client asks for a last chunk with the usage.
	IncludeUsage bool
	// elems are the conversation's members as the client sent them,
	// decoded only when they must be (see Handler.conversation).
	elems []element
}

// elementKind says how an element is decoded.
type elementKind byte

const (
	elemOpenAI          elementKind = iota + 1 // an OpenAI message
	elemAnthropic                              // an Anthropic message
	elemAnthropicSystem                        // Anthropic's top-level system
)

// element is one member of a request's conversation as the client sent
// it (an OpenAI message, an Anthropic message or system prompt), which
// stands for zero or more recorded messages: an empty OpenAI message for
// none, an Anthropic message with tool results for one per result and
// one for the rest.
type element struct {
	kind elementKind
	// pos is the element's index in the request's "messages" (-1: the
	// system prompt), for errors.
	pos int
	raw json.RawMessage
	// msgs are the messages it stands for, once decoded is set.
	msgs    []tract.ImportMessage
	decoded bool
	// first is the index of its first message among the request's, n
	// how many it stands for.
	first, n int
}

// decode returns the messages e stands for, as they are recorded (see
// convert), decoding them once.
func (e *element) decode() ([]tract.ImportMessage, error) {
	if e.decoded {
		return e.msgs, nil
	}
	var msgs []tract.ImportMessage
	var err error
	switch e.kind {
	case elemOpenAI:
		msgs, err = openAIMessage(e.raw)
	case elemAnthropic:
		msgs, err = anthropicMessage(e.raw)
	case elemAnthropicSystem:
		var text string
		if text, err = blocksText(e.raw); err != nil {
			return nil, badRequest("system: %v", err)
		}
		if text != "" {
			msgs = []tract.ImportMessage{{Role: tract.RoleSystem, Content: text}}
		}
	}
	if err != nil {
		return nil, badRequest("messages[%d]: %v", e.pos, err)
	}
	e.msgs, e.decoded = msgs, true
	return msgs, nil
}

// messages returns the request's messages from the from-th on, as they
// are recorded; Handler.conversation has run.
func (r *request) messages(from int) ([]tract.ImportMessage, error) {
	var out []tract.ImportMessage
	for i := range r.elems {
		e := &r.elems[i]
		if e.first+e.n <= from {
			continue
		}
		msgs, err := e.decode()
		if err != nil {
			return nil, err
		}
		if from > e.first {
			msgs = msgs[from-e.first:]
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// badRequestError is a request body the proxy cannot read.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &badRequestError{fmt.Sprintf(format, args...)}
}

// rawValue is a JSON value kept as its bytes: a slice of the document it
// was read from, not a copy (the document, a request's body, is not
// reused while the request is served).
type rawValue []byte

func (v *rawValue) UnmarshalJSON(data []byte) error {
	*v = data
	return nil
}

// rawMessages is a request's "messages", kept as its elements' bytes,
// slices of the document they were read from (see rawValue): they are
// split without being copied, and decoded only when they must be.
type rawMessages []json.RawMessage

// UnmarshalJSON splits data, a valid JSON value (encoding/json calls
// UnmarshalJSON with nothing else, and jsonscan.Members checks what it
// returns), into the array's elements; null is no array.
func (a *rawMessages) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*a = nil
		return nil
	case len(data) == 0 || data[0] != '[':
		return fmt.Errorf("messages: want an array, not %s", jsonerr.Kind(data))
	}
	*a = splitArray(data)
	return nil
}

// hasTools reports whether a request's "tools" offers any.
func hasTools(tools rawValue) bool {
	t := bytes.TrimSpace(tools)
	if len(t) > 0 && t[0] == '[' {
		t = bytes.TrimSpace(t[1:]) // an empty array: "]" is left
	}
	return len(t) > 0 && string(t) != "null" && string(t) != "]"
}

// splitArray returns the elements of data, a valid JSON array, without
// the white space around them.
func splitArray(data []byte) []json.RawMessage {
	var out []json.RawMessage
	start, depth, inString, escaped := -1, 0, false, false
	for i := 1; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the array's end
				if start >= 0 {
					out = append(out, trimSpace(data[start:i]))
				}
				return out
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, trimSpace(data[start:i]))
				start = -1
				continue
			}
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// trimSpace returns b without JSON's white space at its end (an element
// of splitArray starts at its first byte).
func trimSpace(b []byte) json.RawMessage {
	return bytes.TrimRight(b, " \t\n\r")
}

// parseOpenAI reads a chat-completions request body; its messages are
// decoded later, when they must be (see Handler.conversation).
func parseOpenAI(body []byte) (*request, error) {
	ms, err := requestMembers(body, "a chat-completions request")
	if err != nil {
		return nil, err
	}
	var p parsed
	var maxCompletionTokens int
	var streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	for _, m := range ms {
		shared, err := p.shared(m)
		switch {
		case shared:
		case is(m, "max_completion_tokens"):
			err = decodeMember(m, &maxCompletionTokens)
		case is(m, "stream_options"):
			err = decodeMember(m, &streamOptions)
		}
		if err != nil {
			return nil, badRequest("the request body is not a chat-completions request: %v", err)
		}
	}
	if len(p.msgs) == 0 {
		return nil, badRequest("the request has no messages")
	}
	req := &p.req
	req.Tools, req.MaxTokens, req.IncludeUsage = hasTools(p.tools), max(req.MaxTokens, maxCompletionTokens), streamOptions.IncludeUsage
	req.elems = make([]element, len(p.msgs))
	for i, raw := range p.msgs {
		req.elems[i] = element{kind: elemOpenAI, pos: i, raw: raw}
	}
	return req, nil
}

// parsed is what the members of a request's body both wires have give.
type parsed struct {
	req   request
	msgs  rawMessages
	tools rawValue
}

// shared reads m into p when it is a member both wires have (model,
// stream, messages, tools, temperature, max_tokens), and reports whether
// it is.
func (p *parsed) shared(m member) (bool, error) {
	var err error
	switch {
	case is(m, "model"):
		err = decodeMember(m, &p.req.Model)
	case is(m, "stream"):
		err = decodeMember(m, &p.req.Stream)
	case is(m, "messages"):
		p.msgs, err = messagesOf(m)
	case is(m, "tools"):
		p.tools = m.Val
	case is(m, "temperature"):
		err = decodeMember(m, &p.req.Temperature)
	case is(m, "max_tokens"):
		err = decodeMember(m, &p.req.MaxTokens)
	default:
		return false, nil
	}
	return true, err
}

// member is a member of a request's body (see jsonscan.Members).
type member = jsonscan.Member

// requestMembers returns the members of body, a request's JSON object
// (see jsonscan.Members), or a bad request naming what body is not (what, "a
// chat-completions request").
func requestMembers(body []byte, what string) ([]member, error) {
	ms, ok := jsonscan.Members(body)
	if ok {
		return ms, nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, badRequest("the request body is not %s: %v", what, err)
	}
	return nil, badRequest("the request body is not %s: want a JSON object, not %s", what, jsonerr.Kind(bytes.TrimSpace(body)))
}

// is reports whether m is the member of that name, as encoding/json
// matches a key to a struct's field: case aside.
func is(m member, name string) bool { return strings.EqualFold(m.Key, name) }

// messagesOf returns m's value as a request's messages (see
// rawMessages), its elements as jsonscan.Members found them.
func messagesOf(m member) (rawMessages, error) {
	if len(m.Val) > 0 && m.Val[0] == '[' {
		return m.Elems, nil
	}
	var a rawMessages
	return a, a.UnmarshalJSON(m.Val)
}

// decodeMember decodes m's value into v, naming m in an error.
func decodeMember(m member, v any) error {
	if err := json.Unmarshal(m.Val, v); err != nil {
		return fmt.Errorf("%s: %w", m.Key, err)
	}
	return nil
}

// openAIMessage decodes an OpenAI message: the message recorded for it,
// or none when it has nothing to record.
func openAIMessage(raw json.RawMessage) ([]tract.ImportMessage, error) {
	var m llm.Message
	if err := m.UnmarshalJSON(raw); err != nil { // raw is valid: the request was read whole
		return nil, err
	}
	if m.Role == "developer" {
		m.Role = string(tract.RoleSystem) // recorded as the system message it is
	}
	im, ok, err := convert(m)
	if err != nil || !ok {
		return nil, err
	}
	return []tract.ImportMessage{im}, nil
}

// convert returns m as the message recorded for it; ok is false for a
// message with nothing to record (an empty content and no tool calls).
func convert(m llm.Message) (im tract.ImportMessage, ok bool, err error) {
	im = tract.ImportMessage{Role: tract.Role(m.Role), Content: m.Content, Parts: m.Parts, Name: m.Name,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Extra: withoutNulls(m.Extra)}
	if !im.Role.Valid() {
		return im, false, fmt.Errorf("role %q: want system, developer, user, assistant or tool", m.Role)
	}
	if im.Parts == nil && len(im.ToolCalls) == 0 && im.Content == "" {
		return im, false, nil
	}
	if _, _, err := im.Stored(); err != nil {
		return im, false, err
	}
	return im, true, nil
}

// withoutNulls returns extra without its null members ("refusal": null),
// nil when none is left.
func withoutNulls(extra map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range extra {
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = v
	}
	return out
}

// identity returns the message m stands for in a conversation: what
// Compile gives back for its commit (see canonical).
func identity(m tract.ImportMessage) (llm.Message, error) {
	text, shape, err := m.Stored()
	if err != nil {
		return llm.Message{}, err
	}
	ci := tract.CommitInfo{Kind: tract.KindMessage, Role: m.Role, Text: text}
	if shape != nil {
		ci.Meta = json.RawMessage(`{"shape":` + string(shape) + `}`)
	}
	return ci.Message()
}

// anthropicBlock is a content block of the Messages API.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// parseAnthropic reads a Messages API request body; its messages are
// decoded later, when they must be (see Handler.conversation).
func parseAnthropic(body []byte) (*request, error) {
	ms, err := requestMembers(body, "a Messages API request")
	if err != nil {
		return nil, err
	}
	var p parsed
	var system rawValue
	for _, m := range ms {
		shared, err := p.shared(m)
		if !shared && is(m, "system") {
			system = m.Val
		}
		if err != nil {
			return nil, badRequest("the request body is not a Messages API request: %v", err)
		}
	}
	if len(p.msgs) == 0 {
		return nil, badRequest("the request has no messages")
	}
	req := &p.req
	req.Tools = hasTools(p.tools)
	req.elems = make([]element, 0, len(p.msgs)+1)
	if len(system) > 0 && string(system) != "null" {
		req.elems = append(req.elems, element{kind: elemAnthropicSystem, pos: -1, raw: json.RawMessage(system)})
	}
	for i, raw := range p.msgs {
		req.elems = append(req.elems, element{kind: elemAnthropic, pos: i, raw: raw})
	}
	return req, nil
}

// anthropicMessage decodes an Anthropic message: the messages recorded
// for it (see anthropicMessages).
func anthropicMessage(raw json.RawMessage) ([]tract.ImportMessage, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.Role != "user" && m.Role != "assistant" {
		return nil, fmt.Errorf("role %q: want user or assistant", m.Role)
	}
	return anthropicMessages(m.Role, m.Content)
}

// anthropicMessages returns the OpenAI messages an Anthropic message
// stands for: its tool_result blocks as messages of role tool, first,
// then its text, images and tool_use blocks as one message of role. Other
// blocks (thinking, documents, …) go to the upstream but are not recorded.
func anthropicMessages(role string, content json.RawMessage) ([]tract.ImportMessage, error) {
	if len(content) > 0 && content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, err
		}
		return nonEmpty(tract.ImportMessage{Role: tract.Role(role), Content: s})
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, fmt.Errorf("content: want a string or an array of content blocks: %v", err)
	}
	var out []tract.ImportMessage
	main := tract.ImportMessage{Role: tract.Role(role)}
	var texts []string
	var parts []llm.Part
	for j, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
			parts = append(parts, llm.TextPart(b.Text))
		case "image":
			if b.Source == nil {
				return nil, fmt.Errorf("content[%d]: an image block needs a source", j)
			}
			u := b.Source.URL
			if b.Source.Type == "base64" {
				u = "data:" + b.Source.MediaType + ";base64," + b.Source.Data
			}
			parts = append(parts, llm.ImagePart(u, ""))
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			main.ToolCalls = append(main.ToolCalls, llm.NewToolCall(b.ID, b.Name, args))
		case "tool_result":
			text, err := blocksText(b.Content)
			if err != nil {
				return nil, fmt.Errorf("content[%d]: %v", j, err)
			}
			tm := tract.ImportMessage{Role: tract.RoleTool, Content: text, ToolCallID: b.ToolUseID}
			if b.IsError {
				tm.Extra = map[string]json.RawMessage{"is_error": json.RawMessage("true")}
			}
			if text == "" && !b.IsError {
				tm.Content = "(empty)"
			}
			out = append(out, tm)
		}
	}
	if len(parts) > len(texts) {
		main.Parts = parts // images: the text goes in parts with them
	} else {
		main.Content = strings.Join(texts, "")
	}
	rest, err := nonEmpty(main)
	return append(out, rest...), err
}

// nonEmpty returns m checked, or nothing when it has nothing to record.
func nonEmpty(m tract.ImportMessage) ([]tract.ImportMessage, error) {
	if m.Parts == nil && len(m.ToolCalls) == 0 && m.Content == "" {
		return nil, nil
	}
	if _, _, err := m.Stored(); err != nil {
		return nil, err
	}
	return []tract.ImportMessage{m}, nil
}

// blocksText returns the text of a string or of an array of content
// blocks (their text blocks, joined).
func blocksText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", fmt.Errorf("want a string or an array of content blocks: %v", err)
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}
