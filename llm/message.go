package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/internal/jsonerr"
)

// Message is one entry of a chat conversation as a model sees it. It maps
// one to one onto the OpenAI chat-completions message object. The common
// case is a role and a text, Message{Role: "user", Content: "hi"}; the
// other fields carry the rest of the shapes OpenAI clients send.
//
// Its JSON is written with the members in this order, each only when set:
// "role", "content", "name", "tool_calls", "tool_call_id", then the Extra
// members sorted by key. "content" is always written: the Parts array when
// Parts is set, null for an assistant message with ToolCalls and no text,
// else the Content string. Decoding accepts the members in any order (see
// UnmarshalJSON).
type Message struct {
	Role string
	// Content is the text. It must be empty when Parts is set.
	Content string
	// Parts, when non-nil, is the content as an array of parts (text,
	// images, audio, files) instead of a string.
	Parts []Part
	// Name is the optional participant name ("name").
	Name string
	// ToolCalls are the function calls of an assistant message
	// ("tool_calls"). With ToolCalls and no text, the content is sent as
	// null.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers ("tool_call_id").
	ToolCallID string
	// Extra holds any other members of the message object, by name, each
	// a JSON value sent as is. Its keys may not be the names above.
	Extra map[string]json.RawMessage
}

// Part is one element of a content array: its Type says which of the other
// fields it uses ("text": Text; "image_url": ImageURL; "input_audio":
// InputAudio; "file": File).
type Part struct {
	Type       string
	Text       string
	ImageURL   *ImageURL
	InputAudio *InputAudio
	File       *File
}

// The part types Part supports.
const (
	PartText       = "text"
	PartImageURL   = "image_url"
	PartInputAudio = "input_audio"
	PartFile       = "file"
)

// PartTypes lists the supported part types, in the order error messages
// name them.
var PartTypes = []string{PartText, PartImageURL, PartInputAudio, PartFile}

// ImageURL is an image part's image: a URL, often a data: URL holding the
// image itself, and the optional detail level ("auto", "low", "high").
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// InputAudio is an audio part's audio: base64 data and its format ("wav",
// "mp3").
type InputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// File is a file part's file: a file uploaded earlier (FileID) or the file
// itself (FileData, a base64 data: URL, usually with Filename).
type File struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
}

// ToolCall is one function call of an assistant message.
type ToolCall struct {
	ID string `json:"id"`
	// Type is "function", the only type of call supported.
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function a ToolCall calls and its arguments, a
// JSON text as the model wrote it.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// ImagePart returns an image part of url with the given detail ("" for
// none).
func ImagePart(url, detail string) Part {
	return Part{Type: PartImageURL, ImageURL: &ImageURL{URL: url, Detail: detail}}
}

// FieldError is a message member that cannot be decoded or sent: Field
// is its path in the message object ("content[1].type", "tool_calls[0].id").
// Err is ErrUnsupported for a shape that is valid but that Message cannot
// carry (an unknown part type, a tool call that is not a function), else
// nil.
type FieldError struct {
	Field string
	Msg   string
	Err   error
}

// Error names the field and what is wrong with it.
func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// ErrUnsupported is wrapped by the *FieldError of a shape Message cannot
// carry.
var ErrUnsupported = errors.New("unsupported message shape")

func unsupported(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...), Err: ErrUnsupported}
}

func fieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// known are the members Message has fields for.
var known = []string{"role", "content", "name", "tool_calls", "tool_call_id"}

// NullContent reports whether m's content is written as null: an
// assistant's tool calls with no text.
func (m Message) NullContent() bool {
	return m.Parts == nil && m.Content == "" && len(m.ToolCalls) > 0
}

// Text returns m as a person reads it: the content (the string, or each
// part on its own line, a text part as its text and any other as a short
// description such as "[image: data:image/png…(12 KB)]"), then a line per
// tool call, "→ tool call NAME(ARGUMENTS)". For a plain message it is
// Content.
func (m Message) Text() string {
	if m.Parts == nil && len(m.ToolCalls) == 0 {
		return m.Content
	}
	var lines []string
	if m.Parts != nil {
		for _, p := range m.Parts {
			lines = append(lines, p.describe())
		}
	} else if m.Content != "" {
		lines = append(lines, m.Content)
	}
	for _, c := range m.ToolCalls {
		lines = append(lines, fmt.Sprintf("→ tool call %s(%s)", c.Function.Name, c.Function.Arguments))
	}
	return strings.Join(lines, "\n")
}

// describe is p's line in Text.
func (p Part) describe() string {
	switch {
	case p.Type == PartText:
		return p.Text
	case p.Type == PartImageURL && p.ImageURL != nil:
		return "[image: " + describeData(p.ImageURL.URL) + "]"
	case p.Type == PartInputAudio && p.InputAudio != nil:
		return fmt.Sprintf("[audio: %s, %s]", p.InputAudio.Format, sizeOf(len(p.InputAudio.Data)))
	case p.Type == PartFile && p.File != nil:
		f := p.File
		name := f.Filename
		switch {
		case name == "" && f.FileID != "":
			name = f.FileID
		case f.FileID != "":
			name += " " + f.FileID
		}
		if f.FileData != "" {
			name += " (" + sizeOf(len(f.FileData)) + ")"
		}
		return "[file: " + strings.TrimSpace(name) + "]"
	}
	return "[" + p.Type + "]"
}

// describeData shortens a data: URL to its media type and size
// ("data:image/png…(12 KB)"); other URLs are kept whole up to 200 bytes.
func describeData(url string) string {
	if strings.HasPrefix(url, "data:") {
		head, _, _ := strings.Cut(url, ",")
		head, _, _ = strings.Cut(head, ";")
		return head + "…(" + sizeOf(len(url)) + ")"
	}
	if len(url) > 200 {
		cut := 199
		for cut > 0 && !utf8.RuneStart(url[cut]) {
			cut--
		}
		return url[:cut] + "…"
	}
	return url
}

// sizeOf says n bytes the short way: "512 B", "12 KB", "3.1 MB".
func sizeOf(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// MarshalJSON writes m as an OpenAI message object (see Message for the
// order of its members). It fails on a message it cannot write faithfully:
// Content set alongside Parts, an empty Parts, an unsupported part, an
// Extra member named like a field or holding invalid JSON. It does not
// check what a server would (a tool call's id, say): UnmarshalJSON does.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Parts != nil && m.Content != "" {
		return nil, fieldError("content", "is set both as text and as parts")
	}
	if m.Parts != nil && len(m.Parts) == 0 {
		return nil, fieldError("content", "is an empty array: give at least one part")
	}
	var b bytes.Buffer
	b.WriteString(`{"role":`)
	writeString(&b, m.Role)
	b.WriteString(`,"content":`)
	switch {
	case m.Parts != nil:
		b.WriteByte('[')
		for i, p := range m.Parts {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := p.write(&b, fmt.Sprintf("content[%d]", i)); err != nil {
				return nil, err
			}
		}
		b.WriteByte(']')
	case m.NullContent():
		b.WriteString("null")
	default:
		writeString(&b, m.Content)
	}
	if m.Name != "" {
		b.WriteString(`,"name":`)
		writeString(&b, m.Name)
	}
	if len(m.ToolCalls) > 0 {
		b.WriteString(`,"tool_calls":`)
		if err := writeValue(&b, m.ToolCalls); err != nil {
			return nil, err
		}
	}
	if m.ToolCallID != "" {
		b.WriteString(`,"tool_call_id":`)
		writeString(&b, m.ToolCallID)
	}
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		if slices.Contains(known, k) {
			return nil, fieldError(k, "is a field of the message and cannot be an extra member")
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m.Extra[k]
		if !json.Valid(v) {
			return nil, fieldError(k, "is not valid JSON")
		}
		b.WriteByte(',')
		writeString(&b, k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// write writes p as a content part: "type", then the member the type
// names.
func (p Part) write(b *bytes.Buffer, field string) error {
	b.WriteString(`{"type":`)
	writeString(b, p.Type)
	var v any // the member the type names; nil when it is missing
	switch p.Type {
	case PartText:
		b.WriteString(`,"text":`)
		writeString(b, p.Text)
		b.WriteByte('}')
		return nil
	case PartImageURL:
		if p.ImageURL != nil {
			v = p.ImageURL
		}
	case PartInputAudio:
		if p.InputAudio != nil {
			v = p.InputAudio
		}
	case PartFile:
		if p.File != nil {
			v = p.File
		}
	default:
		return unsupported(field+".type", "%q is not supported (supported: %s)", p.Type, strings.Join(PartTypes, ", "))
	}
	if v == nil {
		return fieldError(field+"."+p.Type, "is missing")
	}
	b.WriteString(`,"` + p.Type + `":`)
	if err := writeValue(b, v); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

// MarshalJSON writes p as a content part object: "type", then the member
// the type names.
func (p Part) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := p.write(&b, "part"); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeString writes s as a JSON string, without escaping HTML: whoever
// encodes the message as a whole decides that (json.Marshal escapes it,
// an Encoder with SetEscapeHTML(false) does not).
func writeString(b *bytes.Buffer, s string) {
	_ = writeValue(b, s) // a string always encodes
}

// writeValue writes v's JSON, without escaping HTML.
func writeValue(b *bytes.Buffer, v any) error {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// UnmarshalJSON reads an OpenAI message object. It is strict about what
// it knows and keeps what it does not: "content" is a string, null or an
// array of parts of the types in PartTypes; "tool_calls" an array of
// function calls; "role", "name" and "tool_call_id" strings; any other
// member goes to Extra as it came, less insignificant white space. A
// member of the wrong type, an unknown part type, an unknown member
// inside a part or a tool call, or a member that would not come back (an
// empty name) is an error: a *FieldError naming the member, wrapping
// ErrUnsupported for a shape that is valid but not supported. A null
// "content" decodes as no content.
func (m *Message) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("got %s, want an object", jsonerr.Kind(data))
	}
	if fields == nil {
		return nil // null: leave m alone, as json does
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same input always reports the same error
	var out Message
	for _, k := range keys {
		raw := fields[k]
		var err error
		switch k {
		case "role":
			err = decodeString(k, raw, &out.Role)
		case "name":
			err = decodeNonEmpty(k, raw, &out.Name)
		case "tool_call_id":
			err = decodeNonEmpty(k, raw, &out.ToolCallID)
		case "content":
			err = out.decodeContent(raw)
		case "tool_calls":
			err = out.decodeToolCalls(raw)
		default:
			if out.Extra == nil {
				out.Extra = make(map[string]json.RawMessage)
			}
			var b bytes.Buffer
			_ = json.Compact(&b, raw) // valid: it was decoded
			out.Extra[k] = b.Bytes()
		}
		if err != nil {
			return err
		}
	}
	*m = out
	return nil
}

func (m *Message) decodeContent(raw json.RawMessage) error {
	switch firstByte(raw) {
	case 'n':
		return nil
	case '"':
		return decodeString("content", raw, &m.Content)
	case '[':
	default:
		return fieldError("content", "must be a string, an array of parts or null, not %s", jsonerr.Kind(raw))
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fieldError("content", "is not an array of parts: %v", err)
	}
	if len(parts) == 0 {
		return fieldError("content", "is an empty array: give at least one part")
	}
	m.Parts = make([]Part, len(parts))
	for i, p := range parts {
		if err := m.Parts[i].decode(fmt.Sprintf("content[%d]", i), p); err != nil {
			return err
		}
	}
	return nil
}

// decode reads the content part raw, at field.
func (p *Part) decode(field string, raw json.RawMessage) error {
	var fields map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &fields) != nil {
		return fieldError(field, "must be an object with a type, not %s", jsonerr.Kind(raw))
	}
	t, ok := fields["type"]
	if !ok {
		return fieldError(field+".type", "is missing")
	}
	if err := decodeString(field+".type", t, &p.Type); err != nil {
		return err
	}
	if !slices.Contains(PartTypes, p.Type) {
		return unsupported(field+".type", "%q is not supported (supported: %s)", p.Type, strings.Join(PartTypes, ", "))
	}
	for k := range fields {
		if k != "type" && k != p.Type {
			return unsupported(field+"."+k, "is not supported in a %q part (it holds only \"type\" and %q)", p.Type, p.Type)
		}
	}
	body, ok := fields[p.Type]
	if !ok {
		return fieldError(field+"."+p.Type, "is missing")
	}
	at := field + "." + p.Type
	switch p.Type {
	case PartText:
		return decodeString(at, body, &p.Text)
	case PartImageURL:
		p.ImageURL = new(ImageURL)
		if err := decodeStrict(at, body, p.ImageURL, "url", "detail?"); err != nil {
			return err
		}
		if p.ImageURL.URL == "" {
			return fieldError(at+".url", "is missing or empty")
		}
	case PartInputAudio:
		p.InputAudio = new(InputAudio)
		if err := decodeStrict(at, body, p.InputAudio, "data", "format"); err != nil {
			return err
		}
		if p.InputAudio.Data == "" || p.InputAudio.Format == "" {
			return fieldError(at, "needs both data and format")
		}
	case PartFile:
		p.File = new(File)
		if err := decodeStrict(at, body, p.File, "filename?", "file_data?", "file_id?"); err != nil {
			return err
		}
		if p.File.FileData == "" && p.File.FileID == "" {
			return fieldError(at, "needs file_data or file_id")
		}
	}
	return nil
}

func (m *Message) decodeToolCalls(raw json.RawMessage) error {
	if firstByte(raw) == 'n' {
		return nil
	}
	var calls []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &calls) != nil {
		return fieldError("tool_calls", "must be an array of tool calls, not %s", jsonerr.Kind(raw))
	}
	if len(calls) == 0 {
		return fieldError("tool_calls", "is an empty array: leave it out, or give at least one call")
	}
	m.ToolCalls = make([]ToolCall, len(calls))
	for i, c := range calls {
		at := fmt.Sprintf("tool_calls[%d]", i)
		tc := &m.ToolCalls[i]
		if err := decodeStrict(at, c, tc, "id", "type", "function"); err != nil {
			return err
		}
		var fn struct {
			Function json.RawMessage `json:"function"`
		}
		_ = json.Unmarshal(c, &fn) // c decoded above
		if fn.Function == nil {
			return fieldError(at+".function", "is missing")
		}
		if err := checkKeys(at+".function", fn.Function, "name", "arguments"); err != nil {
			return err
		}
		var args struct {
			Arguments json.RawMessage `json:"arguments"` // the keys are checked: no "Arguments"
		}
		if json.Unmarshal(fn.Function, &args); args.Arguments == nil {
			return fieldError(at+".function.arguments", "is missing (give \"\" for none)")
		}
		switch {
		case tc.Type != "function":
			return unsupported(at+".type", "%q is not supported (supported: function)", tc.Type)
		case tc.ID == "":
			return fieldError(at+".id", "is missing or empty")
		case tc.Function.Name == "":
			return fieldError(at+".function.name", "is missing or empty")
		}
	}
	return nil
}

// checkKeys refuses an object at field with a member not named in keys
// (exactly: encoding/json would take "URL" for "url"). A key ending in
// "?" names an optional string that is left out when empty, so an empty
// one is refused too: it would not come back.
func checkKeys(field string, raw json.RawMessage, keys ...string) error {
	if firstByte(raw) != '{' {
		return fieldError(field, "must be an object, not %s", jsonerr.Kind(raw))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fieldError(field, "is not valid: %v", err)
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		switch {
		case slices.Contains(keys, k+"?"):
			if string(fields[k]) == `""` {
				return fieldError(field+"."+k, "is empty: leave it out")
			}
		case !slices.Contains(keys, k):
			return unsupported(field+"."+k, "is not supported")
		}
	}
	return nil
}

// decodeNonEmpty decodes the string raw at field into s, refusing an
// empty one, which would not come back (an empty member is left out).
func decodeNonEmpty(field string, raw json.RawMessage, s *string) error {
	if err := decodeString(field, raw, s); err != nil {
		return err
	}
	if *s == "" {
		return fieldError(field, "is empty: leave it out")
	}
	return nil
}

// decodeStrict decodes the object raw at field into v, refusing members
// not named in keys and values of the wrong type.
func decodeStrict(field string, raw json.RawMessage, v any, keys ...string) error {
	if err := checkKeys(field, raw, keys...); err != nil {
		return err
	}
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fieldError(field+"."+te.Field, "must be %s, not %s", describeType(te.Type.Kind().String()), te.Value)
	}
	return fieldError(field, "is not valid: %v", err)
}

func describeType(kind string) string {
	if kind == "struct" {
		return "an object"
	}
	return english.A(kind)
}

// decodeString decodes the string raw at field into s.
func decodeString(field string, raw json.RawMessage, s *string) error {
	if firstByte(raw) != '"' {
		return fieldError(field, "must be a string, not %s", jsonerr.Kind(raw))
	}
	return json.Unmarshal(raw, s)
}

func firstByte(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// Clone returns a copy of m with its own parts, tool calls and other
// members, so that changing the copy changes nothing of m.
func (m Message) Clone() Message {
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
