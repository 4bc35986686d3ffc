package scriptserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/scriptserver"
)

// post sends a raw chat-completion body and returns the response and its body.
func post(t *testing.T, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// newServer starts a server that is closed, and verified, when the test
// ends.
func newServer(t *testing.T, opts ...scriptserver.Option) *scriptserver.Server {
	t.Helper()
	srv, err := scriptserver.Start(opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		srv.Close()
		if !t.Failed() {
			srv.Verify(t)
		}
	})
	return srv
}

func TestStart_ListensOnLoopback(t *testing.T) {
	srv := newServer(t)
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	assert.True(t, net.ParseIP(u.Hostname()).IsLoopback(), "%s", srv.URL())
	assert.Equal(t, "/v1", u.Path)
	assert.Equal(t, srv.AnthropicURL()+"/v1", srv.URL())
}

const hello = `{"model":"m1","messages":[{"role":"user","content":"hello there"}]}`

func TestServer_AnswersWithChatCompletion(t *testing.T) {
	srv := newServer(t)
	srv.Reply(scriptserver.Answer("hi!"))

	resp, body := post(t, srv.URL()+"/chat/completions", hello)

	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, `{
		"id": "chatcmpl-scriptserver-1", "object": "chat.completion", "created": 1700000000, "model": "m1",
		"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi!"}, "finish_reason": "stop"}],
		"usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}
	}`, body)
}

func TestServer_StreamsServerSentEvents(t *testing.T) {
	for _, includeUsage := range []bool{false, true} {
		t.Run(fmt.Sprintf("include_usage=%v", includeUsage), func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(scriptserver.Reply{Content: "a b", Usage: &llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, Model: "served"})
			body := fmt.Sprintf(`{"model":"m1","stream":true,"stream_options":{"include_usage":%v},"messages":[{"role":"user","content":"x"}]}`, includeUsage)

			resp, raw := post(t, srv.URL()+"/chat/completions", body)

			assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			var events []string
			sc := bufio.NewScanner(strings.NewReader(raw))
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					events = append(events, data)
				}
			}
			want := []string{
				`{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"served","object":"chat.completion.chunk"}`,
				`{"choices":[{"delta":{"content":"a "},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"served","object":"chat.completion.chunk"}`,
				`{"choices":[{"delta":{"content":"b"},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"served","object":"chat.completion.chunk"}`,
				`{"choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"served","object":"chat.completion.chunk"}`,
			}
			if includeUsage {
				want = append(want, `{"choices":[],"created":1700000000,"id":"chatcmpl-scriptserver-1","model":"served","object":"chat.completion.chunk","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
			}
			want = append(want, "[DONE]")
			assert.Equal(t, want, events)
		})
	}
}

func TestServer_RecordsRequestsWithoutTheKey(t *testing.T) {
	srv := newServer(t)
	srv.Reply(scriptserver.Answer("ok"))

	post(t, srv.URL()+"/chat/completions",
		`{"model":"m1","temperature":0.5,"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`,
		"Authorization", "Bearer sk-secret", "X-Custom", "yes")

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "m1", r.Model)
	assert.Equal(t, []llm.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}, r.Messages)
	assert.Equal(t, "u", r.LastMessage())
	require.NotNil(t, r.Temperature)
	assert.InDelta(t, 0.5, *r.Temperature, 1e-9)
	assert.False(t, r.Stream)
	assert.Equal(t, "Bearer [REDACTED]", r.Header.Get("Authorization"))
	assert.Equal(t, "yes", r.Header.Get("X-Custom"))
	assert.NotContains(t, fmt.Sprint(r.Header), "sk-secret")
}

func TestServer_RulesQueueAndFallback(t *testing.T) {
	srv := newServer(t)
	srv.Reply(scriptserver.Answer("first"), scriptserver.Answer("second")).
		When("steer", scriptserver.Answer("ruled"))
	ask := func(content string) string {
		_, body := post(t, srv.URL()+"/chat/completions", fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}]}`, content))
		var doc struct {
			Choices []struct{ Message llm.Message } `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
		return doc.Choices[0].Message.Content
	}
	assert.Equal(t, "first", ask("q"))
	assert.Equal(t, "ruled", ask("please steer"))
	assert.Equal(t, "second", ask("q"))
	srv.Otherwise(scriptserver.Answer("fallback"))
	assert.Equal(t, "fallback", ask("q"))
}

func TestServer_ServesErrors(t *testing.T) {
	tests := []struct {
		name       string
		reply      scriptserver.Reply
		wantStatus int
		wantHeader [2]string
		wantBody   string
	}{
		{"429", scriptserver.RateLimited(1500 * time.Millisecond), 429, [2]string{"Retry-After", "2"}, `"type":"rate_limit_error"`},
		{"500", scriptserver.Error(500, "boom"), 500, [2]string{"Content-Type", "application/json"}, `"message":"boom"`},
		{"401", scriptserver.Unauthorized(), 401, [2]string{"Content-Type", "application/json"}, `Incorrect API key provided: sk-wrong.`},
		{"HTML", scriptserver.HTML(), 200, [2]string{"Content-Type", "text/html; charset=utf-8"}, "<!DOCTYPE html>"},
		{"context length", scriptserver.ContextLengthExceeded(), 400, [2]string{"Content-Type", "application/json"}, `"code":"context_length_exceeded"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(tt.reply)
			resp, body := post(t, srv.URL()+"/chat/completions", hello, "Authorization", "Bearer sk-wrong")
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			assert.Equal(t, tt.wantHeader[1], resp.Header.Get(tt.wantHeader[0]))
			assert.Contains(t, body, tt.wantBody)
		})
	}
}

func TestServer_TruncatedJSON(t *testing.T) {
	srv := newServer(t)
	srv.Reply(scriptserver.Truncated("some answer"))
	resp, body := post(t, srv.URL()+"/chat/completions", hello)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, json.Valid([]byte(body)))
	assert.True(t, strings.HasPrefix(body, `{"choices":`), body)
}

func TestServer_WithAPIKeyRejectsOtherKeys(t *testing.T) {
	srv := newServer(t, scriptserver.WithAPIKey("sk-good"))
	srv.Reply(scriptserver.Answer("ok"))

	resp, body := post(t, srv.URL()+"/chat/completions", hello)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "You didn't provide an API key.")

	resp, _ = post(t, srv.URL()+"/chat/completions", hello, "Authorization", "Bearer sk-good")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, srv.Requests(), 2)
}

// recordingTB captures the failures Verify reports.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestServer_VerifyReportsUnusedAndUnscripted(t *testing.T) {
	srv := scriptserver.New()
	defer srv.Close()
	srv.Reply(scriptserver.Answer("used"), scriptserver.Answer("never used")).When("nobody says this", scriptserver.Answer("x"))
	post(t, srv.URL()+"/chat/completions", hello)
	post(t, srv.URL()+"/chat/completions", hello)
	resp, body := post(t, srv.URL()+"/chat/completions", hello)
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode, "unscripted; 501 so clients do not retry")
	assert.Contains(t, body, `no reply scripted for this request (last message \"hello there\")`)
	resp, _ = post(t, srv.URL()+"/models", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	rec := &recordingTB{TB: t}
	srv.Verify(rec)
	assert.Equal(t, []string{
		`scriptserver: rule When("nobody says this") never matched`,
		`scriptserver: unscripted request 3, last message "hello there"`,
		`scriptserver: unexpected request POST /v1/models (want POST /v1/chat/completions)`,
	}, rec.errs)

	srv2 := scriptserver.New()
	defer srv2.Close()
	srv2.Reply(scriptserver.Answer("left over"))
	rec = &recordingTB{TB: t}
	srv2.Verify(rec)
	assert.Equal(t, []string{`scriptserver: scripted reply never consumed: answer "left over"`}, rec.errs)
}

func TestServer_CloseEndsPendingDelays(t *testing.T) {
	srv := scriptserver.New()
	srv.Reply(scriptserver.Reply{Content: "slow", Delay: time.Hour})
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader([]byte(hello)))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, 5*time.Millisecond)

	start := time.Now()
	srv.Close()
	srv.Close() // twice is fine
	assert.Less(t, time.Since(start), 5*time.Second)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("request still pending after Close")
	}
}
