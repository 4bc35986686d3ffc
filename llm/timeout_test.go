package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// The client's bounds end a call whose server stalls, with a
// *TimeoutError that names the model and the base URL, and is not
// retried; a stream that keeps coming is not cut by the idle bound.
// The bounds here are milliseconds, so that nothing sleeps for long.
func TestTimeouts(t *testing.T) {
	many := strings.Repeat("word ", 30)
	cases := []struct {
		name    string
		reply   llmtest.Reply
		opts    []llm.Option
		stream  bool
		idle    bool   // the error is the idle bound's; else the call's
		wantErr string // "" when the call succeeds
	}{
		{"no answer at all", llmtest.Reply{Content: "late", Delay: time.Hour},
			[]llm.Option{llm.WithIdleTimeout(50 * time.Millisecond)}, false, true, "no answer from test-model at "},
		{"a stream that stalls", llmtest.Reply{Content: "one two", ChunkDelay: time.Hour},
			[]llm.Option{llm.WithIdleTimeout(50 * time.Millisecond)}, true, true, " for 50ms"},
		// 30 pieces 20 ms apart: the stream outlasts the idle bound, each
		// gap far inside it (on a loaded machine gaps of 150 ms were seen).
		{"a slow stream that keeps coming", llmtest.Reply{Content: many, ChunkDelay: 20 * time.Millisecond},
			[]llm.Option{llm.WithIdleTimeout(400 * time.Millisecond)}, true, false, ""},
		{"a call that takes too long in all", llmtest.Reply{Content: many, ChunkDelay: 10 * time.Millisecond},
			[]llm.Option{llm.WithIdleTimeout(0), llm.WithCallTimeout(100 * time.Millisecond)}, true, false, "no complete answer from test-model at "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(tc.reply)
			c, _ := newClient(t, srv.URL(), tc.opts...)
			req := llm.Request{Messages: userMsg("hi")}
			var got strings.Builder
			if tc.stream {
				req.OnDelta = func(d string) { got.WriteString(d) }
			}
			start := time.Now()
			resp, err := c.Complete(context.Background(), req)
			assert.Less(t, time.Since(start), 5*time.Second)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, many, resp.Content)
				return
			}
			var te *llm.TimeoutError
			require.ErrorAs(t, err, &te)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), srv.URL())
			assert.Equal(t, tc.idle, te.Idle)
			assert.Equal(t, 1, te.Attempts, "not retried")
			assert.Len(t, srv.Requests(), 1)
			var apiErr *llm.APIError
			assert.ErrorAs(t, err, &apiErr, "a typed error of the package")
			assert.False(t, errors.Is(err, context.DeadlineExceeded), "not the caller's deadline")
			if tc.stream && tc.idle {
				assert.Equal(t, "one ", got.String(), "what came before the stall was delivered")
			}
		})
	}
}

// The caller's context still ends a call as its own error, not a
// timeout.
func TestTimeouts_CallerCancels(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{Content: "late", Delay: time.Hour})
	c, _ := newClient(t, srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, llm.Request{Messages: userMsg("hi")})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, errors.As(err, new(*llm.TimeoutError)))
}
