package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// Failures that show the client's setup to be wrong say so in
// APIError.Setup, whatever their type; a server in trouble, or a request
// it refused for another reason, does not.
func TestSetupProblems(t *testing.T) {
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  llm.SetupProblem
	}{
		{"401", llmtest.Unauthorized(), llm.SetupAuth},
		{"403", llmtest.Error(403, "not allowed"), llm.SetupAuth},
		{"404 page", llmtest.Reply{Status: 404, Body: "404 page not found", ContentType: "text/plain"}, llm.SetupEndpoint},
		{"404 HTML", llmtest.Reply{Status: 404, Body: "<html><body>Not Found</body></html>", ContentType: "text/html"}, llm.SetupEndpoint},
		{"405", llmtest.Reply{Status: 405, Body: "<html>405 Not Allowed</html>", ContentType: "text/html"}, llm.SetupEndpoint},
		{"HTML page", llmtest.HTML(), llm.SetupNotAPI},
		{"OpenAI unknown model", llmtest.Reply{Status: 404, Body: `{"error": {"message": "The model ` + "`x`" +
			` does not exist or you do not have access to it.", "type": "invalid_request_error", "code": "model_not_found"}}`}, llm.SetupModel},
		{"Ollama unknown model", llmtest.Reply{Status: 404, Body: `{"error": "model \"x\" not found, try pulling it first"}`}, llm.SetupModel},
		{"400 invalid model", llmtest.Error(400, "x is not a valid model ID"), llm.SetupModel},
		{"400 other", llmtest.Error(400, "messages must not be empty"), ""},
		{"500", llmtest.Error(500, "on fire"), ""},
		{"429", llmtest.Error(429, "slow down"), ""},
		{"truncated", llmtest.Truncated("an answer cut short"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Otherwise(tc.reply)
			c, _ := newClient(t, srv.URL(), llm.WithMaxRetries(1))
			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.want, apiErr.Setup, "%v", err)
		})
	}
}

// A host name that does not resolve is unreachable too, and not retried.
func TestSetupProblems_UnknownHost(t *testing.T) {
	tr := &scriptedTransport{steps: []int{-1}}
	c, s := newClient(t, "http://no-such-host.invalid/v1", llm.WithHTTPClient(&http.Client{Transport: tr}))
	_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	var te *llm.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, llm.SetupUnreachable, te.Setup)
	assert.Equal(t, 1, te.Attempts)
	assert.Empty(t, s.all())
}

// scriptedTransport answers each request with the next of its steps (the
// last one again when they run out): a status, or with 0 a refused
// connection, with -1 a host name that does not resolve. It never dials.
type scriptedTransport struct {
	steps []int
	n     int
}

func (s *scriptedTransport) RoundTrip(*http.Request) (*http.Response, error) {
	step := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	if step == -1 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "no-such-host.invalid", IsNotFound: true}}
	}
	if step == 0 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return &http.Response{StatusCode: step, Header: http.Header{}, Body: http.NoBody}, nil
}

// A refused connection is retried once while no attempt has reached the
// server; after one did, refusals are a server going down, retried as
// other transient failures, and no setup problem.
func TestRetry_RefusedConnections(t *testing.T) {
	cases := []struct {
		name     string
		steps    []int // 0: refused
		attempts int
		setup    llm.SetupProblem
	}{
		{"refused twice", []int{0, 0}, 2, llm.SetupUnreachable},
		{"refused then a server error", []int{0, 503}, 5, ""},
		{"a server error then refused", []int{503, 0}, 5, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &scriptedTransport{steps: tc.steps}
			c, _ := newClient(t, "http://127.0.0.1:9/v1", llm.WithHTTPClient(&http.Client{Transport: tr}))
			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.attempts, apiErr.Attempts)
			assert.Equal(t, tc.attempts, tr.n)
			assert.Equal(t, tc.setup, apiErr.Setup)
			assert.True(t, errors.As(err, new(*llm.TransportError)) || errors.As(err, new(*llm.ServerError)))
		})
	}
}

// OnReached is called once when the server starts answering, and never
// when the call fails before that.
func TestRequest_OnReached(t *testing.T) {
	cases := []struct {
		name    string
		replies []llmtest.Reply
		stream  bool
		schema  bool
		want    int
	}{
		{"answer", []llmtest.Reply{llmtest.Answer("hi")}, false, false, 1},
		{"streamed answer", []llmtest.Reply{llmtest.Answer("hi")}, true, false, 1},
		{"after a server error", []llmtest.Reply{llmtest.Error(503, "busy"), llmtest.Answer("hi")}, false, false, 1},
		{"schema refused, then an answer", []llmtest.Reply{llmtest.Error(400, "response_format is not supported"), llmtest.Answer("{}")}, false, true, 1},
		{"401", []llmtest.Reply{llmtest.Unauthorized()}, false, false, 0},
		{"HTML page", []llmtest.Reply{llmtest.HTML()}, false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(tc.replies...)
			c, _ := newClient(t, srv.URL())
			n := 0
			req := llm.Request{Messages: userMsg("hi"), OnReached: func() { n++ }}
			if tc.stream {
				req.OnDelta = func(string) { assert.Equal(t, 1, n, "reached before the first piece") }
			}
			if tc.schema {
				s, err := llm.NewSchema("s", []byte(`{"type": "object"}`))
				require.NoError(t, err)
				req.Schema = s
			}
			_, _ = c.Complete(context.Background(), req)
			assert.Equal(t, tc.want, n)
		})
	}
}
