package scriptserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/llm"
)

// created is the fixed "created" timestamp of every answer, so answers are
// reproducible.
const created = 1700000000

// Request is one request the Server received, as decoded.
type Request struct {
	Method string
	// Path is the request's path, decoded; RawQuery its query string as
	// sent, without the "?".
	Path     string
	RawQuery string
	// Header is a copy of the request headers in which the Authorization
	// value is masked to its scheme ("Bearer [REDACTED]"), so recorded
	// requests can be printed without leaking a key. Use WithAPIKey to check
	// the key itself.
	Header http.Header
	// Model, Messages, Temperature, Stream and IncludeUsage
	// (stream_options.include_usage) are decoded from the body. Messages
	// are in the OpenAI shape from either wire: an Anthropic assistant's
	// tool_use blocks are its ToolCalls, and a user message's tool_result
	// blocks messages of role "tool" before it (the user message itself
	// only when it has text).
	Model        string
	Messages     []llm.Message
	Temperature  *float64
	Stream       bool
	IncludeUsage bool
	// Wire is the wire format of the request: WireOpenAI or WireAnthropic.
	Wire string
	// System is an Anthropic request's top-level system text (its
	// Messages hold no system message).
	System string
	// MaxTokens is the request's max_tokens (0 when it sent none).
	MaxTokens int
	// SchemaName and Schema are the structured-output schema the request
	// carried: OpenAI's response_format json_schema, or the input_schema
	// of the tool an Anthropic request forces with tool_choice. Strict is
	// OpenAI's json_schema.strict.
	SchemaName string
	Schema     json.RawMessage
	Strict     bool
	// Tools are the tools the request offered, as sent (on the Anthropic
	// wire, a schema's tool among them), and ToolChoice its tool_choice
	// (Anthropic's "any" is ToolChoiceRequired).
	Tools      []llm.ToolDef
	ToolChoice llm.ToolChoice
	// Body is the raw request body.
	Body []byte
}

// The wire formats the Server speaks.
const (
	WireOpenAI    = "openai"
	WireAnthropic = "anthropic"
)

// LastMessage returns the text of the request's last message ("" if
// none): its content, or for a message of parts or tool calls, its
// readable text (llm.Message.Text). Rules match llm.MatchText instead,
// which for a request that ends in tool results is all of them.
func (r Request) LastMessage() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Text()
}

// Server is an HTTP server speaking the OpenAI chat-completions protocol
// (POST {URL}/chat/completions, streamed and not) from a script. A request
// is answered by
//
//  1. a 401 when WithAPIKey is set and the request lacks that key;
//  2. else the first rule (When) whose text occurs in the last message;
//     rules stay and may answer many times;
//  3. else the next reply of the queue (Reply), consumed once;
//  4. else the fallback (Otherwise);
//  5. else a 501 Not Implemented whose body names the unscripted request;
//     the request is remembered and Verify reports it. (501 rather than 500
//     so that a client does not retry it.)
//
// Methods are safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	done      chan struct{} // closed by Close, ends delays
	closeOnce sync.Once
	apiKey    string // required key; "" accepts any

	script llm.Script[Reply] // has its own lock, taken after mu

	mu       sync.Mutex // guards the fields below
	requests []Request
	misses   []string // unscripted or malformed requests, described
	models   []string // the model list GET /v1/models serves
}

// An Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the server demand "Authorization: Bearer key" and answer
// any other request with a 401 that repeats the key it got.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// Start starts a Server on a loopback address (127.0.0.1, else [::1]);
// Close stops it. It fails when neither can be listened on.
func Start(opts ...Option) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		var err6 error
		if l, err6 = net.Listen("tcp6", "[::1]:0"); err6 != nil {
			return nil, fmt.Errorf("scriptserver: listen on a loopback address: %w", errors.Join(err, err6))
		}
	}
	s := &Server{done: make(chan struct{})}
	for _, opt := range opts {
		opt(s)
	}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.srv.Start()
	return s, nil
}

// New is Start for tests and examples: it panics when no loopback
// address can be listened on, as httptest.NewServer does.
func New(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// URL returns the base URL to give an OpenAI client, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// AnthropicURL returns the base URL to give an Anthropic client: the
// server's root, under which it serves /v1/messages and /v1/models.
func (s *Server) AnthropicURL() string { return s.srv.URL }

// Models sets the model list that GET /v1/models serves, in the wire
// format the request's headers ask for (an anthropic-version header: the
// Anthropic one, paged by limit and after_id), and returns s. Without it
// the list is empty.
func (s *Server) Models(ids ...string) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(ids)
	return s
}

// Close stops the server, ending pending delays. It may be called twice.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Reply appends replies to the queue and returns s.
func (s *Server) Reply(replies ...Reply) *Server {
	s.script.Reply(replies...)
	return s
}

// When adds a rule: answer reply whenever the last message contains the
// text contains. Rules are checked in the order added, before the queue.
func (s *Server) When(contains string, reply Reply) *Server {
	s.script.When(contains, reply)
	return s
}

// Otherwise sets the answer to requests no rule or queued reply answers.
func (s *Server) Otherwise(reply Reply) *Server {
	s.script.Otherwise(reply)
	return s
}

// Requests returns a copy of every chat-completion request received,
// oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Messages = slices.Clone(r.Messages)
		r.Tools = slices.Clone(r.Tools)
		r.Body = slices.Clone(r.Body)
		out[i] = r
	}
	return out
}

// Remaining returns how many queued replies were not consumed yet.
func (s *Server) Remaining() int {
	return s.script.Remaining()
}

// Verify fails t (a *testing.T, say) if a queued reply was never
// consumed, a rule never matched, or a request was unscripted or
// malformed.
func (s *Server) Verify(t llm.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	replies, rules := s.script.Unused()
	for _, r := range replies {
		t.Errorf("scriptserver: scripted reply never consumed: %s", r.describe())
	}
	for _, contains := range rules {
		t.Errorf("scriptserver: rule When(%q) never matched", contains)
	}
	for _, m := range s.misses {
		t.Errorf("scriptserver: %s", m)
	}
}

// wireRequest is the part of a chat-completion body the server reads.
type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []llm.Message `json:"messages"`
	Temperature   *float64      `json:"temperature"`
	MaxTokens     int           `json:"max_tokens"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// openAIToolChoice reads a tool_choice: "auto", "none", "required" or
// {"type": "function", "function": {"name"}}.
func openAIToolChoice(raw json.RawMessage) (llm.ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return llm.ToolChoice{}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "auto":
			return llm.ToolChoice{}, nil
		case "none", "required":
			return llm.ToolChoice{Mode: llm.ToolChoiceMode(mode)}, nil
		}
		return llm.ToolChoice{}, fmt.Errorf("tool_choice: %q is not one of \"none\", \"auto\", \"required\"", mode)
	}
	var forced struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &forced); err != nil || forced.Type != "function" || forced.Function.Name == "" {
		return llm.ToolChoice{}, fmt.Errorf("tool_choice: %s is not {\"type\": \"function\", \"function\": {\"name\": …}}", raw)
	}
	return llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: forced.Function.Name}, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.serveModels(w, r)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
		s.serveAnthropic(w, r)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.miss(fmt.Sprintf("unexpected request %s %s (want POST /v1/chat/completions)", r.Method, r.URL.Path))
		writeError(w, Error(http.StatusNotFound, fmt.Sprintf("scriptserver: no route for %s %s", r.Method, r.URL.Path)), "")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	var wire wireRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		s.miss(fmt.Sprintf("malformed request body: %v", err))
		writeError(w, Error(http.StatusBadRequest, "scriptserver: request body is not valid JSON: "+err.Error()), "")
		return
	}
	rec := Request{
		Method:      r.Method,
		Path:        r.URL.Path,
		RawQuery:    r.URL.RawQuery,
		Header:      maskAuth(r.Header),
		Model:       wire.Model,
		Messages:    wire.Messages,
		Temperature: wire.Temperature,
		Stream:      wire.Stream,
		Wire:        WireOpenAI,
		MaxTokens:   wire.MaxTokens,
		Body:        body,
	}
	if wire.StreamOptions != nil {
		rec.IncludeUsage = wire.StreamOptions.IncludeUsage
	}
	if rf := wire.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		rec.SchemaName, rec.Schema, rec.Strict = rf.JSONSchema.Name, rf.JSONSchema.Schema, rf.JSONSchema.Strict
	}
	for _, t := range wire.Tools {
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if rec.ToolChoice, err = openAIToolChoice(wire.ToolChoice); err != nil {
		s.record(rec)
		s.miss("invalid request: " + err.Error())
		writeError(w, Error(http.StatusBadRequest, err.Error()), "")
		return
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.answer(w, r, rec, key, wire.Stream, openAIDialect)
}

// dialect writes the replies of one wire format.
type dialect struct {
	// error writes an error reply; key is the request's API key, which
	// some replies echo.
	error func(w http.ResponseWriter, reply Reply, key string)
	// json writes the n-th answer whole; stream writes it as a stream.
	json   func(w http.ResponseWriter, n int, rec Request, reply Reply)
	stream func(s *Server, ctx context.Context, w http.ResponseWriter, n int, rec Request, reply Reply)
}

var (
	openAIDialect    = dialect{error: writeError, json: writeJSON, stream: (*Server).writeStream}
	anthropicDialect = dialect{error: writeAnthropicError, json: writeAnthropicJSON, stream: (*Server).writeAnthropicStream}
)

// answer checks rec's key, picks the scripted reply and writes it in d's
// wire format, as a stream when stream is set.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec Request, key string, stream bool, d dialect) {
	if s.apiKey != "" && key != s.apiKey {
		s.record(rec)
		d.error(w, Unauthorized(), key)
		return
	}
	reply, n, ok := s.pick(rec)
	if !ok {
		d.error(w, Error(http.StatusNotImplemented, fmt.Sprintf(
			"scriptserver: no reply scripted for this request (last message %q); script one with Server.Reply, When or Otherwise",
			llm.MatchText(rec.Messages))), "")
		return
	}
	if !s.pause(r.Context(), reply.Delay) || !s.hold(r.Context(), reply.Hold) {
		return
	}
	switch {
	case reply.Hangup && !(reply.Truncate && stream):
		hangup(w)
	case reply.Status != 0 && reply.Status != http.StatusOK:
		d.error(w, reply, key)
	case reply.Body != "":
		writeRaw(w, reply, http.StatusOK)
	case reply.ErrorEvent != "" && !stream:
		d.error(w, Reply{Status: llm.AnthropicErrorStatus(reply.ErrorEvent), Message: reply.Message}, key)
	case stream:
		d.stream(s, r.Context(), w, n, rec, reply)
	default:
		d.json(w, n, rec, reply)
	}
}

// record appends rec to the log.
func (s *Server) record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
}

// miss remembers a request Verify must report.
func (s *Server) miss(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.misses = append(s.misses, what)
}

// pick records rec as request number n (from 1) and chooses its reply;
// false means unscripted.
func (s *Server) pick(rec Request) (reply Reply, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	n = len(s.requests)
	last := llm.MatchText(rec.Messages)
	if reply, ok = s.script.Next(last); ok {
		return reply, n, true
	}
	s.misses = append(s.misses, fmt.Sprintf("unscripted request %d, last message %q", n, last))
	return Reply{}, n, false
}

// hold waits until ch is closed (nil: no wait); false means the request or
// the server ended first.
func (s *Server) hold(ctx context.Context, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// pause waits d; false means the request or the server ended first.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// maskAuth copies h with the Authorization credentials and the
// x-api-key value masked.
func maskAuth(h http.Header) http.Header {
	h = h.Clone()
	if v := h.Get("Authorization"); v != "" {
		scheme, _, _ := strings.Cut(v, " ")
		h.Set("Authorization", scheme+" [REDACTED]")
	}
	if h.Get("X-Api-Key") != "" {
		h.Set("X-Api-Key", "[REDACTED]")
	}
	return h
}

// writeError sends an error reply; key is the key the client presented.
func writeError(w http.ResponseWriter, r Reply, key string) {
	sendError(w, r, func(status int) any {
		msg := r.Message
		if r.echoKey {
			if key == "" {
				msg = "You didn't provide an API key."
			} else {
				msg = "Incorrect API key provided: " + key + "."
			}
		}
		return map[string]any{"error": map[string]any{
			"message": msg, "type": errorType(status), "param": nil, "code": nil,
		}}
	})
}

// sendError writes the error reply r in either wire format: r.Body as is
// when set, else the JSON document doc makes for the status (500 when r
// names none), with r's headers.
func sendError(w http.ResponseWriter, r Reply, doc func(status int) any) {
	status := r.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if r.Body != "" {
		writeRaw(w, r, status)
		return
	}
	body, _ := json.Marshal(doc(status))
	copyHeader(w.Header(), r.Header)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeRaw sends r.Body as is.
func writeRaw(w http.ResponseWriter, r Reply, status int) {
	body := []byte(r.Body)
	if r.Truncate {
		body = body[:len(body)/2]
	}
	ct := r.ContentType
	if ct == "" {
		ct = "application/json"
	}
	copyHeader(w.Header(), r.Header)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// hangup closes the connection without a response.
func hangup(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream instead
	}
	_ = conn.Close()
}

// usageFor returns the reply's usage, or an estimate.
func usageFor(rec Request, r Reply) llm.Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	prompt := 0
	for _, m := range rec.Messages {
		prompt += estimateTokens(m.Text()) + 4
	}
	completion := estimateTokens(r.Content)
	return llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func estimateTokens(s string) int { return (len(s) + 3) / 4 }

func modelFor(rec Request, r Reply) string {
	if r.Model != "" {
		return r.Model
	}
	return rec.Model
}

func finishFor(r Reply) string {
	if r.FinishReason != "" {
		return r.FinishReason
	}
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// completionID names the answer to request number n.
func completionID(n int) string { return fmt.Sprintf("chatcmpl-scriptserver-%d", n) }

// writeJSON sends a non-streamed chat completion.
func writeJSON(w http.ResponseWriter, n int, rec Request, r Reply) {
	usage := usageFor(rec, r)
	body, _ := json.Marshal(map[string]any{
		"id":      completionID(n),
		"object":  "chat.completion",
		"created": created,
		"model":   modelFor(rec, r),
		"choices": []any{map[string]any{
			"index":         0,
			"message":       answerMessage(n, r),
			"finish_reason": finishFor(r),
		}},
		"usage": usage,
	})
	writeRaw(w, Reply{Body: string(body), Truncate: r.Truncate, Header: r.Header}, http.StatusOK)
}

// answerMessage is the message of the n-th answer, not streamed.
func answerMessage(n int, r Reply) map[string]any {
	m := map[string]any{"role": "assistant", "content": r.Content}
	if calls := toolCalls(n, r, "call"); len(calls) > 0 {
		m["tool_calls"] = calls
		if r.Content == "" {
			m["content"] = nil
		}
	}
	return m
}

// toolCalls returns the tool calls of the n-th answer, those without an
// ID given PREFIX_scriptserver_N_I (I the call's index from 0), those
// without a Type "function".
func toolCalls(n int, r Reply, prefix string) []llm.ToolCall {
	var out []llm.ToolCall
	for i, c := range r.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("%s_scriptserver_%d_%d", prefix, n, i)
		}
		if c.Type == "" {
			c.Type = "function"
		}
		out = append(out, c)
	}
	return out
}

// halves cuts s in two, both valid UTF-8 when s is.
func halves(s string) (string, string) {
	half := len(s) / 2
	for half > 0 && !utf8.RuneStart(s[half]) {
		half--
	}
	return s[:half], s[half:]
}

// writeStream sends a chat completion as server-sent events: a role chunk,
// one chunk per word of the content, a finish chunk, a usage chunk when
// asked for, and [DONE].
func (s *Server) writeStream(ctx context.Context, w http.ResponseWriter, n int, rec Request, r Reply) {
	copyHeader(w.Header(), r.Header)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	id, model := completionID(n), modelFor(rec, r)
	send := func(v any) bool {
		var buf bytes.Buffer
		buf.WriteString("data: ")
		if str, ok := v.(string); ok {
			buf.WriteString(str)
		} else {
			b, _ := json.Marshal(v)
			buf.Write(b)
		}
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	pieces := words(r.Content)
	if r.Truncate || r.ErrorEvent != "" {
		pieces = pieces[:len(pieces)/2]
	}
	for i, p := range pieces {
		if i > 0 && !s.pause(ctx, r.ChunkDelay) {
			return
		}
		if !send(chunk(map[string]any{"content": p}, nil)) {
			return
		}
	}
	if r.Truncate {
		if r.Hangup {
			hangup(w)
		}
		return
	}
	if r.ErrorEvent != "" {
		send(map[string]any{"error": map[string]any{"message": r.Message, "type": r.ErrorEvent, "code": nil}})
		return
	}
	for i, c := range toolCalls(n, r, "call") {
		first, second := halves(c.Function.Arguments)
		pieces := []map[string]any{
			{"index": i, "id": c.ID, "type": c.Type, "function": map[string]any{"name": c.Function.Name, "arguments": ""}},
			{"index": i, "function": map[string]any{"arguments": first}},
			{"index": i, "function": map[string]any{"arguments": second}},
		}
		for _, p := range pieces {
			if !send(chunk(map[string]any{"tool_calls": []any{p}}, nil)) {
				return
			}
		}
	}
	if !send(chunk(map[string]any{}, finishFor(r))) {
		return
	}
	if rec.IncludeUsage {
		u := usageFor(rec, r)
		if !send(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": u,
		}) {
			return
		}
	}
	send("[DONE]")
}

// words splits s after each run of spaces, so that concatenating the
// pieces gives s back: "a b  c" → "a ", "b  ", "c".
func words(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i-1] == ' ' && s[i] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
