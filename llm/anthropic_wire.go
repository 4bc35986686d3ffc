package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tractdag/tract/internal/jsonerr"
)

// This file holds the Anthropic Messages wire format: request and response
// bodies, the server-sent events of a streamed answer, and the error
// events inside a stream.

type anthropicRequest struct {
	Model       string               `json:"model"`
	MaxTokens   int                  `json:"max_tokens"`
	System      string               `json:"system,omitempty"`
	Messages    []anthropicMessage   `json:"messages"`
	Temperature *float64             `json:"temperature,omitempty"`
	Stream      bool                 `json:"stream,omitempty"`
	Tools       []anthropicTool      `json:"tools,omitempty"`
	ToolChoice  *anthropicToolChoice `json:"tool_choice,omitempty"`
}

// sizeHint is about the bytes of r's JSON.
func (r *anthropicRequest) sizeHint() int {
	n := 200 + len(r.Model) + len(r.System)
	for i := range r.Messages {
		n += r.Messages[i].sizeHint()
	}
	return n
}

// appendJSON appends r as encoding/json writes it: the messages by hand
// (HTML escaped, as their MarshalJSON escapes it), the members around
// them by encoding/json (not escaped).
func (r *anthropicRequest) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"model":`...)
	b = appendString(b, r.Model, false)
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	if r.System != "" {
		b = append(b, `,"system":`...)
		b = appendString(b, r.System, false)
	}
	b = append(b, `,"messages":`...)
	var err error
	if r.Messages == nil {
		b = append(b, "null"...)
	} else if b, err = appendArray(b, len(r.Messages), func(b []byte, i int) ([]byte, error) { return r.Messages[i].appendJSON(b) }); err != nil {
		return b, err
	}
	if r.Temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, err = appendValue(b, *r.Temperature); err != nil {
			return b, err
		}
	}
	if r.Stream {
		b = append(b, `,"stream":true`...)
	}
	if len(r.Tools) > 0 {
		b = append(b, `,"tools":`...)
		if b, err = appendValue(b, r.Tools); err != nil {
			return b, err
		}
	}
	if r.ToolChoice != nil {
		b = append(b, `,"tool_choice":`...)
		if b, err = appendValue(b, r.ToolChoice); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// anthropicMessageBody is a Message object: the whole answer, or (in
// message_start) its start.
type anthropicMessageBody struct {
	Type       string           `json:"type"`
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason *string          `json:"stop_reason"`
	Usage      *anthropicUsage  `json:"usage"`
	Error      json.RawMessage  `json:"error"`
}

// anthropicBlock is a content block: text, or a tool_use with its input.
type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// toolCall returns a tool_use block as a ToolCall whose arguments are
// args, else the block's input: compact JSON, "{}" when there is none.
func (b *anthropicBlock) toolCall(args string) ToolCall {
	if args == "" {
		args = "{}"
		var compact bytes.Buffer
		if in := bytes.TrimSpace(b.Input); len(in) > 0 && string(in) != "null" && json.Compact(&compact, in) == nil {
			args = compact.String()
		}
	}
	return ToolCall{ID: b.ID, Type: "function", Function: FunctionCall{Name: b.Name, Arguments: args}}
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// usage maps Anthropic's counts onto Usage: the prompt is all the input,
// cached or not.
func (u anthropicUsage) usage() Usage {
	prompt := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	return Usage{
		PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		CacheCreationTokens: u.CacheCreationInputTokens, CacheReadTokens: u.CacheReadInputTokens,
	}
}

// anthropicEvent is the data of one server-sent event of a stream; Type
// says which of the other fields are set.
type anthropicEvent struct {
	Type         string                `json:"type"`
	Message      *anthropicMessageBody `json:"message"`       // message_start
	Index        int                   `json:"index"`         // content_block_*
	ContentBlock *anthropicBlock       `json:"content_block"` // content_block_start
	Delta        *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"` // content_block_delta, message_delta
	Usage *anthropicUsage `json:"usage"` // message_delta
	Error json.RawMessage `json:"error"` // error
}

// streamedCall is a tool call of a streamed answer: its block's start
// (id, name) and the pieces of its input gathered so far.
type streamedCall struct {
	block anthropicBlock
	args  []byte
}

// anthropicErrorTypes are Anthropic's error types by the HTTP status
// each stands for.
var anthropicErrorTypes = [...]struct {
	status int
	typ    string
}{
	{http.StatusBadRequest, "invalid_request_error"},
	{http.StatusUnauthorized, "authentication_error"},
	{http.StatusForbidden, "permission_error"},
	{http.StatusNotFound, "not_found_error"},
	{http.StatusRequestEntityTooLarge, "request_too_large"},
	{http.StatusTooManyRequests, "rate_limit_error"},
	{529, "overloaded_error"},
}

// AnthropicErrorStatus is the HTTP status an Anthropic error type stands
// for (500 for api_error and types it does not know), used to classify
// an error event inside a stream, which arrives with a 200.
func AnthropicErrorStatus(typ string) int {
	for _, e := range anthropicErrorTypes {
		if e.typ == typ {
			return e.status
		}
	}
	return http.StatusInternalServerError
}

// AnthropicErrorType is the Anthropic error type of an HTTP status: the
// type of a status it stands for, else invalid_request_error below 500
// and api_error from 500.
func AnthropicErrorType(status int) string {
	for _, e := range anthropicErrorTypes {
		if e.status == status {
			return e.typ
		}
	}
	if status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// errorEvent maps the error member of an error event, or of an error
// document in a 200 answer, onto the typed error of the status its type
// stands for (so an overloaded_error before any text is retried).
func (c *Anthropic) errorEvent(status int, raw json.RawMessage) error {
	typ, code, msg, ok := parseErrorField(raw)
	if !ok {
		return c.badResponse(status, "malformed error event", raw)
	}
	r := c.redactor
	st := AnthropicErrorStatus(typ)
	return c.classify(st, APIError{StatusCode: st, Type: r.redact(typ), Code: r.redact(code), Message: r.redact(msg)})
}

// readJSON decodes a non-streamed answer. tool names the tool of a schema
// ("" for none), whose input is the answer's text; the other tool_use
// blocks are its tool calls.
func (c *Anthropic) readJSON(resp *http.Response, tool string) (*Response, error) {
	status, trimmed, err := c.readBody(resp)
	if err != nil {
		return nil, err
	}
	var doc anthropicMessageBody
	if err := json.Unmarshal(trimmed, &doc); err != nil {
		return nil, c.badResponse(status, "invalid JSON: "+jsonerr.Describe(err), trimmed)
	}
	if len(doc.Error) > 0 && string(doc.Error) != "null" {
		return nil, c.errorEvent(status, doc.Error)
	}
	if doc.Type != "message" {
		return nil, c.badResponse(status, fmt.Sprintf("not a message (type %q)", doc.Type), trimmed)
	}
	var text strings.Builder
	var input json.RawMessage
	var calls []ToolCall
	for _, b := range doc.Content {
		switch {
		case b.Type == "text":
			text.WriteString(b.Text)
		case b.Type == "tool_use" && tool != "" && b.Name == tool:
			input = b.Input
		case b.Type == "tool_use":
			calls = append(calls, b.toolCall(""))
		}
	}
	r := &Response{Content: text.String(), Model: doc.Model, ToolCalls: calls}
	if input != nil {
		r.Content = string(input)
	}
	if doc.StopReason != nil {
		r.FinishReason = *doc.StopReason
	}
	if doc.Usage != nil {
		r.Usage = doc.Usage.usage()
	}
	return r, nil
}

// readStream consumes a streamed answer: message_start (model, input
// usage), content blocks (text_delta, or input_json_delta of a tool_use:
// the schema's tool, whose input is the answer's text and goes to
// onDelta, or a tool call, whose input is gathered into its arguments),
// message_delta (stop reason, output usage), message_stop; ping
// events are ignored and an error event ends the call with its typed
// error. Events are read from their "data:" lines, whose JSON names the
// event type; "event:" lines are redundant and skipped.
func (c *Anthropic) readStream(resp *http.Response, tool string, onDelta func(string)) (*Response, bool, error) {
	status := resp.StatusCode
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var (
		out       Response
		usage     anthropicUsage
		text      strings.Builder
		input     strings.Builder
		toolBlock = -1 // the index of the schema tool's block
		hasTool   bool
		calls     []streamedCall  // the tool calls, in the order they started
		callOf    = map[int]int{} // a call's position in calls by its block's index
		callSize  int             // bytes of their ids, names and arguments
		delivered bool
		lastLine  []byte
		stopped   bool // a stop_reason arrived
	)
	finish := func() (*Response, bool, error) {
		out.Content = text.String()
		if hasTool {
			out.Content = input.String()
		}
		for i := range calls {
			out.ToolCalls = append(out.ToolCalls, calls[i].block.toolCall(string(calls[i].args)))
		}
		out.Usage = usage.usage()
		return &out, delivered, nil
	}
	tooLong := func() error {
		return c.badResponse(status, fmt.Sprintf("streamed answer longer than %d bytes", maxBody), nil)
	}
	emit := func(b *strings.Builder, piece string) error {
		if text.Len()+input.Len()+callSize+len(piece) > maxBody {
			return tooLong()
		}
		b.WriteString(piece)
		if piece != "" {
			onDelta(piece)
			delivered = true
		}
		return nil
	}
	// callAt returns the tool call of the block at index, or nil.
	callAt := func(index int) *streamedCall {
		if i, ok := callOf[index]; ok {
			return &calls[i]
		}
		return nil
	}
	for {
		line, err := readLine(r)
		if err == errLineTooLong {
			return nil, delivered, c.badResponse(status, fmt.Sprintf("stream line longer than %d bytes", maxLine), line)
		}
		if len(line) > 0 {
			lastLine = line
		}
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(data)) > 0 {
			data = bytes.TrimSpace(data)
			var ev anthropicEvent
			if jerr := json.Unmarshal(data, &ev); jerr != nil {
				return nil, delivered, c.badResponse(status, "invalid JSON in stream event: "+jsonerr.Describe(jerr), data)
			}
			switch ev.Type {
			case "message_start":
				if ev.Message != nil {
					out.Model = ev.Message.Model
					if ev.Message.Usage != nil {
						usage = *ev.Message.Usage
					}
				}
			case "content_block_start":
				b := ev.ContentBlock
				switch {
				case b == nil || b.Type != "tool_use":
				case tool != "" && b.Name == tool:
					toolBlock, hasTool = ev.Index, true
				case callAt(ev.Index) == nil && ev.Index != toolBlock:
					callSize += len(b.ID) + len(b.Name) + len(b.Input)
					if text.Len()+input.Len()+callSize > maxBody {
						return nil, delivered, tooLong()
					}
					callOf[ev.Index] = len(calls)
					calls = append(calls, streamedCall{block: *b})
				}
			case "content_block_delta":
				if ev.Delta == nil {
					break
				}
				var werr error
				switch {
				case ev.Delta.Type == "text_delta":
					werr = emit(&text, ev.Delta.Text)
				case ev.Delta.Type == "input_json_delta" && ev.Index == toolBlock:
					werr = emit(&input, ev.Delta.PartialJSON)
				case ev.Delta.Type == "input_json_delta":
					if call := callAt(ev.Index); call != nil {
						callSize += len(ev.Delta.PartialJSON)
						if text.Len()+input.Len()+callSize > maxBody {
							werr = tooLong()
						}
						call.args = append(call.args, ev.Delta.PartialJSON...)
					}
				}
				if werr != nil {
					return nil, delivered, werr
				}
			case "message_delta":
				if ev.Delta != nil && ev.Delta.StopReason != nil {
					out.FinishReason, stopped = *ev.Delta.StopReason, true
				}
				if ev.Usage != nil {
					// Counts in message_delta are cumulative: take those given.
					usage.OutputTokens = ev.Usage.OutputTokens
					if ev.Usage.InputTokens > 0 {
						usage.InputTokens = ev.Usage.InputTokens
					}
				}
			case "message_stop":
				return finish()
			case "error":
				return nil, delivered, c.errorEvent(status, ev.Error)
			}
		} else if !ok && isHTML("", line) && out.Model == "" && !delivered {
			return nil, delivered, c.htmlResponse(status, "got an HTML page instead of an event stream", line)
		}
		if err == io.EOF {
			if stopped {
				return finish() // a stop reason but no message_stop: accept
			}
			return nil, delivered, c.badResponse(status, fmt.Sprintf(
				"stream truncated: ended without message_stop or a stop_reason after %d bytes of content", text.Len()+input.Len()), lastLine)
		}
		if err != nil {
			return nil, delivered, c.transportError(fmt.Errorf("read stream: %w", err))
		}
	}
}
