package llm

import "context"

// Usage counts the tokens of one or more model calls, as the server reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
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
}

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
	// FinishReason is the server's finish_reason ("stop", "length", …).
	FinishReason string
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
