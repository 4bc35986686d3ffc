package llm

import (
	"context"
	"encoding/json"
)

// Usage counts the tokens of one or more model calls, as the server reports them.
type Usage struct {
	// PromptTokens counts the input: for Anthropic, input_tokens plus the
	// cache tokens below.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CacheCreationTokens and CacheReadTokens are the part of the input
	// written to and read from the server's prompt cache, when it reports
	// them (Anthropic's cache_creation_input_tokens and
	// cache_read_input_tokens).
	CacheCreationTokens int `json:"cache_creation_tokens,omitempty"`
	CacheReadTokens     int `json:"cache_read_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:        u.PromptTokens + v.PromptTokens,
		CompletionTokens:    u.CompletionTokens + v.CompletionTokens,
		TotalTokens:         u.TotalTokens + v.TotalTokens,
		CacheCreationTokens: u.CacheCreationTokens + v.CacheCreationTokens,
		CacheReadTokens:     u.CacheReadTokens + v.CacheReadTokens,
	}
}

// Request is one chat-completion call.
type Request struct {
	// Model names the model; empty means the client's default.
	Model string
	// Messages is the conversation to answer, oldest first.
	Messages []Message
	// Temperature, when non-nil, is sent as the sampling temperature.
	Temperature *float64
	// OnDelta, when non-nil, asks for a streamed answer and receives each
	// piece of text as it arrives. The Response still carries the whole text.
	OnDelta func(delta string)
	// OnReached, when non-nil, is called once, on the calling goroutine,
	// when the server starts answering: a response with a success status
	// and the API's content type (JSON or an event stream) arrived, before
	// its body is read. A failure before that (no server, a refused key,
	// a 404, an HTML page) never calls it. Clients other than this
	// package's may not call it at all.
	OnReached func()
	// Schema, when non-nil, asks for an answer constrained to a JSON
	// Schema where the provider supports it (Response.Structured says what
	// became of it). The caller still validates the answer.
	Schema *Schema
	// Tools are the tools the model may call (see ToolDef); the answer's
	// calls come back in Response.ToolCalls, and their results go in the
	// next Request as messages of role "tool" whose ToolCallID names the
	// call.
	Tools []ToolDef
	// ToolChoice says whether the model may, must or must not call one of
	// Tools; the zero value lets it choose.
	ToolChoice ToolChoice
}

// Schema is a JSON Schema sent with a Request for constrained
// ("structured") output: OpenAI receives it as response_format
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}},
// Anthropic as a forced tool whose input_schema it is (the tool's input
// becomes the answer's text). NewSchema builds one from a schema file.
type Schema struct {
	// Name names the schema to the server: letters, digits, "_" and "-",
	// at most 64 characters.
	Name string
	// Schema is the JSON Schema document, a JSON object.
	Schema json.RawMessage
	// Strict asks OpenAI for strict mode, which accepts only schemas whose
	// every object lists all its properties as required and sets
	// additionalProperties to false (NewSchema sets it when that holds).
	Strict bool
}

// StructuredOutcome says what became of a Request's Schema.
type StructuredOutcome string

// The outcomes of a Request's Schema.
const (
	// StructuredNone: the request carried no schema.
	StructuredNone StructuredOutcome = ""
	// StructuredSent: the schema went to the server with the request that
	// answered.
	StructuredSent StructuredOutcome = "sent"
	// StructuredRejected: the server refused the schema (a 400 naming
	// it); the answer comes from a second request without it.
	StructuredRejected StructuredOutcome = "rejected"
	// StructuredUnsupported: the client could not send this schema (the
	// Anthropic client sends only schemas of objects) and sent none.
	StructuredUnsupported StructuredOutcome = "unsupported"
)

// Response is the answer to a Request.
type Response struct {
	// Content is the full text of the answer.
	Content string
	// ToolCalls are the function calls the answer makes, in order (nil
	// when it makes none); a streamed answer's are assembled from its
	// chunks.
	ToolCalls []ToolCall
	// Model is the model that answered, as the server names it.
	Model string
	// Usage is the token usage the server reported (zero when it reported none).
	Usage Usage
	// FinishReason is the server's finish_reason ("stop", "length", …;
	// Anthropic's stop_reason: "end_turn", "max_tokens", "tool_use", …).
	FinishReason string
	// Structured says what became of the Request's Schema; with
	// StructuredRejected, StructuredError is the server's refusal.
	Structured      StructuredOutcome
	StructuredError string
}

// Message returns the answer as the assistant message it adds to the
// conversation.
func (r *Response) Message() Message {
	return Message{Role: "assistant", Content: r.Content, ToolCalls: r.ToolCalls}
}

// Client answers chat-completion requests. Implementations retry transient
// transport failures themselves; an error they return is final for the call.
type Client interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Describer is implemented by clients that can say what they talk to:
// Provider names the kind of server ("openai"), DefaultModel the model of
// requests that name none. tract records both on the error commit of a
// failed model call.
type Describer interface {
	Provider() string
	DefaultModel() string
}
