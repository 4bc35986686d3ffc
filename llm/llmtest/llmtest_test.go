package llmtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/llm/scriptserver"
)

// fakeTB records what NewServer does with a test: its cleanups and its
// failures.
type fakeTB struct {
	cleanups []func()
	errs     []string
	failed   bool
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Failed() bool      { return f.failed }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// end runs the cleanups, last first, as a test's end does.
func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func complete(t *testing.T, srv *llmtest.Server, opts ...llm.Option) (*llm.Response, error) {
	t.Helper()
	c, err := llm.NewOpenAI(append([]llm.Option{llm.WithBaseURL(srv.URL()), llm.WithModel("m"), llm.WithAPIKey("sk-test"), llm.WithMaxRetries(0)}, opts...)...)
	require.NoError(t, err)
	return c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
}

// NewServer closes the server when the test ends and reports what of
// its script went unused, unless the test failed already or
// WithoutVerify was given.
func TestNewServer_VerifiesAtCleanup(t *testing.T) {
	cases := []struct {
		name   string
		opts   []llmtest.Option
		failed bool
		want   []string
	}{
		{"verified", nil, false, []string{`scriptserver: scripted reply never consumed: answer "left over"`}},
		{"test failed already", nil, true, nil},
		{"WithoutVerify", []llmtest.Option{llmtest.WithoutVerify()}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fakeTB{failed: tc.failed}
			srv := llmtest.NewServer(tb, tc.opts...)
			srv.Reply(llmtest.Answer("used"), llmtest.Answer("left over"))
			resp, err := complete(t, srv)
			require.NoError(t, err)
			assert.Equal(t, "used", resp.Content)
			require.Len(t, tb.cleanups, 1)

			tb.end()

			assert.Equal(t, tc.want, tb.errs)
			_, err = complete(t, srv)
			assert.Error(t, err, "the server is closed")
		})
	}
}

// WithAPIKey reaches the server among llmtest's own options.
func TestNewServer_WithAPIKey(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithAPIKey("sk-good"), llmtest.WithoutVerify())
	srv.Otherwise(llmtest.Answer("ok"))
	_, err := complete(t, srv)
	var auth *llm.AuthError
	assert.ErrorAs(t, err, &auth)
	resp, err := complete(t, srv, llm.WithAPIKey("sk-good"))
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Content)
}

// The reply helpers build scriptserver's replies.
func TestReplies_AreScriptserversReplies(t *testing.T) {
	cases := []struct {
		got, want llmtest.Reply
	}{
		{llmtest.Answer("a"), scriptserver.Answer("a")},
		{llmtest.Error(418, "teapot"), scriptserver.Error(418, "teapot")},
		{llmtest.RateLimited(1500 * time.Millisecond), scriptserver.RateLimited(1500 * time.Millisecond)},
		{llmtest.Unauthorized(), scriptserver.Unauthorized()},
		{llmtest.ContextLengthExceeded(), scriptserver.ContextLengthExceeded()},
		{llmtest.HTML(), scriptserver.HTML()},
		{llmtest.Truncated("half"), scriptserver.Truncated("half")},
		{llmtest.Overloaded(), scriptserver.Overloaded()},
		{llmtest.StreamError("a b", "api_error", "boom"), scriptserver.StreamError("a b", "api_error", "boom")},
		{llmtest.Hangup(), scriptserver.Hangup()},
		{llmtest.Calls(llmtest.Call("f", `{"a":1}`), llmtest.Call("g", "{}")),
			scriptserver.Reply{ToolCalls: []llm.ToolCall{llm.NewToolCall("", "f", `{"a":1}`), llm.NewToolCall("", "g", "{}")}}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.got)
	}
}
