package scriptserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/scriptserver"
)

func TestServer_AnthropicMessage(t *testing.T) {
	srv := newServer(t)
	srv.Reply(scriptserver.Answer("hi!"))

	resp, body := post(t, srv.AnthropicURL()+"/v1/messages",
		`{"model":"claude-x","max_tokens":10,"system":"be kind","messages":[{"role":"user","content":[{"type":"text","text":"hello there"}]}]}`,
		"anthropic-version", "2023-06-01")

	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{
		"id": "msg_scriptserver_1", "type": "message", "role": "assistant", "model": "claude-x",
		"content": [{"type": "text", "text": "hi!"}], "stop_reason": "end_turn", "stop_sequence": null,
		"usage": {"input_tokens": 13, "output_tokens": 1}
	}`, body)
	r := srv.Requests()[0]
	assert.Equal(t, "be kind", r.System)
	assert.Equal(t, "hello there", r.LastMessage())
}

// A request Anthropic would refuse gets its 400, and Verify reports it.
func TestServer_AnthropicRefusesWhatTheAPIRefuses(t *testing.T) {
	cases := []struct {
		name, body string
		header     []string
		want       string
	}{
		{"no version", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, nil, "anthropic-version: header is required"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, []string{"anthropic-version", "2023-06-01"}, "max_tokens: Field required"},
		{"roles repeat", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}`,
			[]string{"anthropic-version", "2023-06-01"}, "roles in a row"},
		{"system role", `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`,
			[]string{"anthropic-version", "2023-06-01"}, "Input should be 'user' or 'assistant'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := scriptserver.New()
			defer srv.Close()
			resp, body := post(t, srv.AnthropicURL()+"/v1/messages", tc.body, tc.header...)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, body, `"type":"invalid_request_error"`)
			assert.Contains(t, body, tc.want)
			rec := &recordingTB{TB: t}
			srv.Verify(rec)
			if assert.Len(t, rec.errs, 1) {
				assert.Contains(t, rec.errs[0], tc.want)
			}
		})
	}
}
