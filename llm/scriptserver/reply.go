package scriptserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract/llm"
)

// Reply is one scripted answer of the Server. The zero Status answers 200
// with a chat completion of Content (streamed when the request asked for a
// stream); the helpers below build the common cases.
type Reply struct {
	// Content is the answer's text.
	Content string
	// ToolCalls are the answer's tool calls (see Calls), after its text:
	// on the OpenAI wire tool_calls (the content null when there is no
	// text), on the Anthropic wire tool_use blocks after a text block
	// (when there is text). A call without an ID gets
	// "call_scriptserver_N_I" (Anthropic: "toolu_scriptserver_N_I"; N the
	// request's number from 1, I the call's from 0). A stream sends each
	// in pieces: its id, type and name first, then its arguments in two
	// halves (Anthropic: a content_block_start, then two
	// input_json_delta events). Anthropic's inputs are JSON values: an
	// answer that is not streamed sends Arguments that are not valid JSON
	// as a JSON string.
	ToolCalls []llm.ToolCall
	// Status, when not 0 or 200, answers with that status and an OpenAI error
	// document carrying Message (unless Body is set).
	Status  int
	Message string
	// Header holds extra response headers (e.g. Retry-After).
	Header http.Header
	// Body, when set, is sent as is instead of a generated body, with
	// ContentType (default application/json), to stream requests too.
	Body        string
	ContentType string
	// Usage is reported as is; nil estimates it (about 4 characters per token).
	Usage *llm.Usage
	// FinishReason defaults to "stop" (Anthropic: "end_turn"), or with
	// ToolCalls "tool_calls" (Anthropic: "tool_use").
	FinishReason string
	// Model defaults to the requested model.
	Model string
	// Delay is waited before answering; ChunkDelay between stream chunks.
	Delay      time.Duration
	ChunkDelay time.Duration
	// Hold, when set, is waited for (until it is closed) before answering,
	// after Delay: a test can act while a model call is certainly in
	// flight, then release it.
	Hold <-chan struct{}
	// Truncate cuts the answer in the middle: a JSON body is cut in half
	// (with a matching Content-Length, so the client sees a clean end), a
	// stream stops after half of its content chunks, without finish_reason
	// or [DONE].
	Truncate bool
	// Hangup closes the connection without any answer, as a crashed server
	// or a reset connection would. With Truncate, a streamed answer is cut
	// that way after half of its chunks (a connection lost mid-answer).
	Hangup bool
	// ErrorEvent, when set, is the type of an error the stream reports
	// after half of its content chunks (Anthropic: an "error" event;
	// OpenAI: a chunk with an "error" member), with Message as its
	// message; a request that is not streamed gets the error's status
	// instead. See StreamError.
	ErrorEvent string

	echoKey bool // 401 message repeats the key the client sent
}

// Answer returns a reply whose answer is content.
func Answer(content string) Reply { return Reply{Content: content} }

// Calls returns a reply whose answer is the tool calls calls, made in
// parallel (see Reply.ToolCalls).
func Calls(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Call returns a call of the tool name with arguments, a JSON text, for
// Calls; the server gives it an ID.
func Call(name, arguments string) llm.ToolCall { return llm.NewToolCall("", name, arguments) }

// Error returns a reply with the given HTTP status and an OpenAI error
// document {"error": {"message": message, "type": …}}.
func Error(status int, message string) Reply {
	return Reply{Status: status, Message: message}
}

// RateLimited returns a 429 whose Retry-After header asks for retryAfter,
// in whole seconds rounded up (0 omits the header).
func RateLimited(retryAfter time.Duration) Reply {
	r := Error(http.StatusTooManyRequests, "Rate limit reached for requests. Please try again later.")
	if retryAfter > 0 {
		secs := int64((retryAfter + time.Second - 1) / time.Second)
		r.Header = http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}}
	}
	return r
}

// Unauthorized returns a 401 whose message repeats the API key the client
// sent, as a careless server might; it lets tests check that the client
// redacts the key from its errors.
func Unauthorized() Reply {
	r := Error(http.StatusUnauthorized, "")
	r.echoKey = true
	return r
}

// ContextLengthExceeded returns the 400 OpenAI sends for a conversation
// longer than the model's context window.
func ContextLengthExceeded() Reply {
	return Reply{
		Status:      http.StatusBadRequest,
		ContentType: "application/json",
		Body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages.",` +
			`"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
	}
}

// HTML returns a 200 carrying an HTML page, as a web server answers when
// the base URL points at a site instead of an API.
func HTML() Reply {
	return Reply{
		ContentType: "text/html; charset=utf-8",
		Body:        "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n",
	}
}

// Truncated returns an answer of content cut in the middle: half a JSON
// document, or a stream that stops early.
func Truncated(content string) Reply { return Reply{Content: content, Truncate: true} }

// Overloaded returns the 529 overloaded_error Anthropic answers when its
// servers are overloaded (the OpenAI wire gets the same status).
func Overloaded() Reply { return Error(529, "Overloaded") }

// StreamError returns a reply that streams half of content, then an error
// event of type errType ("overloaded_error", "api_error", …) with message.
func StreamError(content, errType, message string) Reply {
	return Reply{Content: content, ErrorEvent: errType, Message: message}
}

// Hangup returns a reply that closes the connection without answering.
func Hangup() Reply { return Reply{Hangup: true} }

// errorType is the OpenAI error type that goes with a status.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status >= 500:
		return "server_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	}
	return "invalid_request_error"
}

// describe names a reply in Verify messages.
func (r Reply) describe() string {
	switch {
	case r.Hangup:
		return "Hangup()"
	case r.Status != 0 && r.Status != http.StatusOK:
		return fmt.Sprintf("HTTP %d %q", r.Status, r.Message)
	case r.Body != "":
		return fmt.Sprintf("raw body %.40q", r.Body)
	case len(r.ToolCalls) > 0:
		names := make([]string, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			names[i] = c.Function.Name
		}
		return fmt.Sprintf("answer %q with tool calls %s", r.Content, strings.Join(names, ", "))
	}
	return fmt.Sprintf("answer %q", r.Content)
}
