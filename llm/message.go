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
	"github.com/tractdag/tract/internal/jsonscan"
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
	b, err := m.appendJSON(make([]byte, 0, m.sizeHint()), false)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// appendJSON appends m as MarshalJSON writes it, strings unescaped for
// HTML: whoever encodes the message as a whole decides that (json.Marshal
// escapes it, an Encoder with SetEscapeHTML(false) does not). With
// compact, the Extra members are written without insignificant white
// space, as encoding/json writes a MarshalJSON's output.
func (m *Message) appendJSON(b []byte, compact bool) ([]byte, error) {
	if m.Parts != nil && m.Content != "" {
		return b, fieldError("content", "is set both as text and as parts")
	}
	if m.Parts != nil && len(m.Parts) == 0 {
		return b, fieldError("content", "is an empty array: give at least one part")
	}
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role, false)
	b = append(b, `,"content":`...)
	switch {
	case m.Parts != nil:
		var err error
		if b, err = appendArray(b, len(m.Parts), func(b []byte, i int) ([]byte, error) { return m.Parts[i].appendJSON(b, i) }); err != nil {
			return b, err
		}
	case m.NullContent():
		b = append(b, "null"...)
	default:
		b = appendString(b, m.Content, false)
	}
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, m.Name, false)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendString(b, c.ID, false)
			b = append(b, `,"type":`...)
			b = appendString(b, c.Type, false)
			b = append(b, `,"function":{"name":`...)
			b = appendString(b, c.Function.Name, false)
			b = append(b, `,"arguments":`...)
			b = appendString(b, c.Function.Arguments, false)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID, false)
	}
	if len(m.Extra) > 0 {
		keys := make([]string, 0, len(m.Extra))
		for k := range m.Extra {
			if slices.Contains(known, k) {
				return b, fieldError(k, "is a field of the message and cannot be an extra member")
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := m.Extra[k]
			if !json.Valid(v) {
				return b, fieldError(k, "is not valid JSON")
			}
			b = append(b, ',')
			b = appendString(b, k, false)
			b = append(b, ':')
			if compact {
				b, _ = appendCompact(b, v, false) // valid: checked above
			} else {
				b = append(b, v...)
			}
		}
	}
	return append(b, '}'), nil
}

// sizeHint is about the bytes of m's JSON when its strings need no
// escapes.
func (m *Message) sizeHint() int {
	n := 40 + len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID)
	for i := range m.Parts {
		p := &m.Parts[i]
		n += 40 + len(p.Type) + len(p.Text)
		if p.ImageURL != nil {
			n += 30 + len(p.ImageURL.URL) + len(p.ImageURL.Detail)
		}
		if p.InputAudio != nil {
			n += 30 + len(p.InputAudio.Data) + len(p.InputAudio.Format)
		}
		if p.File != nil {
			n += 50 + len(p.File.Filename) + len(p.File.FileData) + len(p.File.FileID)
		}
	}
	for _, c := range m.ToolCalls {
		n += 70 + len(c.ID) + len(c.Type) + len(c.Function.Name) + len(c.Function.Arguments)
	}
	for k, v := range m.Extra {
		n += 4 + len(k) + len(v)
	}
	return n
}

// appendJSON appends p, the content part at index i (an error names it
// content[i]; "part" when i is negative), as a content part object:
// "type", then the member the type names.
func (p *Part) appendJSON(b []byte, i int) ([]byte, error) {
	field := func() string {
		if i < 0 {
			return "part"
		}
		return fmt.Sprintf("content[%d]", i)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type, false)
	missing := false
	switch p.Type {
	case PartText:
		b = append(b, `,"text":`...)
		b = appendString(b, p.Text, false)
	case PartImageURL:
		if missing = p.ImageURL == nil; !missing {
			b = append(b, `,"image_url":{"url":`...)
			b = appendString(b, p.ImageURL.URL, false)
			if p.ImageURL.Detail != "" {
				b = append(b, `,"detail":`...)
				b = appendString(b, p.ImageURL.Detail, false)
			}
			b = append(b, '}')
		}
	case PartInputAudio:
		if missing = p.InputAudio == nil; !missing {
			b = append(b, `,"input_audio":{"data":`...)
			b = appendString(b, p.InputAudio.Data, false)
			b = append(b, `,"format":`...)
			b = appendString(b, p.InputAudio.Format, false)
			b = append(b, '}')
		}
	case PartFile:
		if missing = p.File == nil; !missing {
			b = append(b, `,"file":{`...)
			first := true
			for _, kv := range [...]struct{ k, v string }{
				{"filename", p.File.Filename}, {"file_data", p.File.FileData}, {"file_id", p.File.FileID},
			} {
				if kv.v != "" {
					b = appendKey(b, kv.k, first)
					b = appendString(b, kv.v, false)
					first = false
				}
			}
			b = append(b, '}')
		}
	default:
		return b, unsupported(field()+".type", "%q is not supported (supported: %s)", p.Type, strings.Join(PartTypes, ", "))
	}
	if missing {
		return b, fieldError(field()+"."+p.Type, "is missing")
	}
	return append(b, '}'), nil
}

// MarshalJSON writes p as a content part object: "type", then the member
// the type names.
func (p Part) MarshalJSON() ([]byte, error) {
	b, err := p.appendJSON(nil, -1)
	if err != nil {
		return nil, err
	}
	return b, nil
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
	ms, ok := jsonscan.Members(data)
	if !ok { // not an object: encoding/json says why, or it is null
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
		for k, v := range fields {
			ms = append(ms, jsonscan.Member{Key: k, Val: v})
		}
	}
	out, err := messageOf(ms)
	if err != nil {
		return err
	}
	*m = out
	return nil
}

// messageOf decodes a message object's members, ms (values that are
// slices of the caller's bytes: kept only as copies). As encoding/json
// reads them into a map, the last of a key wins; they are decoded in the
// order of their keys, so that the same input always reports the same
// error.
func messageOf(ms []jsonscan.Member) (Message, error) {
	slices.SortStableFunc(ms, func(a, b jsonscan.Member) int { return strings.Compare(a.Key, b.Key) })
	var out Message
	for i, f := range ms {
		if i+1 < len(ms) && ms[i+1].Key == f.Key {
			continue // a later one wins
		}
		k, raw := f.Key, json.RawMessage(f.Val)
		var err error
		switch k {
		case "role":
			err = decodeString(k, raw, &out.Role)
		case "name":
			err = decodeNonEmpty(k, raw, &out.Name)
		case "tool_call_id":
			err = decodeNonEmpty(k, raw, &out.ToolCallID)
		case "content":
			err = out.decodeContent(raw, f.Elems)
		case "tool_calls":
			err = out.decodeToolCalls(raw)
		default:
			if out.Extra == nil {
				out.Extra = make(map[string]json.RawMessage)
			}
			var b bytes.Buffer
			_ = json.Compact(&b, raw) // valid: it was read
			out.Extra[k] = b.Bytes()
		}
		if err != nil {
			return Message{}, err
		}
	}
	return out, nil
}

// decodeContent reads "content", raw; parts are its elements when a
// reader split them already.
func (m *Message) decodeContent(raw json.RawMessage, parts []json.RawMessage) error {
	switch firstByte(raw) {
	case 'n':
		return nil
	case '"':
		return decodeString("content", raw, &m.Content)
	case '[':
	default:
		return fieldError("content", "must be a string, an array of parts or null, not %s", jsonerr.Kind(raw))
	}
	if parts == nil {
		if err := json.Unmarshal(raw, &parts); err != nil {
			return fieldError("content", "is not an array of parts: %v", err)
		}
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
	if raw[0] == '"' && raw[len(raw)-1] == '"' { // one value, as a reader gives
		if v, ok := jsonscan.Unquote(raw); ok {
			*s = v
			return nil
		}
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
