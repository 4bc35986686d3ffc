package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/loopback"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

const testKey = "sk-test-0123456789abcdef"

// sleeps records the waits between retries instead of sleeping.
type sleeps struct {
	mu    sync.Mutex // guards waits
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newClient returns a client for srv that records its waits and uses the
// full backoff ceiling as its "random" jitter.
func newClient(t *testing.T, baseURL string, opts ...llm.Option) (*llm.OpenAI, *sleeps) {
	t.Helper()
	s := &sleeps{}
	all := append([]llm.Option{
		llm.WithBaseURL(baseURL),
		llm.WithModel("test-model"),
		llm.WithSleep(s.sleep),
		llm.WithJitter(func(ceiling time.Duration) time.Duration { return ceiling }),
	}, opts...)
	c, err := llm.NewOpenAI(all...)
	require.NoError(t, err)
	return c, s
}

func userMsg(text string) []llm.Message {
	return []llm.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: text}}
}

func TestOpenAI_CompleteSendsRequestAndParsesAnswer(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithAPIKey(testKey))
	srv.Reply(llmtest.Answer("Hello there."))
	c, _ := newClient(t, srv.URL(), llm.WithAPIKey(testKey))
	temp := 0.25

	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("Say hello."), Temperature: &temp})
	require.NoError(t, err)

	assert.Equal(t, "Hello there.", resp.Content)
	assert.Equal(t, "test-model", resp.Model)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Positive(t, resp.Usage.PromptTokens)
	assert.Positive(t, resp.Usage.CompletionTokens)
	assert.Equal(t, resp.Usage.PromptTokens+resp.Usage.CompletionTokens, resp.Usage.TotalTokens)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "test-model", r.Model)
	assert.Equal(t, userMsg("Say hello."), r.Messages)
	require.NotNil(t, r.Temperature)
	assert.InDelta(t, 0.25, *r.Temperature, 1e-9)
	assert.False(t, r.Stream)
	assert.Equal(t, "Bearer [REDACTED]", r.Header.Get("Authorization"), "key sent (and accepted by WithAPIKey)")
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, llm.DefaultUserAgent, r.Header.Get("User-Agent"))

	var raw map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &raw))
	assert.Equal(t, false, raw["stream"])
	assert.NotContains(t, raw, "stream_options")
}

func TestOpenAI_OmitsTemperatureAndUsesRequestModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	c, _ := newClient(t, srv.URL())

	resp, err := c.Complete(context.Background(), llm.Request{Model: "other-model", Messages: userMsg("hi")})
	require.NoError(t, err)
	assert.Equal(t, "other-model", resp.Model)

	r := srv.Requests()[0]
	assert.Equal(t, "other-model", r.Model)
	assert.Nil(t, r.Temperature)
	assert.NotContains(t, string(r.Body), "temperature")
}

func TestOpenAI_LocalServerNeedsNoKey(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	// A trailing slash on the base URL is tolerated.
	c, _ := newClient(t, srv.URL()+"/")

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	require.NoError(t, err)
	r := srv.Requests()[0]
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Empty(t, r.Header.Values("Authorization"))
}

func TestOpenAI_Streams(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("one two three four"))
	c, _ := newClient(t, srv.URL())
	var deltas []string

	resp, err := c.Complete(context.Background(), llm.Request{
		Messages: userMsg("count"),
		OnDelta:  func(d string) { deltas = append(deltas, d) },
	})
	require.NoError(t, err)

	assert.Equal(t, []string{"one ", "two ", "three ", "four"}, deltas)
	assert.Equal(t, "one two three four", resp.Content)
	assert.Equal(t, "test-model", resp.Model)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Positive(t, resp.Usage.TotalTokens, "usage from the final chunk")

	r := srv.Requests()[0]
	assert.True(t, r.Stream)
	assert.True(t, r.IncludeUsage)
	assert.Equal(t, "text/event-stream", r.Header.Get("Accept"))
}

// Servers differ in small ways; the stream parser takes them all.
func TestOpenAI_StreamVariants(t *testing.T) {
	chunk := func(content, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return fmt.Sprintf(`{"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`, content, f)
	}
	tests := []struct {
		name string
		body string
		want string
	}{
		{"CRLF, comments and no space after data:",
			": keep-alive\r\n\r\ndata:" + chunk("a", "") + "\r\n\r\nevent: x\r\ndata: " + chunk("b", "stop") + "\r\n\r\ndata: [DONE]\r\n\r\n", "ab"},
		{"finish_reason but no [DONE]",
			"data: " + chunk("a", "") + "\n\ndata: " + chunk("b", "length") + "\n\n", "ab"},
		{"other choice indexes ignored",
			"data: " + chunk("a", "") + "\n\n" + `data: {"choices":[{"index":1,"delta":{"content":"zzz"}}]}` + "\n\ndata: " + chunk("", "stop") + "\n\ndata: [DONE]\n", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Body: tt.body, ContentType: "text/event-stream"})
			c, _ := newClient(t, srv.URL())
			var got strings.Builder
			resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("x"), OnDelta: func(d string) { got.WriteString(d) }})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Content)
			assert.Equal(t, tt.want, got.String())
			assert.NotEmpty(t, resp.FinishReason)
		})
	}
}

// A stream whose text passes 32 MiB is cut there, as a body is: a
// runaway server cannot fill memory one chunk at a time.
func TestOpenAI_StreamLongerThanTheBodyLimit(t *testing.T) {
	chunk := `data: {"model":"m","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("a", 3<<20) + `"}}]}` + "\n\n"
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{Body: strings.Repeat(chunk, 11) + "data: [DONE]\n\n", ContentType: "text/event-stream"})
	c, _ := newClient(t, srv.URL())
	got := 0
	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("x"), OnDelta: func(d string) { got += len(d) }})
	var bre *llm.BadResponseError
	require.ErrorAs(t, err, &bre)
	assert.Equal(t, "streamed answer longer than 33554432 bytes", bre.Reason)
	assert.Equal(t, 10*3<<20, got, "the deltas up to the limit were delivered")
}

func TestOpenAI_StreamRequestAnsweredWithPlainJSON(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{Body: `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`})
	c, _ := newClient(t, srv.URL())
	var deltas []string

	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("x"), OnDelta: func(d string) { deltas = append(deltas, d) }})
	require.NoError(t, err)
	assert.Equal(t, "whole", resp.Content)
	assert.Equal(t, []string{"whole"}, deltas)
}

func TestNewOpenAI_MissingConfigNamesTheVariable(t *testing.T) {
	const (
		noKey   = "no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs none)"
		noModel = "no model given"
	)
	tests := []struct {
		name    string
		env     map[string]string
		opts    []llm.Option
		want    []string
		notWant []string
	}{
		{"nothing set", nil, nil, []string{noKey, noModel}, nil},
		{"key only", map[string]string{"OPENAI_API_KEY": testKey}, nil, []string{noModel}, []string{noKey}},
		{"model only", nil, []llm.Option{llm.WithModel("m")}, []string{noKey}, []string{noModel}},
		{"local base URL, no key, no model", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, nil, []string{noModel}, []string{noKey}},
		{"empty flag does not count", map[string]string{"OPENAI_API_KEY": testKey}, []llm.Option{llm.WithModel("")}, []string{noModel}, nil},
		{"bad base URL", map[string]string{"OPENAI_BASE_URL": "localhost:11434"}, []llm.Option{llm.WithModel("m")}, []string{`invalid base URL "localhost:11434"`, "OPENAI_BASE_URL"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			c, err := llm.NewOpenAIFromEnv(getenv, tt.opts...)
			require.Error(t, err)
			assert.Nil(t, c)
			var ce *llm.ConfigError
			assert.ErrorAs(t, err, &ce)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, err.Error(), w)
			}
		})
	}
}

func TestNewOpenAIFromEnv_OptionsOverrideEnvironment(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": " " + testKey + "\n", "OPENAI_BASE_URL": "http://localhost:8080/v1/"}
	getenv := func(k string) string { return env[k] }

	c, err := llm.NewOpenAIFromEnv(getenv, llm.WithModel("m"))
	require.NoError(t, err)
	assert.Equal(t, "m", c.Model())
	assert.Equal(t, "http://localhost:8080/v1", c.BaseURL())

	c, err = llm.NewOpenAIFromEnv(getenv, llm.WithModel("m"), llm.WithBaseURL("http://localhost:9090/v1"))
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:9090/v1", c.BaseURL())

	c, err = llm.NewOpenAIFromEnv(getenv, llm.WithModel("m"), llm.WithBaseURL(""))
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:8080/v1", c.BaseURL(), "an empty option leaves the environment's value")
}

// A refused connection is retried once, not as often as a server
// error: a server that is not running does not start within the backoff.
func TestOpenAI_UnreachableBaseURLIsTransportErrorAfterOneRetry(t *testing.T) {
	var events []llm.RetryEvent
	c, s := newClient(t, "http://"+closedAddr(t)+"/v1", llm.WithAPIKey(testKey),
		llm.WithOnRetry(func(e llm.RetryEvent) { events = append(events, e) }))

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

	var te *llm.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 2, te.Attempts)
	assert.Equal(t, llm.SetupUnreachable, te.Setup)
	assert.Contains(t, err.Error(), "after 2 attempts")
	assert.Contains(t, err.Error(), "connection to the model server failed")
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.NotContains(t, err.Error(), testKey)
	assert.Equal(t, []time.Duration{500 * time.Millisecond}, s.all())
	require.Len(t, events, 1)
	assert.Equal(t, 1, events[0].Attempt)
	assert.ErrorAs(t, events[0].Err, &te)
}

func TestOpenAI_BackoffCappedAndBounded(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Error(503, "busy"))
	c, s := newClient(t, srv.URL(), llm.WithMaxRetries(6), llm.WithBackoff(time.Second, 5*time.Second))
	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after 7 attempts")
	// Exponential backoff: base doubling up to the cap, jitter pinned to the ceiling.
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}, s.all())
}

func TestOpenAI_BadResponses(t *testing.T) {
	tests := []struct {
		name        string
		reply       llmtest.Reply
		stream      bool
		wantReason  string
		wantSnippet string
	}{
		{"HTML page", llmtest.HTML(), false, "HTML page instead of JSON", "<!DOCTYPE html> <html>"},
		{"HTML page to a stream request", llmtest.HTML(), true, "HTML page instead of JSON", "<!DOCTYPE html>"},
		{"truncated JSON", llmtest.Truncated("a long enough answer to cut"), false, "invalid JSON: unexpected end of JSON input", `{"choices":`},
		{"empty body", llmtest.Reply{Body: " \n"}, false, "empty body", ""},
		{"no choices", llmtest.Reply{Body: `{"model":"m","choices":[]}`}, false, "no choices", `{"model":"m","choices":[]}`},
		{"truncated stream", llmtest.Truncated("one two three four"), true, "stream truncated", `"content":"two "`},
		{"garbage in stream", llmtest.Reply{Body: "data: {nope\n\n", ContentType: "text/event-stream"}, true, "invalid JSON in stream chunk", "{nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(tt.reply)
			c, _ := newClient(t, srv.URL())
			req := llm.Request{Messages: userMsg("hi")}
			if tt.stream {
				req.OnDelta = func(string) {}
			}

			_, err := c.Complete(context.Background(), req)

			var bre *llm.BadResponseError
			require.ErrorAs(t, err, &bre)
			assert.Contains(t, bre.Reason, tt.wantReason)
			assert.Contains(t, bre.Snippet, tt.wantSnippet)
			assert.LessOrEqual(t, len([]rune(bre.Snippet)), 121)
			assert.Contains(t, err.Error(), "bad response from the model server")
			assert.Equal(t, 1, bre.Attempts)
			assert.Len(t, srv.Requests(), 1, "bad responses are not retried")
		})
	}
}

func TestOpenAI_UnauthorizedNotRetriedAndKeyRedacted(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithAPIKey("sk-the-right-one"))
	c, s := newClient(t, srv.URL(), llm.WithAPIKey(testKey))

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

	var ae *llm.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusUnauthorized, ae.StatusCode)
	assert.Equal(t, 1, ae.Attempts)
	assert.Len(t, srv.Requests(), 1)
	assert.Empty(t, s.all())
	assert.NotContains(t, err.Error(), testKey, "the server echoed the key; the error must not")
	assert.Contains(t, err.Error(), "Incorrect API key provided: [REDACTED]")
	assert.Contains(t, err.Error(), "OPENAI_API_KEY")
}

// Wherever the server puts the key, it does not reach the error text.
func TestOpenAI_KeyRedactedFromEveryError(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"403", llmtest.Error(http.StatusForbidden, "key "+testKey+" may not use this model")},
		{"500 storm", llmtest.Error(http.StatusInternalServerError, "upstream rejected "+testKey)},
		{"HTML", llmtest.Reply{Body: "<html>Bearer " + testKey + "</html>", ContentType: "text/html"}},
		{"plain text 502", llmtest.Reply{Status: http.StatusBadGateway, Body: "bad gateway for " + testKey, ContentType: "text/plain"}},
		{"string error", llmtest.Reply{Status: http.StatusNotFound, Body: `{"error":"model not found for ` + testKey + `"}`}},
		{"invalid JSON", llmtest.Reply{Body: `{"key":"` + testKey + `"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithoutVerify())
			srv.Otherwise(tt.reply)
			c, _ := newClient(t, srv.URL(), llm.WithAPIKey(testKey))
			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), testKey)
			assert.Contains(t, err.Error(), "[REDACTED]")
		})
	}
}

func TestOpenAI_RetriesAfter429HonouringRetryAfter(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.RateLimited(7*time.Second), llmtest.Answer("finally"))
	c, s := newClient(t, srv.URL())

	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	require.NoError(t, err)
	assert.Equal(t, "finally", resp.Content)
	assert.Equal(t, []time.Duration{7 * time.Second}, s.all())
	assert.Len(t, srv.Requests(), 2)
}

func TestOpenAI_RetryAfterIsCapped(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.RateLimited(time.Hour), llmtest.Answer("ok"))
	c, s := newClient(t, srv.URL())

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{llm.MaxRetryAfter}, s.all())
}

func TestOpenAI_RateLimitExhaustsRetries(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.RateLimited(3 * time.Second))
	c, s := newClient(t, srv.URL())

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

	var rle *llm.RateLimitError
	require.ErrorAs(t, err, &rle)
	assert.Equal(t, 3*time.Second, rle.RetryAfter)
	assert.Equal(t, 5, rle.Attempts)
	assert.Len(t, srv.Requests(), 5)
	assert.Len(t, s.all(), 4)
	assert.Contains(t, err.Error(), "rate limited by the model server (HTTP 429) after 5 attempts")
}

func TestOpenAI_ServerErrorStormExhaustsRetries(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Error(http.StatusInternalServerError, "The server had an error while processing your request."))
	c, _ := newClient(t, srv.URL(), llm.WithMaxRetries(2))

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

	var se *llm.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusInternalServerError, se.StatusCode)
	assert.Equal(t, 3, se.Attempts)
	assert.Len(t, srv.Requests(), 3)
	assert.Equal(t, "model server error (HTTP 500) after 3 attempts: The server had an error while processing your request.", err.Error())
	var base *llm.APIError
	require.ErrorAs(t, err, &base, "every typed error unwraps to its APIError")
	assert.Equal(t, 3, base.Attempts)
}

func TestOpenAI_RetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"500", llmtest.Error(500, "oops")},
		{"502 HTML page", llmtest.Reply{Status: 502, Body: "<html>502 Bad Gateway</html>", ContentType: "text/html"}},
		{"503", llmtest.Error(503, "overloaded")},
		{"504", llmtest.Error(504, "timeout")},
		{"408", llmtest.Error(408, "request timeout")},
		{"connection dropped", llmtest.Hangup()},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				srv := llmtest.NewServer(t)
				srv.Reply(tt.reply, llmtest.Answer("recovered"))
				c, s := newClient(t, srv.URL())
				req := llm.Request{Messages: userMsg("hi")}
				if stream {
					req.OnDelta = func(string) {}
				}
				resp, err := c.Complete(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, "recovered", resp.Content)
				assert.Len(t, srv.Requests(), 2)
				assert.Equal(t, []time.Duration{llm.DefaultBackoff}, s.all())
			})
		}
	}
}

func TestOpenAI_PermanentFailuresNotRetried(t *testing.T) {
	quota := llmtest.Reply{Status: 429, Body: `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`}
	llamaCpp := llmtest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`}
	tests := []struct {
		name   string
		reply  llmtest.Reply
		target any
		status int
	}{
		{"context length", llmtest.ContextLengthExceeded(), new(*llm.ContextLengthError), 400},
		{"llama.cpp context size", llamaCpp, new(*llm.ContextLengthError), 400},
		{"400", llmtest.Error(400, "Invalid value for 'temperature'"), new(*llm.APIError), 400},
		{"401", llmtest.Unauthorized(), new(*llm.AuthError), 401},
		{"403", llmtest.Error(403, "forbidden"), new(*llm.AuthError), 403},
		{"404", llmtest.Error(404, "The model `nope` does not exist"), new(*llm.APIError), 404},
		{"501", llmtest.Error(501, "not implemented"), new(*llm.ServerError), 501},
		{"quota", quota, new(*llm.RateLimitError), 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(tt.reply)
			c, s := newClient(t, srv.URL())

			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

			require.ErrorAs(t, err, tt.target)
			var base *llm.APIError
			require.ErrorAs(t, err, &base)
			assert.Equal(t, tt.status, base.StatusCode)
			assert.Equal(t, 1, base.Attempts)
			assert.NotContains(t, err.Error(), "attempts")
			assert.Len(t, srv.Requests(), 1)
			assert.Empty(t, s.all())
		})
	}
}

func TestOpenAI_ContextLengthErrorMessage(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.ContextLengthExceeded())
	c, _ := newClient(t, srv.URL())

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	var cle *llm.ContextLengthError
	require.ErrorAs(t, err, &cle)
	assert.Equal(t, "context_length_exceeded", cle.Code)
	assert.Contains(t, err.Error(), "context length exceeded (HTTP 400): This model's maximum context length is 8192 tokens.")
}

// A stream that breaks after part of the answer was shown is not retried:
// the caller already printed those words.
func TestOpenAI_StreamNotRetriedAfterDelta(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Reply(llmtest.Reply{Content: "one two three four", Truncate: true, Hangup: true}, llmtest.Answer("never sent"))
	c, s := newClient(t, srv.URL())
	var got strings.Builder

	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), OnDelta: func(d string) { got.WriteString(d) }})

	var te *llm.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "one two ", got.String())
	assert.Len(t, srv.Requests(), 1)
	assert.Empty(t, s.all())
	assert.Equal(t, 1, srv.Remaining())
}

func TestOpenAI_ContextCancelledDuringSlowResponse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Content: "too late", Delay: time.Minute})
			c, _ := newClient(t, srv.URL())
			ctx, cancel := context.WithCancel(context.Background())
			go func() { // cancel once the server holds the request
				for len(srv.Requests()) == 0 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			req := llm.Request{Messages: userMsg("hi")}
			if stream {
				req.OnDelta = func(string) {}
			}

			start := time.Now()
			_, err := c.Complete(ctx, req)

			assert.ErrorIs(t, err, context.Canceled)
			assert.Less(t, time.Since(start), 5*time.Second)
			var base *llm.APIError
			assert.False(t, errors.As(err, &base), "cancellation is not an API error")
			assert.Len(t, srv.Requests(), 1, "not retried")
		})
	}
}

func TestOpenAI_ContextCancelledDuringBackoff(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Otherwise(llmtest.RateLimited(30 * time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("m"), // real sleep
		llm.WithOnRetry(func(e llm.RetryEvent) {
			assert.Equal(t, 30*time.Second, e.Wait)
			time.AfterFunc(20*time.Millisecond, cancel)
		}))
	require.NoError(t, err)

	start := time.Now()
	_, err = c.Complete(ctx, llm.Request{Messages: userMsg("hi")})

	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Len(t, srv.Requests(), 1)
}

func TestOpenAI_RefusesCancelledContextAndEmptyRequest(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, _ := newClient(t, srv.URL())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := c.Complete(ctx, llm.Request{Messages: userMsg("hi")})
	assert.ErrorIs(t, err, context.Canceled)

	_, err = c.Complete(context.Background(), llm.Request{})
	assert.ErrorContains(t, err, "no messages")
	assert.Empty(t, srv.Requests())
}

func TestOpenAI_ConcurrentCalls(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("same answer"))
	c, _ := newClient(t, srv.URL())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			req := llm.Request{Messages: userMsg(fmt.Sprint(i))}
			if i%2 == 0 {
				req.OnDelta = func(string) {}
			}
			resp, err := c.Complete(context.Background(), req)
			if assert.NoError(t, err) {
				assert.Equal(t, "same answer", resp.Content)
			}
		})
	}
	wg.Wait()
	assert.Len(t, srv.Requests(), 8)
}

// The base URL's query is kept, as written, after the joined path.
func TestOpenAI_BaseURLWithQueryJoinsPathBeforeQuery(t *testing.T) {
	tests := []struct {
		name, suffix string // appended to the server's URL (which ends in /v1)
		path, query  string // what the server gets
		base         string // BaseURL, after the server's URL
	}{
		{"query", "/openai/deployments/x?api-version=2024-02-01",
			"/v1/openai/deployments/x/chat/completions", "api-version=2024-02-01", "/openai/deployments/x?api-version=2024-02-01"},
		{"trailing slash before the query", "/deployments/x/?api-version=2024-02-01",
			"/v1/deployments/x/chat/completions", "api-version=2024-02-01", "/deployments/x?api-version=2024-02-01"},
		{"slashes before the query", "//?a=1",
			"/v1/chat/completions", "a=1", "?a=1"},
		{"encoding kept", "?sig=a%2Fb%3D&x=1+2&y=%7e",
			"/v1/chat/completions", "sig=a%2Fb%3D&x=1+2&y=%7e", "?sig=a%2Fb%3D&x=1+2&y=%7e"},
		{"slash inside a query value", "?next=/a/b/",
			"/v1/chat/completions", "next=/a/b/", "?next=/a/b/"},
		{"escaped path segment", "/deployments/a%2Fb?v=1",
			"/v1/deployments/a/b/chat/completions", "v=1", "/deployments/a%2Fb?v=1"},
		{"no query", "/",
			"/v1/chat/completions", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer("ok"))
			c, _ := newClient(t, srv.URL()+tt.suffix)

			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			require.NoError(t, err)

			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tt.path, reqs[0].Path)
			assert.Equal(t, tt.query, reqs[0].RawQuery)
			assert.Equal(t, srv.URL()+tt.base, c.BaseURL())
		})
	}
}

// A fragment is never sent to a server: a base URL with one is refused
// rather than silently cut (a "#" meant inside a query value would
// otherwise truncate it).
func TestNewOpenAI_BaseURLWithFragmentIsAConfigError(t *testing.T) {
	for _, base := range []string{"http://localhost:8080/v1#top", "http://localhost:8080/v1?key=ab#cd", "http://localhost:8080/v1#"} {
		t.Run(base, func(t *testing.T) {
			c, err := llm.NewOpenAI(llm.WithModel("m"), llm.WithBaseURL(base))

			assert.Nil(t, c)
			var ce *llm.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "base URL", ce.Setting)
			assert.Contains(t, err.Error(), "has a fragment")
			assert.Contains(t, err.Error(), "%23")
			assert.Contains(t, err.Error(), "OPENAI_BASE_URL")
			assert.NotContains(t, err.Error(), "cd", "nothing after the query's start is printed")
		})
	}
}

// closedAddr returns a loopback address that refuses connections for the
// whole test.
func closedAddr(t *testing.T) string {
	t.Helper()
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	t.Cleanup(release)
	return addr
}
