package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request bodies are written by hand (encodeBody); these tests hold
// them to what encoding/json writes of the same requests, byte for byte.

// refMessage is a Message written as MarshalJSON wrote it before the
// bodies were written by hand: through encoding/json, a string at a
// time. It is the reference the hand-written messages are compared with.
type refMessage Message

func (m refMessage) MarshalJSON() ([]byte, error) {
	if m.Parts != nil && m.Content != "" {
		return nil, fieldError("content", "is set both as text and as parts")
	}
	if m.Parts != nil && len(m.Parts) == 0 {
		return nil, fieldError("content", "is an empty array: give at least one part")
	}
	var b bytes.Buffer
	b.WriteString(`{"role":`)
	refWrite(&b, m.Role)
	b.WriteString(`,"content":`)
	switch {
	case m.Parts != nil:
		b.WriteByte('[')
		for i, p := range m.Parts {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := refWritePart(&b, p, fmt.Sprintf("content[%d]", i)); err != nil {
				return nil, err
			}
		}
		b.WriteByte(']')
	case Message(m).NullContent():
		b.WriteString("null")
	default:
		refWrite(&b, m.Content)
	}
	if m.Name != "" {
		b.WriteString(`,"name":`)
		refWrite(&b, m.Name)
	}
	if len(m.ToolCalls) > 0 {
		b.WriteString(`,"tool_calls":`)
		refWrite(&b, m.ToolCalls)
	}
	if m.ToolCallID != "" {
		b.WriteString(`,"tool_call_id":`)
		refWrite(&b, m.ToolCallID)
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
		refWrite(&b, k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func refWritePart(b *bytes.Buffer, p Part, field string) error {
	b.WriteString(`{"type":`)
	refWrite(b, p.Type)
	var v any
	switch p.Type {
	case PartText:
		b.WriteString(`,"text":`)
		refWrite(b, p.Text)
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
	refWrite(b, v)
	b.WriteByte('}')
	return nil
}

func refWrite(b *bytes.Buffer, v any) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	b.Truncate(b.Len() - 1)
}

// refChatRequest is chatRequest with the reference messages.
type refChatRequest struct {
	Model          string          `json:"model"`
	Messages       []refMessage    `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Tools          []openAITool    `json:"tools,omitempty"`
	ToolChoice     any             `json:"tool_choice,omitempty"`
}

// referenceBody is what encoding/json writes of w: an OpenAI body with
// the reference messages, an Anthropic body as it is (its messages are
// written by json.Marshal).
func referenceBody(t testing.TB, w requestBody) string {
	var v any = w
	if r, ok := w.(*chatRequest); ok {
		v = refRequest(r)
	}
	b, err := encodeRequest(v)
	require.NoError(t, err)
	return string(b)
}

// refRequest is r with the reference messages.
func refRequest(r *chatRequest) refChatRequest {
	ref := refChatRequest{r.Model, nil, r.Temperature, r.MaxTokens, r.Stream, r.StreamOptions,
		r.ResponseFormat, r.Tools, r.ToolChoice}
	if r.Messages != nil {
		ref.Messages = make([]refMessage, len(r.Messages))
		for i, m := range r.Messages {
			ref.Messages[i] = refMessage(m)
		}
	}
	return ref
}

// trickyPieces are the pieces of text a JSON writer may get wrong.
var trickyPieces = []string{
	`"`, `\`, "<", ">", "&", "<script>", "\n", "\r\n", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f", " ",
	"é", "ü", "日本語", "🎉", "\u2028", "\u2029", "\u2027", "\u202a", "\ufffd",
	"\xff", "\xfe", "\xc3", "\xe2\x80", "\xe2\x80\xa8\xe2", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf",
}

// randText returns a text of plain runs of random lengths (so that the
// pieces fall at every offset of an eight-byte word) and tricky pieces.
func randText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(8) {
		if r.IntN(3) > 0 {
			run := strings.Repeat("lorem ipsum ", 3)[r.IntN(6):]
			b.WriteString(run[:r.IntN(len(run))])
		} else {
			b.WriteString(trickyPieces[r.IntN(len(trickyPieces))])
		}
	}
	return b.String()
}

// randMessage returns a message of a random shape; anthropic keeps to the
// shapes the Anthropic client can send.
func randMessage(r *rand.Rand, anthropic bool) Message {
	roles := []string{"user", "assistant", "system", "developer", "tool", "user<&>"}
	m := Message{Role: roles[r.IntN(len(roles))]}
	switch r.IntN(6) {
	case 0, 1: // plain
		m.Content = randText(r)
	case 2: // parts
		for range 1 + r.IntN(3) {
			m.Parts = append(m.Parts, randPart(r, anthropic))
		}
	case 3: // tool calls
		m.Role = "assistant"
		if r.IntN(2) == 0 {
			m.Content = randText(r)
		}
		for i := range 1 + r.IntN(3) {
			args := fmt.Sprintf(`{"q": %s, "n": [1, 2.5e3, null, true]}`, jsonText(randText(r)))
			if r.IntN(4) == 0 {
				args = ""
			}
			m.ToolCalls = append(m.ToolCalls, NewToolCall(fmt.Sprintf("call_%d<%s>", i, randText(r)), "f&g"+randText(r), args))
		}
	case 4: // a tool's answer
		m.Role, m.Content, m.ToolCallID = "tool", randText(r), "call_"+randText(r)
	case 5: // extra members and a name
		m.Content, m.Name = randText(r), "n"+randText(r)
		m.Extra = map[string]json.RawMessage{
			"cache_control": json.RawMessage(`{ "type" : "ephemeral <&>" ,
			"ttl": [ 1 , 2 ] }`),
			"z" + randText(r): json.RawMessage(jsonText(randText(r))),
			"a\u2028":         json.RawMessage(`"\u2028 x` + "\u2029" + `"`),
		}
	}
	if r.IntN(5) == 0 {
		m.Name = randText(r)
	}
	return m
}

// randValidText is randText as valid UTF-8.
func randValidText(r *rand.Rand) string { return strings.ToValidUTF8(randText(r), "") }

// jsonText is s as a JSON string, "<", ">" and "&" escaped or not.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	if len(s)%2 == 0 {
		b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	}
	return string(b)
}

func randPart(r *rand.Rand, anthropic bool) Part {
	n := 4
	if anthropic {
		n = 3
	}
	switch r.IntN(n) {
	case 0:
		return TextPart(randText(r))
	case 1:
		url := "data:image/png;base64,iVBORw0KGgo" + strings.Repeat("AAAA", r.IntN(40))
		if r.IntN(2) == 0 {
			url = "https://example.com/a.png?x=<1>&y=" + randValidText(r)
		}
		return ImagePart(url, []string{"", "low", "high<"}[r.IntN(3)])
	case 2:
		return Part{Type: PartFile, File: &File{Filename: []string{"", "a&b.pdf"}[r.IntN(2)],
			FileData: "data:application/pdf;base64,JVBERi0=" + randText(r)}}
	}
	if r.IntN(2) == 0 {
		return Part{Type: PartInputAudio, InputAudio: &InputAudio{Data: "UklGR" + randText(r), Format: "wav"}}
	}
	return Part{Type: PartFile, File: &File{FileID: "file-" + randText(r)}}
}

// requestVariants are requests around msgs that set each member of the
// bodies around the messages.
func requestVariants(msgs []Message) []Request {
	temp := 0.7
	schema := &Schema{Name: "answer", Schema: json.RawMessage(`{"type": "object", "properties": {"a<b": {"type":"string"}}}`), Strict: true}
	tools := []ToolDef{{Name: "search", Description: "finds <things> & more", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}, {Name: "noop"}}
	return []Request{
		{Messages: msgs},
		{Messages: msgs, Model: "other<&>", Temperature: &temp, OnDelta: func(string) {}},
		{Messages: msgs, Schema: schema},
		{Messages: msgs, Tools: tools},
		{Messages: msgs, Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceNone}, Schema: schema},
		{Messages: msgs, Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceRequired}, OnDelta: func(string) {}},
		{Messages: msgs, Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceTool, Name: "search"}, Schema: schema},
	}
}

// clients returns an OpenAI and an Anthropic client, with and without
// max tokens.
func clients(t testing.TB) (openai []*OpenAI, anthropic []*Anthropic) {
	for _, opts := range [][]Option{
		{WithModel("gpt-<x>"), WithBaseURL("http://127.0.0.1:1")},
		{WithModel("m"), WithBaseURL("http://127.0.0.1:1"), WithMaxTokens(100)},
	} {
		o, err := NewOpenAI(opts...)
		require.NoError(t, err)
		a, err := NewAnthropic(opts...)
		require.NoError(t, err)
		openai, anthropic = append(openai, o), append(anthropic, a)
	}
	return openai, anthropic
}

// sameBodies checks both clients' bodies of each variant of msgs against
// encoding/json's.
func sameBodies(t *testing.T, msgs, anthropicMsgs []Message) {
	openai, anthropic := clients(t)
	for _, req := range requestVariants(msgs) {
		for _, c := range openai {
			w := c.wire(req)
			got, err := encodeBody(&w)
			require.NoError(t, err)
			require.Equal(t, referenceBody(t, &w), string(got))
			body, _, err := c.encode(req)
			require.NoError(t, err)
			require.Equal(t, string(got), string(body))
		}
	}
	for _, req := range requestVariants(anthropicMsgs) {
		for _, c := range anthropic {
			w, _, err := c.wire(req)
			require.NoError(t, err)
			got, err := encodeBody(&w)
			require.NoError(t, err)
			require.Equal(t, referenceBody(t, &w), string(got))
		}
	}
}

func TestRequestBody_SameAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 2))
	var msgs, anthropicMsgs []Message
	for range 3000 {
		msgs = append(msgs, randMessage(r, false))
		anthropicMsgs = append(anthropicMsgs, randMessage(r, true))
	}
	sameBodies(t, msgs, anthropicMsgs)

	t.Run("each message alone", func(t *testing.T) {
		for i := range 300 {
			sameBodies(t, msgs[i:i+1], anthropicMsgs[i:i+1])
		}
	})
	t.Run("only system messages", func(t *testing.T) { // Anthropic's messages are null
		sys := []Message{{Role: "system", Content: "be <brief>"}}
		sameBodies(t, sys, sys)
	})
	t.Run("each tricky piece at every offset", func(t *testing.T) {
		var msgs []Message
		for _, p := range trickyPieces {
			for off := range 17 {
				text := strings.Repeat("a", off) + p + strings.Repeat("b", 17-off)
				msgs = append(msgs, Message{Role: "user", Content: text}, Message{Role: "assistant", Content: text + p})
			}
		}
		sameBodies(t, msgs, msgs)
	})
}

// A message MarshalJSON refuses fails the body with the error
// encoding/json gives, as before the bodies were written by hand.
func TestRequestBody_RefusedMessageKeepsEncodingJSONsError(t *testing.T) {
	openai, _ := clients(t)
	for _, m := range []Message{
		{Role: "user", Content: "x", Parts: []Part{TextPart("y")}},
		{Role: "user", Parts: []Part{}},
		{Role: "user", Parts: []Part{{Type: "video"}}},
		{Role: "user", Parts: []Part{{Type: PartImageURL}}},
		{Role: "user", Content: "x", Extra: map[string]json.RawMessage{"role": json.RawMessage(`"x"`)}},
		{Role: "user", Content: "x", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}},
	} {
		w := openai[0].wire(Request{Messages: []Message{{Role: "user", Content: "ok"}, m}})
		_, err := encodeBody(&w)
		ref := refChatRequest{Model: w.Model, Messages: []refMessage{{Role: "user", Content: "ok"}, refMessage(m)}}
		_, refErr := encodeRequest(ref)
		require.Error(t, refErr)
		require.Error(t, err)
		assert.Equal(t, strings.ReplaceAll(refErr.Error(), "llm.refMessage", "llm.Message"), err.Error())
		var fe *FieldError
		assert.ErrorAs(t, err, &fe)
	}
}

// Message.MarshalJSON and Part.MarshalJSON write what they wrote through
// encoding/json, and refuse what they refused with the same errors.
func TestMessage_MarshalJSONSameAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 3))
	for range 2000 {
		m := randMessage(r, false)
		got, err := m.MarshalJSON()
		require.NoError(t, err)
		want, err := refMessage(m).MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		for _, p := range m.Parts {
			got, err := p.MarshalJSON()
			require.NoError(t, err)
			var want bytes.Buffer
			require.NoError(t, refWritePart(&want, p, "part"))
			require.Equal(t, want.String(), string(got))
		}
	}
	for _, p := range []Part{{Type: "video"}, {Type: PartFile}, {Type: PartInputAudio}} {
		_, err := p.MarshalJSON()
		var want bytes.Buffer
		assert.Equal(t, refWritePart(&want, p, "part"), err)
	}
}

// FuzzRequestBody holds the hand-written bodies of messages made of any
// text to encoding/json's.
func FuzzRequestBody(f *testing.F) {
	for _, p := range trickyPieces {
		f.Add("user", p+" hello <world> & more", p, `{"a": "`+p+`"}`)
	}
	f.Add("assistant", "", "call", `{}`)
	f.Add("tool", "a\u2028b\xffc", "id\n", "  [1,\n 2]  ")
	openai, anthropic := clients(f)
	f.Fuzz(func(t *testing.T, role, content, id, raw string) {
		msgs := []Message{
			{Role: role, Content: content},
			{Role: role, Parts: []Part{TextPart(content), ImagePart("https://x/"+content, id)}},
			{Role: "tool", Content: content, ToolCallID: id, Name: id},
		}
		call := Message{Role: "assistant", Content: content, ToolCalls: []ToolCall{NewToolCall(id, content, raw)}}
		if json.Valid([]byte(raw)) {
			msgs = append(msgs, Message{Role: role, Content: content, Extra: map[string]json.RawMessage{id + "x": json.RawMessage(raw)}})
		}
		for _, req := range []Request{{Messages: append(msgs, call)}, {Messages: msgs, Model: content}} {
			w := openai[0].wire(req)
			got, err := encodeBody(&w)
			require.NoError(t, err)
			require.Equal(t, referenceBody(t, &w), string(got))
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &obj) == nil {
			msgs = append(msgs, call)
		}
		aw, _, err := anthropic[0].wire(Request{Messages: msgs, Model: content})
		require.NoError(t, err)
		got, err := encodeBody(&aw)
		require.NoError(t, err)
		require.Equal(t, referenceBody(t, &aw), string(got))
	})
}

// refAnthropicMessages is anthropicMessages as it merged a run of one
// role before: at each message, the run so far copied again.
func refAnthropicMessages(in []Message) (system string, out []anthropicMessage, err error) {
	var sys []string
	for i, m := range in {
		if m.Role == "system" || m.Role == "developer" {
			sys = append(sys, m.Text())
			continue
		}
		am, err := anthropicMessageOf(m)
		if err != nil {
			return "", nil, fmt.Errorf("message %d (%s): %w", i+1, m.Role, err)
		}
		n := len(out)
		switch {
		case n == 0 || out[n-1].Role != am.Role:
			out = append(out, am)
		case out[n-1].Blocks == nil && am.Blocks == nil:
			out[n-1].Text += "\n\n" + am.Text
		default:
			out[n-1].Blocks = toolResultsFirst(append(out[n-1].blocks(), am.blocks()...))
		}
	}
	return strings.Join(sys, "\n\n"), out, nil
}

// Runs of one role merge as they did, whatever the shapes in them.
func TestAnthropicMessages_RunsMergeAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 4))
	for range 2000 {
		var msgs []Message
		for range r.IntN(12) {
			m := randMessage(r, true)
			if r.IntN(3) == 0 {
				m = Message{Role: []string{"user", "assistant", "tool"}[r.IntN(3)], Content: []string{"", "a", "b<"}[r.IntN(3)]}
			}
			msgs = append(msgs, m)
		}
		wantSys, want, wantErr := refAnthropicMessages(msgs)
		sys, got, err := anthropicMessages(msgs)
		require.Equal(t, wantErr, err)
		require.Equal(t, wantSys, sys)
		require.Equal(t, want, got)
	}
}

// A long run of one role is merged once: 100,000 user messages in a row
// (an import of notes, say) took minutes when each merge copied the run.
func TestAnthropicMessages_LongRunOfOneRole(t *testing.T) {
	msgs := make([]Message, 100_000)
	texts := make([]string, len(msgs))
	for i := range msgs {
		texts[i] = fmt.Sprintf("note %d", i)
		msgs[i] = Message{Role: "user", Content: texts[i]}
	}
	_, out, err := anthropicMessages(msgs)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, strings.Join(texts, "\n\n"), out[0].Text)
}
