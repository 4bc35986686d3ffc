package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

var weather = llm.ToolCall{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}

// messageCases are messages and their JSON, in the documented order.
var messageCases = []struct {
	name string
	msg  llm.Message
	json string
}{
	{"text", llm.Message{Role: "user", Content: "hi"}, `{"role":"user","content":"hi"}`},
	{"empty text", llm.Message{Role: "assistant"}, `{"role":"assistant","content":""}`},
	{"name", llm.Message{Role: "user", Content: "hi", Name: "alice"}, `{"role":"user","content":"hi","name":"alice"}`},
	{"parts", llm.Message{Role: "user", Parts: []llm.Part{llm.TextPart("look <here>"), llm.ImagePart("https://x/a.png", "low")}},
		`{"role":"user","content":[{"type":"text","text":"look <here>"},{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}}]}`},
	{"empty text part", llm.Message{Role: "user", Parts: []llm.Part{llm.TextPart("")}}, `{"role":"user","content":[{"type":"text","text":""}]}`},
	{"audio and file", llm.Message{Role: "user", Parts: []llm.Part{
		{Type: llm.PartInputAudio, InputAudio: &llm.InputAudio{Data: "AAAA", Format: "wav"}},
		{Type: llm.PartFile, File: &llm.File{Filename: "a.pdf", FileData: "data:application/pdf;base64,AA=="}},
		{Type: llm.PartFile, File: &llm.File{FileID: "file-1"}},
	}}, `{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}},{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,AA=="}},{"type":"file","file":{"file_id":"file-1"}}]}`},
	{"tool calls only", llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{weather}},
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
	{"text and tool calls", llm.Message{Role: "assistant", Content: "ok", ToolCalls: []llm.ToolCall{weather}},
		`{"role":"assistant","content":"ok","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
	{"tool result", llm.Message{Role: "tool", Content: "22C", ToolCallID: "call_1"}, `{"role":"tool","content":"22C","tool_call_id":"call_1"}`},
	{"extra members, sorted", llm.Message{Role: "assistant", Content: "ok", Extra: map[string]json.RawMessage{"refusal": json.RawMessage(`null`), "annotations": json.RawMessage(`[]`)}},
		`{"role":"assistant","content":"ok","annotations":[],"refusal":null}`},
}

func TestMessage_JSON(t *testing.T) {
	for _, tc := range messageCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.msg.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tc.json, string(b))

			var back llm.Message
			require.NoError(t, json.Unmarshal([]byte(tc.json), &back))
			assert.Equal(t, tc.msg, back)
		})
	}
	t.Run("json.Marshal escapes HTML as usual", func(t *testing.T) {
		b, err := json.Marshal(llm.Message{Role: "user", Content: "<b>"})
		require.NoError(t, err)
		assert.Equal(t, `{"role":"user","content":"\u003cb\u003e"}`, string(b))
	})
	t.Run("absent and null content", func(t *testing.T) {
		for _, in := range []string{`{"role":"assistant"}`, `{"role":"assistant","content":null}`} {
			var m llm.Message
			require.NoError(t, json.Unmarshal([]byte(in), &m))
			assert.Equal(t, "assistant", m.Role)
			assert.Empty(t, m.Content)
			assert.Nil(t, m.Parts)
		}
	})
}

func TestMessage_MarshalRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  llm.Message
		err  string
	}{
		{"content and parts", llm.Message{Role: "user", Content: "a", Parts: []llm.Part{llm.TextPart("b")}}, "content is set both as text and as parts"},
		{"unknown part type", llm.Message{Role: "user", Parts: []llm.Part{{Type: "video"}}}, `content[0].type "video" is not supported (supported: text, image_url, input_audio, file)`},
		{"part without its member", llm.Message{Role: "user", Parts: []llm.Part{llm.TextPart("a"), {Type: llm.PartImageURL}}}, "content[1].image_url is missing"},
		{"extra named like a field", llm.Message{Role: "user", Content: "a", Extra: map[string]json.RawMessage{"tool_calls": json.RawMessage(`[]`)}}, "tool_calls is a field of the message and cannot be an extra member"},
		{"extra not JSON", llm.Message{Role: "user", Content: "a", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}, "x is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.msg.MarshalJSON()
			var fe *llm.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.err, err.Error())
		})
	}
}

func TestMessage_Text(t *testing.T) {
	for _, tc := range []struct {
		msg  llm.Message
		want string
	}{
		{llm.Message{Role: "user", Content: "plain"}, "plain"},
		{llm.Message{Role: "user", Parts: []llm.Part{llm.TextPart("a"), llm.ImagePart("data:image/png;base64,"+strings.Repeat("A", 12*1024), "")}}, "a\n[image: data:image/png…(12 KB)]"},
		{llm.Message{Role: "user", Parts: []llm.Part{llm.ImagePart("https://example.com/"+strings.Repeat("x", 300), "")}}, "[image: https://example.com/" + strings.Repeat("x", 179) + "…]"},
		{llm.Message{Role: "user", Parts: []llm.Part{{Type: llm.PartInputAudio, InputAudio: &llm.InputAudio{Data: strings.Repeat("A", 3<<20), Format: "wav"}}}}, "[audio: wav, 3.0 MB]"},
		{llm.Message{Role: "user", Parts: []llm.Part{{Type: llm.PartFile, File: &llm.File{FileID: "file-1"}}}}, "[file: file-1]"},
		{llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{weather}}, `→ tool call get_weather({"city":"Paris"})`},
		{llm.Message{Role: "assistant", Content: "Sure.", ToolCalls: []llm.ToolCall{weather, weather}}, "Sure.\n→ tool call get_weather({\"city\":\"Paris\"})\n→ tool call get_weather({\"city\":\"Paris\"})"},
	} {
		assert.Equal(t, tc.want, tc.msg.Text())
	}
}

// The client sends every shape exactly as Message writes it.
func TestOpenAI_SendsEveryShape(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	c, _ := newClient(t, srv.URL())
	var msgs []llm.Message
	var want []string
	for _, tc := range messageCases {
		if tc.msg.Content == "" && tc.msg.Parts == nil && tc.msg.ToolCalls == nil {
			continue
		}
		msgs = append(msgs, tc.msg)
		want = append(want, tc.json)
	}
	_, err := c.Complete(context.Background(), llm.Request{Messages: msgs})
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, string(reqs[0].Body), `"messages":[`+strings.Join(want, ",")+`]`)
	assert.Equal(t, msgs, reqs[0].Messages, "the server decodes what was sent")
}

func TestOpenAI_RefusesAMessageItCannotWrite(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, _ := newClient(t, srv.URL())
	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Parts: []llm.Part{{Type: "video"}}}}})
	require.ErrorIs(t, err, llm.ErrUnsupported)
	assert.Empty(t, srv.Requests())
}

// Tool calls in an answer come back whole, streamed or not.
func TestOpenAI_AnswersWithToolCalls(t *testing.T) {
	calls := []llm.ToolCall{weather, {ID: "call_2", Type: "function", Function: llm.FunctionCall{Name: "now", Arguments: "{}"}}}
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Reply{ToolCalls: calls})
		c, _ := newClient(t, srv.URL())
		req := llm.Request{Messages: userMsg("weather?")}
		if stream {
			req.OnDelta = func(string) {}
		}
		resp, err := c.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, calls, resp.ToolCalls)
		assert.Equal(t, "", resp.Content)
		assert.Equal(t, "tool_calls", resp.FinishReason)
		assert.Equal(t, llm.Message{Role: "assistant", ToolCalls: calls}, resp.Message())
	}
}

// Servers differ in how they send tool calls; the client takes them all.
func TestOpenAI_ToolCallVariants(t *testing.T) {
	const done = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name, body, ct string
		want           []llm.ToolCall
		err            string
	}{
		{"whole answer with indexes and extra members",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`,
			"application/json", []llm.ToolCall{weather}, ""},
		{"whole answer with the arguments as an object (llama.cpp, TGI)",
			`{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{ "city": "Paris" }}},` +
				`{"id":"call_2","type":"function","function":{"name":"now","arguments":null}}]},"finish_reason":"tool_calls"}]}`,
			"application/json", []llm.ToolCall{weather, {ID: "call_2", Type: "function", Function: llm.FunctionCall{Name: "now"}}}, ""},
		{"whole answer without type",
			`{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"call_1","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`,
			"application/json", []llm.ToolCall{weather}, ""},
		{"stream without indexes, a call per chunk",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}}]}\n\n" + done,
			"text/event-stream", []llm.ToolCall{weather}, ""},
		{"stream with interleaved calls",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\"}},{\"index\":1,\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{}\"}},{\"index\":0,\"function\":{\"arguments\":\"\\\"Paris\\\"}\"}}]}}]}\n\n" + done,
			"text/event-stream", []llm.ToolCall{weather, {ID: "call_2", Type: "function", Function: llm.FunctionCall{Name: "now", Arguments: "{}"}}}, ""},
		{"stream that repeats the id, type and name in every piece",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\\\"Paris\\\"}\"}}]}}]}\n\n" + done,
			"text/event-stream", []llm.ToolCall{weather}, ""},
		{"stream that skips an index",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"c\",\"function\":{\"name\":\"f\"}}]}}]}\n\n" + done,
			"text/event-stream", nil, "tool call index 2 skips calls (0 so far)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Body: tc.body, ContentType: tc.ct})
			c, _ := newClient(t, srv.URL(), llm.WithMaxRetries(0))
			resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("x"), OnDelta: func(string) {}})
			if tc.err != "" {
				var bad *llm.BadResponseError
				require.True(t, errors.As(err, &bad), "%v", err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.ToolCalls)
		})
	}
}

// A clone shares nothing with its message: changing every member of the
// copy leaves the original as it was.
func TestMessage_CloneSharesNothing(t *testing.T) {
	orig := llm.Message{
		Role: "user",
		Parts: []llm.Part{
			{Type: llm.PartImageURL, ImageURL: &llm.ImageURL{URL: "data:a"}},
			{Type: llm.PartInputAudio, InputAudio: &llm.InputAudio{Data: "d", Format: "wav"}},
			{Type: llm.PartFile, File: &llm.File{Filename: "f"}},
		},
		ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function"}},
		Extra:     map[string]json.RawMessage{"x_note": json.RawMessage(`"ada"`)},
	}
	want, err := json.Marshal(orig)
	require.NoError(t, err)

	c := orig.Clone()
	c.Parts[0].ImageURL.URL = "changed"
	c.Parts[1].InputAudio.Data = "changed"
	c.Parts[2].File.Filename = "changed"
	c.Parts[0].Type = "changed"
	c.ToolCalls[0].ID = "changed"
	c.Extra["x_note"][1] = 'X'
	c.Extra["other"] = json.RawMessage(`1`)

	got, err := json.Marshal(orig)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}
