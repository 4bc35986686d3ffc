package llm

import (
	"strings"
	"testing"
)

// fuzzAnthropic is an Anthropic client with just what the readers of
// answers use.
func fuzzAnthropic() *Anthropic {
	return &Anthropic{settings: fuzzClient().settings}
}

// checkAnthropicError is checkAnswerError for the Anthropic readers, whose
// error events carry the status their type stands for.
func checkAnthropicError(t *testing.T, err error) {
	t.Helper()
	base := baseOf(err)
	if base == nil {
		t.Fatalf("error %T (%v) is not one of the package's typed errors", err, err)
	}
	checkAnswerError(t, err, base.StatusCode)
}

func FuzzAnthropicReadStream(f *testing.F) {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	start := ev("message_start", `{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":5,"output_tokens":1}}}`)
	text := ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
	tool := ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"t","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`)
	stop := ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`)
	// Parallel calls of the caller's tools, an input in pieces and one
	// with none, beside the schema's tool.
	calls := ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"x\"}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`) +
		ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"now","input":{}}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":3}`)
	for _, s := range []string{
		start + text + calls + stop + ev("message_stop", `{"type":"message_stop"}`),
		start + tool + calls + stop,
		start + calls,
		start + ev("ping", `{"type":"ping"}`) + text + stop + ev("message_stop", `{"type":"message_stop"}`),
		start + text + stop,
		start + tool + stop,
		start + text,
		start + text + ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded `+fuzzKey+`"}}`),
		ev("error", `{"type":"error","error":"nope"}`),
		"data: {nope\n\n",
		"<!DOCTYPE html><html></html>",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var deltas []string
		resp, delivered, err := fuzzAnthropic().readStream(fuzzResponse(200, body, nil), "t", func(d string) {
			if d == "" {
				t.Fatal("empty delta delivered")
			}
			deltas = append(deltas, d)
		})
		if delivered != (len(deltas) > 0) {
			t.Fatalf("delivered = %v after %d deltas", delivered, len(deltas))
		}
		if err != nil {
			checkAnthropicError(t, err)
			return
		}
		// The content is the text's deltas, or the schema tool's: never
		// more than was delivered.
		if got := strings.Join(deltas, ""); len(resp.Content) > len(got) {
			t.Fatalf("content %q is more than the deltas delivered, %q", resp.Content, got)
		}
		if u := resp.Usage; u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Fatalf("usage does not add up: %+v", u)
		}
		checkAnthropicCalls(t, resp.ToolCalls)
	})
}

// checkAnthropicCalls checks what the readers promise of the tool calls
// they read: "function" calls, of no tool but the caller's (the schema's,
// "t", is the answer), with arguments ("{}" for none).
func checkAnthropicCalls(t *testing.T, calls []ToolCall) {
	t.Helper()
	for i, c := range calls {
		if c.Type != "function" || c.Function.Name == "t" || c.Function.Arguments == "" {
			t.Fatalf("tool call %d: %+v", i, c)
		}
	}
}

func FuzzAnthropicReadJSON(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","model":"claude","content":[{"type":"text","text":"whole"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3}}`,
		`{"type":"message","content":[{"type":"tool_use","name":"t","input":{"a":1}}],"stop_reason":"tool_use"}`,
		`{"type":"message","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":"x"}},` +
			`{"type":"tool_use","id":"toolu_2","name":"now"},{"type":"tool_use","id":"toolu_3","name":"t","input":{"ok":true}}],"stop_reason":"tool_use"}`,
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long ` + fuzzKey + `"}}`,
		`{"type":"error","error":"x"}`,
		`{"type":"completion"}`,
		`{"content":`,
		"<!DOCTYPE html>",
		" \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := fuzzAnthropic().readJSON(fuzzResponse(200, body, nil), "t")
		if err != nil {
			checkAnthropicError(t, err)
			return
		}
		if u := resp.Usage; u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Fatalf("usage does not add up: %+v", u)
		}
		checkAnthropicCalls(t, resp.ToolCalls)
	})
}
