package llmtest

import (
	"time"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/scriptserver"
)

// Server is a scripted model server: see scriptserver.Server.
type Server = scriptserver.Server

// Reply is one scripted answer of the Server: see scriptserver.Reply.
type Reply = scriptserver.Reply

// Request is one request the Server received: see scriptserver.Request.
type Request = scriptserver.Request

// The wire formats the Server speaks.
const (
	WireOpenAI    = scriptserver.WireOpenAI
	WireAnthropic = scriptserver.WireAnthropic
)

// An Option configures a Server started by New or NewServer.
type Option func(*options)

type options struct {
	server   []scriptserver.Option
	noVerify bool
}

// WithAPIKey makes the server demand "Authorization: Bearer key" and answer
// any other request with a 401 that repeats the key it got.
func WithAPIKey(key string) Option {
	return func(o *options) { o.server = append(o.server, scriptserver.WithAPIKey(key)) }
}

// WithoutVerify turns off the check NewServer runs at cleanup.
func WithoutVerify() Option { return func(o *options) { o.noVerify = true } }

func apply(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// New starts a Server; Close stops it. It panics when no loopback address
// can be listened on, as httptest.NewServer does. Tests use NewServer.
func New(opts ...Option) *Server { return scriptserver.New(apply(opts).server...) }

// TB is the part of testing.TB that NewServer uses; *testing.T and
// *testing.B satisfy it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
	Failed() bool
}

// NewServer starts a Server that is closed when t ends. Unless
// WithoutVerify is given, it then also runs Verify, if the test has not
// failed already (which would make the report noise).
func NewServer(t TB, opts ...Option) *Server {
	t.Helper()
	o := apply(opts)
	s := scriptserver.New(o.server...)
	t.Cleanup(func() {
		s.Close()
		if !o.noVerify && !t.Failed() {
			s.Verify(t)
		}
	})
	return s
}

// Answer returns a reply whose answer is content.
func Answer(content string) Reply { return scriptserver.Answer(content) }

// Calls returns a reply whose answer is the tool calls calls, made in
// parallel: see scriptserver.Calls.
func Calls(calls ...llm.ToolCall) Reply { return scriptserver.Calls(calls...) }

// Call returns a call of the tool name with arguments, a JSON text, for
// Calls; the server gives it an ID.
func Call(name, arguments string) llm.ToolCall { return scriptserver.Call(name, arguments) }

// Error returns a reply with the given HTTP status and an OpenAI error
// document {"error": {"message": message, "type": …}}.
func Error(status int, message string) Reply { return scriptserver.Error(status, message) }

// RateLimited returns a 429 whose Retry-After header asks for retryAfter,
// in whole seconds rounded up (0 omits the header).
func RateLimited(retryAfter time.Duration) Reply { return scriptserver.RateLimited(retryAfter) }

// Unauthorized returns a 401 whose message repeats the API key the client
// sent, as a careless server might; it lets tests check that the client
// redacts the key from its errors.
func Unauthorized() Reply { return scriptserver.Unauthorized() }

// ContextLengthExceeded returns the 400 OpenAI sends for a conversation
// longer than the model's context window.
func ContextLengthExceeded() Reply { return scriptserver.ContextLengthExceeded() }

// HTML returns a 200 carrying an HTML page, as a web server answers when
// the base URL points at a site instead of an API.
func HTML() Reply { return scriptserver.HTML() }

// Truncated returns an answer of content cut in the middle: half a JSON
// document, or a stream that stops early.
func Truncated(content string) Reply { return scriptserver.Truncated(content) }

// Overloaded returns the 529 overloaded_error Anthropic answers when its
// servers are overloaded (the OpenAI wire gets the same status).
func Overloaded() Reply { return scriptserver.Overloaded() }

// StreamError returns a reply that streams half of content, then an error
// event of type errType ("overloaded_error", "api_error", …) with message.
func StreamError(content, errType, message string) Reply {
	return scriptserver.StreamError(content, errType, message)
}

// Hangup returns a reply that closes the connection without answering.
func Hangup() Reply { return scriptserver.Hangup() }
