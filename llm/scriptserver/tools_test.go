package scriptserver_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/scriptserver"
)

const version = "2023-06-01"

// dataLines returns the data of a stream's events, one per event.
func dataLines(raw string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

// The tools and the tool choice a request offers are recorded, from
// either wire, in llm's terms.
func TestServer_RecordsToolsAndToolChoice(t *testing.T) {
	params := json.RawMessage(`{"type":"object"}`)
	cases := []struct {
		name, url, body string
		header          []string
		tools           []llm.ToolDef
		choice          llm.ToolChoice
	}{
		{"openai auto", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],` +
			`"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],"tool_choice":"auto"}`,
			nil, []llm.ToolDef{{Name: "f", Description: "d", Parameters: params}}, llm.ToolChoice{}},
		{"openai required", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required"}`,
			nil, []llm.ToolDef{{Name: "f", Parameters: params}}, llm.ToolChoice{Mode: llm.ToolChoiceRequired}},
		{"openai forced", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			nil, []llm.ToolDef{{Name: "f", Parameters: params}}, llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"}},
		{"anthropic any", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],` +
			`"tools":[{"name":"f","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}}`,
			[]string{"anthropic-version", version}, []llm.ToolDef{{Name: "f", Description: "d", Parameters: params}}, llm.ToolChoice{Mode: llm.ToolChoiceRequired}},
		{"anthropic none", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],` +
			`"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"}}`,
			[]string{"anthropic-version", version}, []llm.ToolDef{{Name: "f", Parameters: params}}, llm.ToolChoice{Mode: llm.ToolChoiceNone}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(scriptserver.Answer("ok"))
			resp, _ := post(t, srv.AnthropicURL()+tc.url, tc.body, tc.header...)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			r := srv.Requests()[0]
			assert.Equal(t, tc.tools, r.Tools)
			assert.Equal(t, tc.choice, r.ToolChoice)
		})
	}
}

// Tool calls are answered in each wire's shape, whole and streamed, the
// calls without an ID given one.
func TestServer_AnswersWithToolCalls(t *testing.T) {
	reply := scriptserver.Reply{Content: "On it.", ToolCalls: []llm.ToolCall{
		scriptserver.Call("lookup", `{"q":"ab"}`), llm.NewToolCall("mine", "now", ""),
	}}
	const user = `"messages":[{"role":"user","content":"x"}]`
	cases := []struct {
		name, url, body string
		header          []string
		want            []string // the body, or the data of each event
	}{
		{"openai", "/v1/chat/completions", `{"model":"m",` + user + `}`, nil, []string{
			`{"id":"chatcmpl-scriptserver-1","object":"chat.completion","created":1700000000,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",` +
				`"message":{"role":"assistant","content":"On it.","tool_calls":[` +
				`{"id":"call_scriptserver_1_0","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"ab\"}"}},` +
				`{"id":"mine","type":"function","function":{"name":"now","arguments":""}}]}}],` +
				`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`}},
		{"openai stream", "/v1/chat/completions", `{"model":"m","stream":true,` + user + `}`, nil, []string{
			`{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"content":"On "},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"content":"it."},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"","name":"lookup"},"id":"call_scriptserver_1_0","index":0,"type":"function"}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"q\":"},"index":0}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"ab\"}"},"index":0}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"","name":"now"},"id":"mine","index":1,"type":"function"}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""},"index":1}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""},"index":1}]},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls","index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"m","object":"chat.completion.chunk"}`,
			`[DONE]`}},
		{"anthropic", "/v1/messages", `{"model":"m","max_tokens":5,` + user + `}`, []string{"anthropic-version", version}, []string{
			`{"id":"msg_scriptserver_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","stop_sequence":null,"content":[` +
				`{"type":"text","text":"On it."},` +
				`{"type":"tool_use","id":"toolu_scriptserver_1_0","name":"lookup","input":{"q":"ab"}},` +
				`{"type":"tool_use","id":"mine","name":"now","input":{}}],` +
				`"usage":{"input_tokens":5,"output_tokens":2}}`}},
		{"anthropic stream", "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,` + user + `}`, []string{"anthropic-version", version}, []string{
			`{"message":{"content":[],"id":"msg_scriptserver_1","model":"m","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"input_tokens":5,"output_tokens":1}},"type":"message_start"}`,
			`{"type":"ping"}`,
			`{"content_block":{"text":"","type":"text"},"index":0,"type":"content_block_start"}`,
			`{"delta":{"text":"On ","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
			`{"delta":{"text":"it.","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
			`{"index":0,"type":"content_block_stop"}`,
			`{"content_block":{"id":"toolu_scriptserver_1_0","input":{},"name":"lookup","type":"tool_use"},"index":1,"type":"content_block_start"}`,
			`{"delta":{"partial_json":"{\"q\":","type":"input_json_delta"},"index":1,"type":"content_block_delta"}`,
			`{"delta":{"partial_json":"\"ab\"}","type":"input_json_delta"},"index":1,"type":"content_block_delta"}`,
			`{"index":1,"type":"content_block_stop"}`,
			`{"content_block":{"id":"mine","input":{},"name":"now","type":"tool_use"},"index":2,"type":"content_block_start"}`,
			`{"index":2,"type":"content_block_stop"}`,
			`{"delta":{"stop_reason":"tool_use","stop_sequence":null},"type":"message_delta","usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(reply)
			resp, raw := post(t, srv.AnthropicURL()+tc.url, tc.body, tc.header...)
			require.Equal(t, http.StatusOK, resp.StatusCode, raw)
			if len(tc.want) == 1 {
				assert.JSONEq(t, tc.want[0], raw)
				return
			}
			assert.Equal(t, tc.want, dataLines(raw))
		})
	}
}

// Anthropic's pairing of tool_use and tool_result blocks is checked as
// the API checks it; a request that keeps it is recorded in the OpenAI
// shape, and its rules match its tool results.
func TestServer_AnthropicToolResults(t *testing.T) {
	const (
		ask   = `{"role":"user","content":"q"}`
		calls = `{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"a","name":"f","input":{"x":1}},{"type":"tool_use","id":"b","name":"g","input":{}}]}`
	)
	body := func(msgs ...string) string {
		return `{"model":"m","max_tokens":5,"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	cases := []struct {
		name, body, problem string
	}{
		{"a result missing", body(ask, calls, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"}]}`),
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: b."},
		{"no results", body(ask, calls, `{"role":"user","content":"well?"}`),
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: a, b."},
		{"a result for no call", body(ask, calls, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"},{"type":"tool_result","tool_use_id":"b"},{"type":"tool_result","tool_use_id":"c"}]}`),
			"messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: c."},
		{"text before a result", body(ask, calls, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"},{"type":"text","text":"and"},{"type":"tool_result","tool_use_id":"b"}]}`),
			"messages.2.content.2: tool_result blocks must come first"},
		{"a call in a user message", body(`{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}`),
			"messages.0.content.0: tool_use blocks can only be in assistant messages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := scriptserver.New()
			defer srv.Close()
			resp, raw := post(t, srv.AnthropicURL()+"/v1/messages", tc.body, "anthropic-version", version)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, raw, tc.problem)
			rec := &recordingTB{TB: t}
			srv.Verify(rec)
			if assert.Len(t, rec.errs, 1) {
				assert.Contains(t, rec.errs[0], tc.problem)
			}
		})
	}
	t.Run("kept", func(t *testing.T) {
		srv := newServer(t)
		srv.When("2", scriptserver.Answer("the second result")).Otherwise(scriptserver.Answer("other"))
		results := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},` +
			`{"type":"tool_result","tool_use_id":"b","content":[{"type":"text","text":"2"}]}`
		resp, raw := post(t, srv.AnthropicURL()+"/v1/messages", body(ask, calls, results+`]}`), "anthropic-version", version)
		require.Equal(t, http.StatusOK, resp.StatusCode, raw)
		assert.Contains(t, raw, "the second result", "the rule matched a result")
		resp, raw = post(t, srv.AnthropicURL()+"/v1/messages", body(ask, calls, results+`,{"type":"text","text":"Go on."}]}`), "anthropic-version", version)
		require.Equal(t, http.StatusOK, resp.StatusCode, raw)
		assert.Contains(t, raw, "other", "the last message is the user's text")
		assert.Equal(t, []llm.Message{
			{Role: "user", Content: "q"},
			{Role: "assistant", Content: "Looking.", ToolCalls: []llm.ToolCall{llm.NewToolCall("a", "f", `{"x":1}`), llm.NewToolCall("b", "g", "{}")}},
			{Role: "tool", ToolCallID: "a", Content: "1"},
			{Role: "tool", ToolCallID: "b", Content: "2"},
			{Role: "user", Content: "Go on."},
		}, srv.Requests()[1].Messages)
	})
}
