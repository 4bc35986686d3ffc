package tract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// dataURL is a data: URL of n bytes in all.
func dataURL(n int) string {
	head := "data:image/png;base64,"
	return head + strings.Repeat("A", n-len(head))
}

// shapes are one message of every shape tract keeps, each as its JSON in
// the documented key order (role, content, name, tool_calls,
// tool_call_id, then other members sorted, in canonical form).
var shapes = []struct{ name, json string }{
	{"plain text", `{"role":"system","content":"You are terse."}`},
	{"name", `{"role":"user","content":"hi","name":"alice"}`},
	{"text and image parts", `{"role":"user","content":[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}`},
	{"data URL with detail", `{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + dataURL(3000) + `","detail":"high"}}]}`},
	{"audio part", `{"role":"user","content":[{"type":"text","text":"transcribe"},{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZF","format":"wav"}}]}`},
	{"file part with data", `{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}},{"type":"text","text":"summarise it"}]}`},
	{"file part by id", `{"role":"user","content":[{"type":"file","file":{"file_id":"file-abc123"}}]}`},
	{"tool calls without content", `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
	{"text and two tool calls", `{"role":"assistant","content":"Checking both.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},{"id":"call_3","type":"function","function":{"name":"get_time","arguments":""}}]}`},
	{"tool result", `{"role":"tool","content":"{\"temp\":22}","tool_call_id":"call_1"}`},
	{"tool result as parts", `{"role":"tool","content":[{"type":"text","text":"22 degrees"}],"tool_call_id":"call_2"}`},
	{"assistant with a name and HTML", `{"role":"assistant","content":"a < b && c > d","name":"bot"}`},
	{"other members kept", `{"role":"assistant","content":"ok","annotations":[],"audio":{"id":"au_1","nested":{"a":1,"b":[true,null]}},"refusal":null}`},
}

// encode is a message's JSON as the CLI writes it: no HTML escaping.
func encode(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(v))
	return strings.TrimSuffix(b.String(), "\n")
}

func newShapeTract(t *testing.T, opts ...tract.Option) *tract.Tract {
	t.Helper()
	return newCmpTract(t, opts...)
}

func readLines(t *testing.T, lines ...string) []tract.ImportMessage {
	t.Helper()
	var msgs []tract.ImportMessage
	for m, err := range tract.ReadMessages(strings.NewReader(strings.Join(lines, "\n"))) {
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	require.Len(t, msgs, len(lines))
	return msgs
}

// Every shape goes through import, the store and compile byte for byte,
// whether Compile reads it cold, from its cache, or as a sequence.
func TestImport_ShapesRoundTrip(t *testing.T) {
	var lines []string
	for _, s := range shapes {
		lines = append(lines, s.json)
	}
	tr := newShapeTract(t)
	_, err := tr.Import(context.Background(), readLines(t, lines...))
	require.NoError(t, err)

	check := func(t *testing.T, msgs []tract.Message) {
		require.Len(t, msgs, len(shapes))
		for i, s := range shapes {
			assert.Equal(t, s.json, encode(t, msgs[i]), s.name)
		}
	}
	t.Run("Compile", func(t *testing.T) {
		tr.DropCaches()
		msgs, err := tr.Compile(context.Background())
		require.NoError(t, err)
		check(t, msgs)
		msgs, err = tr.Compile(context.Background()) // from the cache
		require.NoError(t, err)
		check(t, msgs)
	})
	t.Run("CompileSeq", func(t *testing.T) {
		var msgs []tract.Message
		for m, err := range tr.CompileSeq(context.Background()) {
			require.NoError(t, err)
			msgs = append(msgs, m)
		}
		check(t, msgs)
	})
	t.Run("CommitInfo.Message", func(t *testing.T) {
		log, err := tr.Log(context.Background())
		require.NoError(t, err)
		require.Len(t, log, len(shapes))
		for i, c := range log {
			m, err := c.Message()
			require.NoError(t, err)
			assert.Equal(t, shapes[len(shapes)-1-i].json, encode(t, m))
		}
	})
}

// The same message makes the same commit whatever the order of its keys,
// and a plain message makes the commit it made before shapes existed.
func TestImport_ShapeIsCanonical(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	importOne := func(line string) (tract.Hash, *tract.CommitInfo) {
		tr := newShapeTract(t, tract.WithClock(func() time.Time { return at }))
		h, err := tr.Import(context.Background(), readLines(t, line))
		require.NoError(t, err)
		c, err := tr.Show(context.Background(), h.String())
		require.NoError(t, err)
		return h, c
	}
	a, _ := importOne(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}],"refusal":null}`)
	b, _ := importOne(`{"refusal":null,"tool_calls":[{"function":{"arguments":"{}","name":"f"},"type":"function","id":"c1"}],"role":"assistant"}`)
	assert.Equal(t, a, b, "key order and an absent content make no difference")

	plain, c := importOne(`{"role":"user","content":"hi"}`)
	assert.Empty(t, c.Meta, "a plain message has no shape")
	tr := newShapeTract(t, tract.WithClock(func() time.Time { return at }))
	h, err := tr.User(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, h, plain)
}

// A shaped commit's text is what log, show and grep read: the text parts,
// a line per other part and per tool call.
func TestImport_ShapeReadableText(t *testing.T) {
	for _, tc := range []struct{ in, text string }{
		{`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"` + dataURL(12*1024) + `"}}]}`,
			"look\n[image: data:image/png…(12 KB)]"},
		{`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}}]}`,
			"[image: https://example.com/a.png]"},
		{`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"mp3"}}]}`, "[audio: mp3, 8 B]"},
		{`{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf","file_data":"data:x"}}]}`, "[file: a.pdf (6 B)]"},
		{`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`,
			`→ tool call get_weather({"city":"Paris"})`},
		{`{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":"{}"}}]}`,
			"Let me check.\n→ tool call now({})"},
		{`{"role":"tool","content":"22C","tool_call_id":"c1"}`, "22C"},
	} {
		tr := newShapeTract(t)
		h, err := tr.Import(context.Background(), readLines(t, tc.in))
		require.NoError(t, err)
		c, err := tr.Show(context.Background(), h.String())
		require.NoError(t, err)
		assert.Equal(t, tc.text, c.Text)
		assert.NotNil(t, c.MetaValue(tract.MetaShape))
	}
}

// A shape tract cannot keep is refused with the message, its line and the
// member, never changed; nothing of the input is imported.
func TestReadMessages_UnsupportedShapes(t *testing.T) {
	const ok = `{"role":"user","content":"fine"}`
	for _, tc := range []struct {
		name, line  string
		err         string
		unsupported bool
	}{
		{"unknown part type", `{"role":"user","content":[{"type":"text","text":"a"},{"type":"refusal","refusal":"no"}]}`,
			`content[1].type "refusal" is not supported (supported: text, image_url, input_audio, file)`, true},
		{"unknown member of a part", `{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`,
			`content[0].cache_control is not supported in a "text" part (it holds only "type" and "text")`, true},
		{"member of another type", `{"role":"user","content":[{"type":"text","text":"a","image_url":{"url":"x"}}]}`,
			`content[0].image_url is not supported in a "text" part (it holds only "type" and "text")`, true},
		{"unknown member of an image", `{"role":"user","content":[{"type":"image_url","image_url":{"url":"x","alt":"cat"}}]}`,
			`content[0].image_url.alt is not supported`, true},
		{"image without url", `{"role":"user","content":[{"type":"image_url","image_url":{"detail":"low"}}]}`,
			`content[0].image_url.url is missing or empty`, false},
		{"part without its member", `{"role":"user","content":[{"type":"image_url"}]}`, `content[0].image_url is missing`, false},
		{"part without type", `{"role":"user","content":[{"text":"a"}]}`, `content[0].type is missing`, false},
		{"part not an object", `{"role":"user","content":["a"]}`, `content[0] must be an object with a type, not a string`, false},
		{"text not a string", `{"role":"user","content":[{"type":"text","text":1}]}`, `content[0].text must be a string, not a number`, false},
		{"audio without format", `{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x"}}]}`,
			`content[0].input_audio needs both data and format`, false},
		{"file without data or id", `{"role":"user","content":[{"type":"file","file":{"filename":"a"}}]}`,
			`content[0].file needs file_data or file_id`, false},
		{"content a number", `{"role":"user","content":7}`, `content must be a string, an array of parts or null, not a number`, false},
		{"content an empty array", `{"role":"user","content":[]}`, `content is an empty array: give at least one part`, false},
		{"tool call of another type", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"custom","custom":{"name":"f","input":"x"}}]}`,
			`tool_calls[0].custom is not supported`, true},
		{"tool call type custom", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"custom","function":{"name":"f","arguments":""}}]}`,
			`tool_calls[0].type "custom" is not supported (supported: function)`, true},
		{"a member's name in capitals", `{"role":"user","content":[{"type":"image_url","image_url":{"URL":"x"}}]}`,
			`content[0].image_url.URL is not supported`, true},
		{"a tool call's member in capitals", `{"role":"assistant","content":null,"tool_calls":[{"ID":"c","type":"function","function":{"name":"f","arguments":""}}]}`,
			`tool_calls[0].ID is not supported`, true},
		{"an unknown member of a function", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"","strict":true}}]}`,
			`tool_calls[0].function.strict is not supported`, true},
		{"tool call without function", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function"}]}`,
			`tool_calls[0].function is missing`, false},
		{"arguments left out", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}`,
			`tool_calls[0].function.arguments is missing (give "" for none)`, false},
		{"an empty detail", `{"role":"user","content":[{"type":"image_url","image_url":{"url":"x","detail":""}}]}`,
			`content[0].image_url.detail is empty: leave it out`, false},
		{"an empty name", `{"role":"user","content":"a","name":""}`, `name is empty: leave it out`, false},
		{"an empty tool_call_id", `{"role":"tool","content":"a","tool_call_id":""}`, `tool_call_id is empty: leave it out`, false},
		{"tool call without id", `{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`,
			`tool_calls[0].id is missing or empty`, false},
		{"tool call without name", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}`,
			`tool_calls[0].function.name is missing or empty`, false},
		{"arguments as an object", `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}`,
			`tool_calls[0].function.arguments must be a string, not object`, false},
		{"tool_calls empty", `{"role":"assistant","content":"a","tool_calls":[]}`, `tool_calls is an empty array: leave it out, or give at least one call`, false},
		{"tool_calls not an array", `{"role":"assistant","content":null,"tool_calls":{}}`, `tool_calls must be an array of tool calls, not an object`, false},
		{"name not a string", `{"role":"user","content":"a","name":5}`, `name must be a string, not a number`, false},
		{"tool_call_id not a string", `{"role":"tool","content":"a","tool_call_id":null}`, `tool_call_id must be a string, not null`, false},
		{"kind not a string", `{"role":"user","content":"a","kind":1}`, `kind must be a string, not a number (1)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := 0
			for _, e := range tract.ReadMessages(strings.NewReader(ok + "\n" + tc.line + "\n" + ok + "\n")) {
				if e != nil {
					err = e
					break
				}
				n++
			}
			require.Error(t, err)
			assert.Equal(t, 1, n)
			assert.Equal(t, "message 2 (line 2): "+tc.err, err.Error())
			assert.Equal(t, tc.unsupported, errors.Is(err, llm.ErrUnsupported))

			tr := newShapeTract(t)
			_, ierr := tr.ImportSeq(context.Background(), tract.ReadMessages(strings.NewReader(ok+"\n"+tc.line+"\n")))
			require.Error(t, ierr)
			head, herr := tr.Log(context.Background())
			require.NoError(t, herr)
			assert.Empty(t, head, "nothing imported")
		})
	}
}

// The messages a shape cannot be made of are refused by Import too, with
// the message named.
func TestImport_ShapeErrors(t *testing.T) {
	tr := newShapeTract(t)
	for _, tc := range []struct {
		name string
		msg  tract.ImportMessage
		err  string
	}{
		{"content and parts", tract.ImportMessage{Role: tract.RoleUser, Content: "a", Parts: []llm.Part{llm.TextPart("b")}},
			"message 1: content is set both as text and as parts"},
		{"unsupported part", tract.ImportMessage{Role: tract.RoleUser, Parts: []llm.Part{{Type: "video"}}},
			`message 1: content[0].type "video" is not supported`},
		{"an extra named like a field", tract.ImportMessage{Role: tract.RoleUser, Content: "a", Extra: map[string]json.RawMessage{"name": json.RawMessage(`"x"`)}},
			"message 1: name is a field of the message"},
		{"no content and no tool calls", tract.ImportMessage{Role: tract.RoleAssistant, Name: "bot"},
			"message 1: invalid text: the content is empty, null or missing (only an assistant message with tool_calls may have none)"},
		{"a shape in the metadata too", tract.ImportMessage{Role: tract.RoleUser, Content: "a", Name: "x", Meta: json.RawMessage(`{"shape":{"name":"y"}}`)},
			`message 1: metadata must be a JSON object: the metadata has a "shape" key`},
		{"a bad shape in the metadata", tract.ImportMessage{Role: tract.RoleUser, Content: "a", Meta: json.RawMessage(`{"shape":{"content":[{"type":"video"}]}}`)},
			`message 1: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.Import(context.Background(), []tract.ImportMessage{tc.msg})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
	// A valid shape given as metadata is taken as the shape.
	h, err := tr.Import(context.Background(), []tract.ImportMessage{{Role: tract.RoleUser, Content: "a", Meta: json.RawMessage(`{"shape":{"name":"y"}}`)}})
	require.NoError(t, err)
	msgs, err := tr.Compile(context.Background(), tract.CompileAt(h.String()))
	require.NoError(t, err)
	assert.Equal(t, `{"role":"user","content":"a","name":"y"}`, encode(t, msgs[len(msgs)-1]))
}

// A data: URL counts against the message size limit, not the metadata
// limit: it is content.
func TestImport_ShapeSizeLimit(t *testing.T) {
	line := `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"` + dataURL(4000) + `"}}]}`
	var err error
	for _, e := range tract.ReadMessages(strings.NewReader(line), tract.ReadLimits(tract.Limits{MessageSize: 2048, MetaSize: 8192})) {
		err = e
	}
	tl := testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
	assert.Contains(t, tl.Error(), "the message's content parts and tool calls is")

	tr := newShapeTract(t, tract.WithLimits(tract.Limits{MessageSize: 2048}))
	_, err = tr.Import(context.Background(), readLines(t, line))
	testinput.RequireTooLarge(t, err, tract.LimitMessageSize)

	big := newShapeTract(t, tract.WithLimits(tract.Limits{MessageSize: 8192, MetaSize: 1024}))
	_, err = big.Import(context.Background(), readLines(t, line))
	assert.NoError(t, err, "the metadata limit does not bind the shape")
}

// Chat sends every shape to the server exactly as Compile gives it.
func TestChat_SendsShapes(t *testing.T) {
	tr, srv := newChatServerTract(t)
	var lines []string
	for _, s := range shapes {
		lines = append(lines, s.json)
	}
	lines = append(lines, `{"role":"user","content":"and now?"}`)
	_, err := tr.Import(context.Background(), readLines(t, lines...))
	require.NoError(t, err)
	srv.Reply(llmtest.Answer("done"))
	_, err = tr.Generate(context.Background())
	require.NoError(t, err)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	require.Len(t, body.Messages, len(lines))
	for i, line := range lines {
		assert.Equal(t, line, string(body.Messages[i]))
	}
}

// An answer that calls tools is committed with its calls, streamed or
// not; the next request sends them back, with the tool's result.
func TestChat_KeepsToolCalls(t *testing.T) {
	calls := []llm.ToolCall{
		{ID: "call_9", Type: "function", Function: llm.FunctionCall{Name: "get_weather", Arguments: `{"city":"Zürich"}`}},
		{ID: "call_10", Type: "function", Function: llm.FunctionCall{Name: "get_time", Arguments: `{}`}},
	}
	for _, tc := range []struct {
		name    string
		content string
		stream  bool
		want    string
	}{
		{"calls only", "", false, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Zürich\"}"}},{"id":"call_10","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`},
		{"calls only, streamed", "", true, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Zürich\"}"}},{"id":"call_10","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`},
		{"text and calls, streamed", "Let me look.", true, `{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Zürich\"}"}},{"id":"call_10","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Reply{Content: tc.content, ToolCalls: calls}, llmtest.Answer("It is sunny."))
			var opts []tract.ChatOption
			if tc.stream {
				opts = append(opts, tract.OnDelta(func(string) {}))
			}
			res, err := tr.Chat(context.Background(), "weather and time?", opts...)
			require.NoError(t, err)
			assert.Equal(t, calls, res.ToolCalls)
			assert.Contains(t, res.Text, `→ tool call get_weather({"city":"Zürich"})`)

			msgs, err := tr.Compile(context.Background())
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			assert.Equal(t, tc.want, encode(t, msgs[1]))

			_, err = tr.Import(context.Background(), []tract.ImportMessage{
				{Role: tract.RoleTool, Content: "sunny", ToolCallID: "call_9"},
				{Role: tract.RoleTool, Content: "noon", ToolCallID: "call_10"},
			})
			require.NoError(t, err)
			_, err = tr.Generate(context.Background(), opts...)
			require.NoError(t, err)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			var body struct {
				Messages []json.RawMessage `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(reqs[1].Body, &body))
			require.Len(t, body.Messages, 4)
			assert.Equal(t, tc.want, string(body.Messages[1]))
			assert.Equal(t, `{"role":"tool","content":"sunny","tool_call_id":"call_9"}`, string(body.Messages[2]))
		})
	}
}

// A repository written with shapes passes fsck and reopens: the shape is
// ordinary metadata.
func TestImport_ShapesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.Import(context.Background(), readLines(t, shapes[2].json, shapes[7].json))
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	tr, err = tract.Open(path)
	require.NoError(t, err)
	defer tr.Close()
	rep, err := tr.Fsck(context.Background())
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	msgs, err := tr.Compile(context.Background())
	require.NoError(t, err)
	assert.Equal(t, shapes[7].json, encode(t, msgs[1]))
}

// A validated turn checks an answer's readable text, tool calls included,
// and purify re-commits the accepted answer with its calls.
func TestChat_ToolCallsThroughValidationAndPurify(t *testing.T) {
	tr, srv := newChatServerTract(t)
	call := llm.ToolCall{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}
	srv.Reply(llmtest.Answer("I think it is x."), llmtest.Reply{ToolCalls: []llm.ToolCall{call}})
	res, err := tr.Chat(context.Background(), "look it up", tract.Validate(retry.Contains("→ tool call lookup(")), tract.MaxAttempts(2))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	assert.True(t, res.Purified)
	assert.Equal(t, []llm.ToolCall{call}, res.ToolCalls)

	msgs, err := tr.Compile(context.Background())
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}}]}`, encode(t, msgs[1]))
	c, err := tr.Show(context.Background(), "HEAD")
	require.NoError(t, err)
	_, ok := c.Provenance()
	assert.True(t, ok, "the accepted answer keeps its provenance beside its shape")
}

// What Compile returns is the caller's: changing a part of it changes
// nothing that the next Compile returns.
func TestCompile_ShapesAreTheCallers(t *testing.T) {
	tr := newShapeTract(t)
	_, err := tr.Import(context.Background(), readLines(t, shapes[2].json, shapes[8].json, shapes[12].json))
	require.NoError(t, err)
	msgs, err := tr.Compile(context.Background())
	require.NoError(t, err)
	msgs[0].Parts[1].ImageURL.URL = "changed"
	msgs[0].Parts[0].Text = "changed"
	msgs[1].ToolCalls[0].ID = "changed"
	msgs[2].Extra["audio"][2] = 'X'
	again, err := tr.Compile(context.Background())
	require.NoError(t, err)
	for i, j := range []int{2, 8, 12} {
		assert.Equal(t, shapes[j].json, encode(t, again[i]))
	}
}

// ImportMessage fields that no message could be are refused when
// imported, naming the member, not when compiled.
func TestImport_ShapeFieldsChecked(t *testing.T) {
	tr := newShapeTract(t)
	for _, tc := range []struct {
		msg tract.ImportMessage
		err string
	}{
		{tract.ImportMessage{Role: tract.RoleUser, Parts: []llm.Part{}}, "message 1: content is an empty array: give at least one part"},
		{tract.ImportMessage{Role: tract.RoleAssistant, ToolCalls: []llm.ToolCall{{Type: "function", Function: llm.FunctionCall{Name: "f"}}}}, "message 1: tool_calls[0].id is missing or empty"},
		{tract.ImportMessage{Role: tract.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Function: llm.FunctionCall{Name: "f"}}}}, `message 1: tool_calls[0].type "" is not supported (supported: function)`},
	} {
		_, err := tr.Import(context.Background(), []tract.ImportMessage{tc.msg})
		assert.EqualError(t, err, "import: "+tc.err)
	}
}

// Whatever an import takes comes back from Compile as the same message:
// the same members with the same values (key order and the documented
// null content aside, which a JSON comparison ignores).
func FuzzImport_CompileGivesBack(f *testing.F) {
	for _, s := range shapes {
		f.Add(s.json)
	}
	f.Add(`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	f.Add(`{"role":"user","content":"x","x":{"b":[1.0,2],"a":"<&>"}}`)
	f.Fuzz(func(t *testing.T, line string) {
		msgs, err := testinput.Collect(tract.ReadMessages(strings.NewReader(line)))
		if err != nil || len(msgs) != 1 || (msgs[0].Kind != "" && msgs[0].Kind != tract.KindMessage) {
			return
		}
		tr, err := tract.Init("fuzz", tract.WithStore(store.NewMemory()))
		require.NoError(t, err)
		defer tr.Close()
		if _, err := tr.Import(context.Background(), msgs); err != nil {
			return // an invalid role, say
		}
		compiled, err := tr.Compile(context.Background())
		require.NoError(t, err)
		require.Len(t, compiled, 1)
		in := msgs[0]
		in.Kind, in.Meta = "", nil
		var want, got any
		require.NoError(t, json.Unmarshal([]byte(encode(t, in)), &want))
		require.NoError(t, json.Unmarshal([]byte(encode(t, compiled[0])), &got))
		require.Equal(t, want, got)
	})
}
