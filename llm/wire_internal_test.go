package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/internal/fuzzcheck"
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
		{"not a number", http.Header{"Retry-After": {"NaN"}}, 0, false},
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
	c := &OpenAI{settings: settings{apiKey: key, redactor: newRedactor(key, nil)}}
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

// fuzzKey is the API key of the fuzzed client: no error may show it.
const fuzzKey = "sk-FUZZ-0123456789"

// fuzzClient is a client with just what the readers of answers use.
func fuzzClient() *OpenAI {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return &OpenAI{settings: settings{apiKey: fuzzKey, redactor: newRedactor(fuzzKey, nil), now: func() time.Time { return now }}}
}

// fuzzResponse is an answer with status, body and headers.
func fuzzResponse(status int, body []byte, header http.Header) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body))}
}

// checkAnswerError checks what every error of the answer readers promises:
// one of the package's typed errors, with a message fit for a user that
// does not show the API key, and a short single-line snippet.
func checkAnswerError(t *testing.T, err error, status int) {
	t.Helper()
	fuzzcheck.UserError(t, err)
	base := baseOf(err)
	if base == nil {
		t.Fatalf("error %T (%v) is not one of the package's typed errors", err, err)
	}
	if base.StatusCode != status {
		t.Fatalf("error has status %d, want %d", base.StatusCode, status)
	}
	if strings.Contains(err.Error(), fuzzKey) {
		t.Fatalf("error shows the API key: %v", err)
	}
	if base.hasRetry && base.retryAfter < 0 {
		t.Fatalf("negative Retry-After %v", base.retryAfter)
	}
	var bre *BadResponseError
	if errors.As(err, &bre) {
		if n := utf8.RuneCountInString(bre.Snippet); n > snippetMax+1 {
			t.Fatalf("snippet of %d characters: %q", n, bre.Snippet)
		}
		if strings.ContainsAny(bre.Snippet, "\r\n\t") {
			t.Fatalf("snippet is not one line: %q", bre.Snippet)
		}
	}
}

func FuzzReadStream(f *testing.F) {
	chunk := `{"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`
	for _, s := range []string{
		"data: " + chunk + "\n\ndata: [DONE]\n\n",
		": keep-alive\r\n\r\ndata:" + chunk + "\r\n\r\nevent: x\r\ndata: [DONE]\r\n",
		"data: " + chunk + "\n\n" + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n",
		// Parallel tool calls, their pieces interleaved by index, after some text.
		"data: " + chunk + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}},{"index":1,"id":"call_2","type":"function","function":{"name":"now","arguments":""}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}},{"index":0,"function":{"arguments":"\"x\"}"}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
		// A call per chunk from a server that numbers none.
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_1","function":{"name":"lookup","arguments":"{}"}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_2","function":{"name":"now","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}` + "\n",
		"data: " + chunk + "\n",
		`data: {"error":{"message":"maximum context length is 4096 ` + fuzzKey + `","type":"invalid_request_error","code":null}}` + "\n",
		`data: {"error":"model not loaded"}` + "\n",
		"data: {nope\n\n",
		"<!DOCTYPE html><html></html>",
		"data: <html>\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var deltas []string
		resp, delivered, err := fuzzClient().readStream(fuzzResponse(200, body, nil), func(d string) {
			if d == "" {
				t.Fatal("empty delta delivered")
			}
			deltas = append(deltas, d)
		})
		if delivered != (len(deltas) > 0) {
			t.Fatalf("delivered = %v after %d deltas", delivered, len(deltas))
		}
		if err != nil {
			checkAnswerError(t, err, 200)
			return
		}
		if got := strings.Join(deltas, ""); resp.Content != got {
			t.Fatalf("content %q, but the deltas say %q", resp.Content, got)
		}
	})
}

func FuzzReadJSON(f *testing.F) {
	for _, s := range []struct{ contentType, body string }{
		{"application/json", `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`},
		{"application/json", `{"model":"m","choices":[]}`},
		{"application/json", `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}},` +
			`{"index":5,"id":"call_2","function":{"name":"now","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`},
		{"application/json", `{"choices":[{"index":0}]}`},
		{"application/json", `{"error":{"message":"context_length_exceeded","code":"context_length_exceeded"}}`},
		{"application/json", `{"error":"` + fuzzKey + `"}`},
		{"application/json", `{"choices":`},
		{"text/html; charset=utf-8", "<!DOCTYPE html>"},
		{"", " \n"},
	} {
		f.Add(s.contentType, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		resp, err := fuzzClient().readJSON(fuzzResponse(200, body, http.Header{"Content-Type": {contentType}}))
		if err != nil {
			checkAnswerError(t, err, 200)
			return
		}
		// An answer was accepted: the body is a JSON document whose first
		// choice has a message, and resp carries that message's text. An
		// answer is read leniently, as encoding/json reads members (a name
		// matches whatever its case: "Content" is the content), not as
		// Message reads what a user gives.
		var doc struct {
			Choices []struct {
				Message *struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if jerr := json.Unmarshal(body, &doc); jerr != nil {
			t.Fatalf("accepted a body that is not JSON (%v): %q", jerr, body)
		}
		if len(doc.Choices) == 0 || doc.Choices[0].Message == nil {
			t.Fatalf("accepted a body without a first message: %q", body)
		}
		if resp.Content != doc.Choices[0].Message.Content {
			t.Fatalf("content %q, want %q", resp.Content, doc.Choices[0].Message.Content)
		}
	})
}

func FuzzStatusError(f *testing.F) {
	for _, s := range []struct {
		status                   int
		retryAfter, retryAfterMs string
		body                     string
	}{
		{429, "7", "", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
		{429, "", "250", `{"error":{"message":"quota","code":"insufficient_quota"}}`},
		{503, "Wed, 21 Oct 2015 07:28:00 GMT", "", `{"error":"overloaded"}`},
		{400, "", "", `{"error":{"message":"This model's maximum context length is 4096 tokens","type":"invalid_request_error","code":null}}`},
		{401, "", "", `{"error":{"message":"Incorrect API key provided: ` + fuzzKey + `","code":401}}`},
		{404, "", "", "<html><body>Not Found</body></html>"},
		{500, "-1", "x", ""},
		{408, "1e300", "1e300", "\x00\xff"},
	} {
		f.Add(s.status, s.retryAfter, s.retryAfterMs, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, retryAfter, retryAfterMs string, body []byte) {
		if status < 100 || status > 999 || (status >= 200 && status <= 299) {
			return // statusError sees only non-2xx answers
		}
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("Retry-After-Ms", retryAfterMs)
		err := fuzzClient().statusError(fuzzResponse(status, body, h))
		checkAnswerError(t, err, status)
		base := baseOf(err)
		if strings.ContainsAny(base.Message, "\r\n") {
			t.Fatalf("message is not one line: %q", base.Message)
		}
		var (
			auth *AuthError
			rate *RateLimitError
		)
		if (status == 401 || status == 403) != errors.As(err, &auth) {
			t.Fatalf("status %d gave %T", status, err)
		}
		if errors.As(err, &rate) && rate.RetryAfter < 0 {
			t.Fatalf("negative RetryAfter %v", rate.RetryAfter)
		}
	})
}
