package llm

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter_Forms(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"HTTP date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second, true},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond, true},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(tt.header, now)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSnippet_SanitizesCutsAndRedacts(t *testing.T) {
	assert.Equal(t, "a b c", snippet([]byte("  a\n\tb\x00\x01 c \r\n"), nil))
	assert.Equal(t, "bad byte", snippet([]byte("bad \xff byte"), nil), "invalid UTF-8 becomes a space, spaces collapse")
	long := strings.Repeat("é", 500)
	got := snippet([]byte(long), nil)
	assert.Equal(t, strings.Repeat("é", snippetMax)+"…", got)
	// A key straddling the cut is redacted before cutting.
	key := "sk-" + strings.Repeat("k", 40)
	got = snippet([]byte(strings.Repeat("x", snippetMax-5)+key), newRedactor(key, nil))
	assert.NotContains(t, got, "kkkkk")
	assert.Contains(t, got, "[RED")
}

func TestIsContextLength(t *testing.T) {
	assert.True(t, isContextLength(400, "", "context_length_exceeded", ""))
	assert.True(t, isContextLength(400, "BadRequestError", "", "This model's maximum context length is 4096 tokens. However, you requested 5000"))
	assert.True(t, isContextLength(400, "exceed_context_size_error", "", ""))
	assert.False(t, isContextLength(400, "invalid_request_error", "", "Invalid value for 'temperature'"))
	assert.False(t, isContextLength(500, "", "context_length_exceeded", ""), "a 5xx is a server error whatever it says")
}

func TestReadLine_LineEndings(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "", "c"}, splitLines("a\r\nb\n\nc"))
	assert.Equal(t, []string{"x"}, splitLines("x\n"))
}

func splitLines(s string) []string {
	r := bufio.NewReader(strings.NewReader(s))
	var out []string
	for {
		line, err := readLine(r)
		if err == io.EOF && len(line) == 0 {
			return out
		}
		out = append(out, string(line))
		if err != nil {
			return out
		}
	}
}

func TestTransportError_RedactsKeyFromURL(t *testing.T) {
	const key = "sk-in-the-url-123456"
	c := &OpenAI{apiKey: key, redactor: newRedactor(key, nil)}
	cause := errors.New("connection reset by peer")
	err := c.transportError(&url.Error{Op: "Post", URL: "http://h/v1/chat/completions?api-key=" + key, Err: cause})

	assert.NotContains(t, err.Error(), key)
	var ue *url.Error
	if assert.ErrorAs(t, err, &ue) {
		assert.NotContains(t, ue.URL, key, "the unwrapped cause is redacted too")
	}
	assert.ErrorIs(t, err, cause)
	assert.True(t, baseOf(err).retryable)
}
