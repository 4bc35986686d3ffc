package llm

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tractdag/tract/internal/jsonerr"
)

// This file holds the OpenAI chat-completions wire format: request and
// response bodies, server-sent events, error bodies and their mapping onto
// the typed errors.

// maxBody bounds how much of an answer is read, and how much text a
// streamed answer gathers (a runaway or hostile server cannot exhaust
// memory); maxErrorBody bounds an error body.
const (
	maxBody      = 32 << 20
	maxErrorBody = 1 << 20
	maxLine      = 4 << 20 // longest SSE line accepted
)

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Tools          []openAITool    `json:"tools,omitempty"`
	// ToolChoice is "none", "required" or an openAIToolChoice; nil (auto)
	// is not sent.
	ToolChoice any `json:"tool_choice,omitempty"`
}

// sizeHint is about the bytes of r's JSON.
func (r *chatRequest) sizeHint() int {
	n := 200 + len(r.Model)
	for i := range r.Messages {
		n += r.Messages[i].sizeHint()
	}
	return n
}

// appendJSON appends r as encoding/json writes it (without escaping
// HTML): the messages by hand, the small members around them by
// encoding/json.
func (r *chatRequest) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"model":`...)
	b = appendString(b, r.Model, false)
	b = append(b, `,"messages":`...)
	var err error
	if r.Messages == nil {
		b = append(b, "null"...)
	} else if b, err = appendArray(b, len(r.Messages), func(b []byte, i int) ([]byte, error) { return r.Messages[i].appendJSON(b, true) }); err != nil {
		return b, err
	}
	if r.Temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, err = appendValue(b, *r.Temperature); err != nil {
			return b, err
		}
	}
	if r.MaxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	for _, m := range [...]struct {
		key  string
		v    any
		omit bool
	}{
		{"stream_options", r.StreamOptions, r.StreamOptions == nil},
		{"response_format", r.ResponseFormat, r.ResponseFormat == nil},
		{"tools", r.Tools, len(r.Tools) == 0},
		{"tool_choice", r.ToolChoice, r.ToolChoice == nil},
	} {
		if m.omit {
			continue
		}
		b = appendKey(b, m.key, false)
		if b, err = appendValue(b, m.v); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// openAITool is a tool of a request: {"type": "function", "function":
// {"name", "description", "parameters"}}.
type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// openAIToolChoice forces one tool: {"type": "function", "function":
// {"name"}}.
type openAIToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// responseFormat is OpenAI's structured-output request:
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}.
type responseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *jsonSchemaFormat `json:"json_schema,omitempty"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatResponse is a non-streamed answer; chunks of a stream share its shape
// with Delta in place of Message.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int            `json:"index"`
		Message      *answerMessage `json:"message"`
		Delta        *answerMessage `json:"delta"`
		FinishReason *string        `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// answerMessage is the message of an answer, or the delta of a stream
// chunk. It is read leniently (unlike Message, which reads what a user
// gives): members tract does not keep, as "refusal" or "annotations", are
// ignored, and so is the "index" of the tool calls some servers send in a
// whole answer too; member names match whatever their case, as
// encoding/json matches them.
type answerMessage struct {
	Content   string         `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls"`
}

// wireToolCall is a tool call of an answer, or a piece of one in a stream:
// the first piece of a call has its index, id, type and name; the pieces
// after it, the same index and more of the arguments.
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string        `json:"name"`
		Arguments argumentsText `json:"arguments"`
	} `json:"function"`
}

// argumentsText is a call's "arguments": a JSON text in a string, as
// OpenAI sends it, or the JSON value itself, as some compatible servers
// (llama.cpp, TGI) send it, kept as its compact text; null is none.
type argumentsText string

// UnmarshalJSON reads a string as is and any other value as its text.
func (a *argumentsText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = argumentsText(s)
		return nil
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return err
	}
	*a = argumentsText(compact.String())
	return nil
}

// toolCalls assembles the tool calls of an answer from its pieces.
type toolCalls struct {
	calls []ToolCall
	size  int // bytes of names and arguments gathered
}

// add takes one piece: it starts a call when its index is new (or, from a
// server that numbers none, when it has an id), else extends the call it
// names: its arguments are appended, its id, type and name replaced.
func (t *toolCalls) add(w wireToolCall) error {
	i := len(t.calls) - 1
	switch {
	case w.Index != nil && *w.Index >= 0 && *w.Index < len(t.calls):
		i = *w.Index
	case w.Index != nil && *w.Index == len(t.calls), w.Index == nil && (w.ID != "" || i < 0):
		t.calls = append(t.calls, ToolCall{Type: "function"})
		i++
	case w.Index != nil:
		return fmt.Errorf("tool call index %d skips calls (%d so far)", *w.Index, len(t.calls))
	}
	c := &t.calls[i]
	if w.ID != "" {
		c.ID = w.ID
	}
	if w.Type != "" {
		c.Type = w.Type
	}
	if w.Function.Name != "" {
		// A name comes whole: some servers (MiniMax on NVIDIA NIM,
		// Fireworks) repeat it in every piece, which must not double it.
		c.Function.Name = w.Function.Name
	}
	c.Function.Arguments += string(w.Function.Arguments)
	t.size += len(w.Function.Name) + len(w.Function.Arguments)
	if t.size > maxBody {
		return fmt.Errorf("tool calls longer than %d bytes", maxBody)
	}
	return nil
}

// errorBody is the OpenAI error document {"error": {...}}; some servers
// (Ollama) send {"error": "text"} instead, handled by parseErrorBody.
type errorBody struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // string, number or null
}

// parseErrorBody extracts type, code and message from an error document, or
// falls back to a snippet of the body.
func parseErrorBody(body []byte, r *redactor) (typ, code, msg string) {
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Error) > 0 && string(doc.Error) != "null" {
		if t, c, m, ok := parseErrorField(doc.Error); ok {
			return r.redact(t), r.redact(c), r.redact(m)
		}
	}
	return "", "", snippet(body, r)
}

// parseErrorField reads the value of an "error" member: an object or a string.
func parseErrorField(raw json.RawMessage) (typ, code, msg string, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "", "", oneLine(s), true
	}
	var eb errorBody
	if json.Unmarshal(raw, &eb) != nil {
		return "", "", "", false
	}
	code = strings.Trim(string(eb.Code), `"`)
	if code == "null" {
		code = ""
	}
	return eb.Type, code, oneLine(eb.Message), true
}

// oneLine collapses white space so a message fits an error line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// statusError maps a non-2xx answer onto a typed error.
func (c *settings) statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	typ, code, msg := parseErrorBody(body, c.redactor)
	base := APIError{StatusCode: resp.StatusCode, Type: typ, Code: code, Message: msg}
	if d, ok := retryAfter(resp.Header, c.now()); ok {
		base.retryAfter, base.hasRetry = d, true
	}
	return c.classify(resp.StatusCode, base)
}

// classify returns the typed error of a failure the server reported with
// status (or, in a stream, an error whose type stands for that status).
func (c *settings) classify(status int, base APIError) error {
	typ, code, msg := base.Type, base.Code, base.Message
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		base.Setup = SetupAuth
		return &AuthError{APIError: base, keyEnv: c.keyEnv}
	case isContextLength(status, typ, code, msg):
		return &ContextLengthError{base}
	case status == http.StatusTooManyRequests:
		// An exhausted quota will not recover within any retry budget.
		base.retryable = code != "insufficient_quota"
		e := &RateLimitError{APIError: base}
		if base.hasRetry {
			e.RetryAfter = base.retryAfter
		}
		return e
	case status >= 500:
		switch status {
		case 500, 502, 503, 504, 529: // 529: Anthropic's overloaded_error
			base.retryable = true
		}
		return &ServerError{base}
	case status == http.StatusRequestTimeout:
		base.retryable = true
		return &base
	case unknownModel(status, code, msg):
		base.Setup = SetupModel
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		base.Setup = SetupEndpoint // no such route, or a static site that takes no POST
	}
	return &base
}

// unknownModel recognises a server's refusal of a model it does not
// know: OpenAI's code model_not_found, or a 404 or 400 whose message
// names the model and says it is not found, does not exist or is not
// valid (Ollama, vLLM, OpenRouter, LiteLLM), or a 404 that names the
// model at all (Anthropic's not_found_error "model: NAME").
func unknownModel(status int, code, msg string) bool {
	if code == "model_not_found" {
		return true
	}
	m := strings.ToLower(msg)
	if (status != http.StatusNotFound && status != http.StatusBadRequest) || !strings.Contains(m, "model") {
		return false
	}
	if status == http.StatusNotFound {
		return true
	}
	for _, s := range []string{"not found", "does not exist", "not exist", "unknown model", "invalid model", "not a valid model", "no such model"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// isContextLength recognises the context-window errors of OpenAI
// (code context_length_exceeded), vLLM ("maximum context length"),
// llama.cpp (type exceed_context_size_error) and Anthropic ("prompt is too
// long").
func isContextLength(status int, typ, code, msg string) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusOK {
		return false
	}
	if code == "context_length_exceeded" || typ == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length exceeded", "context_length_exceeded", "exceeds the available context size", "prompt is too long"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// retryAfter reads the wait a server asks for: retry-after-ms (OpenAI),
// else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s >= 0 && s <= 1e9) { // NaN fails both
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// transportError wraps an error that left no HTTP answer, redacting the
// secrets from the URL it names and deciding whether another attempt may
// help.
func (c *settings) transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: c.redactor.redact(ue.URL), Err: ue.Err}
	}
	e := &TransportError{
		APIError: APIError{Message: c.redactor.redact(err.Error()), retryable: transient(err)},
		Err:      err,
	}
	if unreachable(err) {
		e.Setup = SetupUnreachable
	}
	return e
}

// unreachable reports a transport error that says no server is there:
// the connection was refused, or the host name does not resolve.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// transient reports whether a transport error may go away on its own:
// refused or reset connections, timeouts and early EOFs do; a host name
// that does not resolve or a certificate that does not verify do not.
func transient(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false
	}
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	if errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &invalidErr) {
		return false
	}
	return true
}

// badResponse builds a *BadResponseError for an answer with status code.
func (c *settings) badResponse(status int, reason string, body []byte) error {
	return &BadResponseError{
		APIError: APIError{StatusCode: status},
		Reason:   c.redactor.redact(reason),
		Snippet:  snippet(body, c.redactor),
	}
}

// htmlResponse is badResponse for an HTML page where the API's JSON (or
// event stream) should be: a setup problem, SetupNotAPI.
func (c *settings) htmlResponse(status int, reason string, body []byte) error {
	err := c.badResponse(status, reason, body).(*BadResponseError)
	err.Setup = SetupNotAPI
	return err
}

// readBody reads the body of a non-streamed answer, at most maxBody
// bytes, and returns it trimmed: an empty body, or an HTML page (a wrong
// base URL, SetupNotAPI), is a *BadResponseError.
func (c *settings) readBody(resp *http.Response) (status int, body []byte, err error) {
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, c.transportError(fmt.Errorf("read response body: %w", err))
	}
	status = resp.StatusCode
	if len(body) > maxBody {
		return 0, nil, c.badResponse(status, fmt.Sprintf("body larger than %d bytes", maxBody), body)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return 0, nil, c.badResponse(status, "empty body", nil)
	}
	if isHTML(resp.Header.Get("Content-Type"), trimmed) {
		return 0, nil, c.htmlResponse(status, "got an HTML page instead of JSON", trimmed)
	}
	return status, trimmed, nil
}

// readJSON decodes a non-streamed answer.
func (c *OpenAI) readJSON(resp *http.Response) (*Response, error) {
	status, trimmed, err := c.readBody(resp)
	if err != nil {
		return nil, err
	}
	var doc chatResponse
	if err := json.Unmarshal(trimmed, &doc); err != nil {
		return nil, c.badResponse(status, "invalid JSON: "+jsonerr.Describe(err), trimmed)
	}
	if err := c.embeddedError(status, doc.Error); err != nil {
		return nil, err
	}
	if len(doc.Choices) == 0 {
		return nil, c.badResponse(status, "no choices in the answer", trimmed)
	}
	ch := doc.Choices[0]
	if ch.Message == nil {
		return nil, c.badResponse(status, "first choice has no message", trimmed)
	}
	r := &Response{Content: ch.Message.Content, Model: doc.Model}
	var calls toolCalls
	for _, w := range ch.Message.ToolCalls {
		next := len(calls.calls) // a whole answer lists its calls in order
		w.Index = &next
		if err := calls.add(w); err != nil {
			return nil, c.badResponse(status, err.Error(), trimmed)
		}
	}
	r.ToolCalls = calls.calls
	if ch.FinishReason != nil {
		r.FinishReason = *ch.FinishReason
	}
	if doc.Usage != nil {
		r.Usage = *doc.Usage
	}
	return r, nil
}

// embeddedError maps an "error" member inside a 2xx body (some proxies
// report failures that way, also in the middle of a stream) to a typed error.
func (c *OpenAI) embeddedError(status int, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	typ, code, msg, ok := parseErrorField(raw)
	if !ok {
		return c.badResponse(status, "malformed error member", raw)
	}
	r := c.redactor
	base := APIError{StatusCode: status, Type: r.redact(typ), Code: r.redact(code), Message: r.redact(msg)}
	if isContextLength(status, typ, code, msg) {
		return &ContextLengthError{base}
	}
	return &base
}

// readStream consumes a server-sent-events answer: one JSON chunk per
// "data:" line until "data: [DONE]". Each line is taken as a whole event;
// OpenAI-compatible servers never split a chunk over several data lines.
// Comment lines (": keep-alive") and other fields are ignored.
func (c *OpenAI) readStream(resp *http.Response, onDelta func(string)) (*Response, bool, error) {
	status := resp.StatusCode
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var (
		out       Response
		content   strings.Builder
		calls     toolCalls
		delivered bool
		lastLine  []byte
	)
	for {
		line, err := readLine(r)
		if err == errLineTooLong {
			return nil, delivered, c.badResponse(status, fmt.Sprintf("stream line longer than %d bytes", maxLine), line)
		}
		if len(line) > 0 {
			lastLine = line
		}
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				out.Content, out.ToolCalls = content.String(), calls.calls
				return &out, delivered, nil
			}
			if len(data) > 0 {
				var chunk chatResponse
				if jerr := json.Unmarshal(data, &chunk); jerr != nil {
					if isHTML("", data) {
						return nil, delivered, c.htmlResponse(status, "got HTML inside the event stream", data)
					}
					return nil, delivered, c.badResponse(status, "invalid JSON in stream chunk: "+jsonerr.Describe(jerr), data)
				}
				if eerr := c.embeddedError(status, chunk.Error); eerr != nil {
					return nil, delivered, eerr
				}
				if chunk.Model != "" && out.Model == "" {
					out.Model = chunk.Model
				}
				if chunk.Usage != nil {
					out.Usage = *chunk.Usage
				}
				for _, ch := range chunk.Choices {
					if ch.Index != 0 {
						continue
					}
					if ch.Delta != nil && ch.Delta.Content != "" {
						if content.Len()+len(ch.Delta.Content) > maxBody {
							return nil, delivered, c.badResponse(status, fmt.Sprintf("streamed answer longer than %d bytes", maxBody), nil)
						}
						content.WriteString(ch.Delta.Content)
						onDelta(ch.Delta.Content)
						delivered = true
					}
					if ch.Delta != nil {
						for _, w := range ch.Delta.ToolCalls {
							if err := calls.add(w); err != nil {
								return nil, delivered, c.badResponse(status, err.Error(), data)
							}
						}
					}
					if ch.FinishReason != nil && *ch.FinishReason != "" {
						out.FinishReason = *ch.FinishReason
					}
				}
			}
		} else if isHTML("", line) && content.Len() == 0 && out.Model == "" {
			return nil, delivered, c.htmlResponse(status, "got an HTML page instead of an event stream", line)
		}
		if err == io.EOF {
			if out.FinishReason != "" {
				// Finished but no [DONE]: some servers omit it. Accept.
				out.Content, out.ToolCalls = content.String(), calls.calls
				return &out, delivered, nil
			}
			return nil, delivered, c.badResponse(status, fmt.Sprintf(
				"stream truncated: ended without [DONE] or a finish_reason after %d bytes of content", content.Len()), lastLine)
		}
		if err != nil {
			return nil, delivered, c.transportError(fmt.Errorf("read stream: %w", err))
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its line ending ("\n", "\r\n" or a
// lone "\r" before "\n"); the error is io.EOF with the last, unterminated line.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxLine {
			return line[:snippetMax*4], errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, err
	}
}

// reached calls req.OnReached for resp, a success, when its content type
// is the API's: JSON or an event stream (an HTML page, or a body of no
// type, is read first).
func reached(req Request, resp *http.Response) {
	if req.OnReached == nil {
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" || mt == "text/event-stream" {
		req.OnReached()
	}
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// isHTML reports whether a body is an HTML page (by type or by its start).
func isHTML(ct string, body []byte) bool {
	if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
		return true
	}
	b := bytes.TrimSpace(body)
	return len(b) > 0 && b[0] == '<'
}
