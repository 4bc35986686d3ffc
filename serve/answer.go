package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/jsonscan"
	"github.com/tractdag/tract/llm"
)

// answer is what the proxy records of an upstream's answer.
type answer struct {
	msg   tract.ImportMessage
	model string
	usage *llm.Usage
}

// errIncomplete is an answer that ended before it was whole.
var errIncomplete = errors.New("the upstream's answer ended before it was complete")

// openAIUsage is the usage of a chat completion.
type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *openAIUsage) usage() *llm.Usage {
	if u == nil {
		return nil
	}
	return &llm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// parseOpenAIAnswer reads a chat completion: its model, its usage and
// its first choice's message, keys matched as encoding/json matches a
// struct's (case aside, the last one winning).
func parseOpenAIAnswer(body []byte) (*answer, error) {
	notCompletion := errors.New("the upstream's answer is not a chat completion")
	ms, ok := jsonscan.Members(body)
	if !ok {
		return nil, notCompletion
	}
	var model string
	var usage *openAIUsage
	var choices []json.RawMessage
	for _, m := range ms {
		var err error
		switch {
		case is(m, "model"):
			err = decodeMember(m, &model)
		case is(m, "usage"):
			err = decodeMember(m, &usage)
		case is(m, "choices"):
			if choices = m.Elems; m.Val[0] != '[' && string(m.Val) != "null" {
				err = notCompletion
			}
		}
		if err != nil {
			return nil, notCompletion
		}
	}
	if len(choices) == 0 {
		return nil, errors.New("the upstream's answer has no choices")
	}
	first, ok := jsonscan.Members(choices[0])
	if !ok {
		return nil, notCompletion
	}
	var raw []byte
	for _, m := range first {
		if is(m, "message") {
			raw = m.Val
		}
	}
	var m llm.Message
	if err := m.UnmarshalJSON(raw); err != nil {
		return nil, errors.New("the upstream's answer is not a message: " + err.Error())
	}
	return newAnswer(m, model, usage.usage())
}

// newAnswer checks m, the upstream's answer, for the record.
func newAnswer(m llm.Message, model string, u *llm.Usage) (*answer, error) {
	m.Role = string(tract.RoleAssistant)
	im, ok, err := convert(m)
	if err != nil {
		return nil, errors.New("the upstream's answer cannot be recorded: " + err.Error())
	}
	if !ok {
		im.Content = "" // an empty answer: recorded as such
	}
	return &answer{msg: im, model: model, usage: u}, nil
}

// openAIStream gathers a streamed chat completion from its events.
type openAIStream struct {
	model    string
	content  strings.Builder
	calls    map[int]*llm.ToolCall
	usage    *openAIUsage
	finished bool
	done     bool
	err      string
}

// event takes the data of one server-sent event.
func (s *openAIStream) event(data []byte) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		s.done = true
		return
	}
	var chunk struct {
		Model   string `json:"model"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *openAIUsage `json:"usage"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &chunk) != nil {
		return
	}
	if chunk.Error != nil {
		s.err = chunk.Error.Message
		return
	}
	if chunk.Model != "" {
		s.model = chunk.Model
	}
	if chunk.Usage != nil {
		s.usage = chunk.Usage
	}
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		s.content.WriteString(c.Delta.Content)
		for _, tc := range c.Delta.ToolCalls {
			if s.calls == nil {
				s.calls = map[int]*llm.ToolCall{}
			}
			call, ok := s.calls[tc.Index]
			if !ok {
				call = &llm.ToolCall{Type: "function"}
				s.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Function.Name != "" {
				call.Function.Name = tc.Function.Name
			}
			call.Function.Arguments += tc.Function.Arguments
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.finished = true
		}
	}
}

// result returns the answer the stream gathered.
func (s *openAIStream) result() (*answer, error) {
	if s.err != "" {
		return nil, errors.New("the upstream's stream reported an error: " + s.err)
	}
	if !s.finished && !s.done {
		return nil, errIncomplete
	}
	m := llm.Message{Role: string(tract.RoleAssistant), Content: s.content.String()}
	idx := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		m.ToolCalls = append(m.ToolCalls, *s.calls[i])
	}
	return newAnswer(m, s.model, s.usage.usage())
}

// anthropicUsage is the usage of a Messages API answer.
type anthropicUsage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CacheCreationTokens int `json:"cache_creation_input_tokens"`
	CacheReadTokens     int `json:"cache_read_input_tokens"`
}

func (u anthropicUsage) usage() *llm.Usage {
	in := u.InputTokens + u.CacheCreationTokens + u.CacheReadTokens
	return &llm.Usage{PromptTokens: in, CompletionTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens,
		CacheCreationTokens: u.CacheCreationTokens, CacheReadTokens: u.CacheReadTokens}
}

// parseAnthropicAnswer reads a Messages API answer.
func parseAnthropicAnswer(body []byte) (*answer, error) {
	var doc struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   anthropicUsage  `json:"usage"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Content) == 0 {
		return nil, errors.New("the upstream's answer is not a Messages API message")
	}
	msgs, err := anthropicMessages("assistant", doc.Content)
	if err != nil {
		return nil, errors.New("the upstream's answer cannot be recorded: " + err.Error())
	}
	return anthropicAnswer(msgs, doc.Model, doc.Usage.usage())
}

// anthropicAnswer is the answer of the messages an assistant's content
// makes (one, or none when it is empty).
func anthropicAnswer(msgs []tract.ImportMessage, model string, u *llm.Usage) (*answer, error) {
	a := &answer{msg: tract.ImportMessage{Role: tract.RoleAssistant}, model: model, usage: u}
	if len(msgs) > 0 {
		a.msg = msgs[len(msgs)-1]
	}
	return a, nil
}

// anthropicStream gathers a streamed Messages API answer from its events.
type anthropicStream struct {
	model   string
	blocks  map[int]*anthropicBlock
	partial map[int]*strings.Builder
	usage   anthropicUsage
	stopped bool
	err     string
}

// event takes the data of one server-sent event.
func (s *anthropicStream) event(data []byte) {
	var ev struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message *struct {
			Model string         `json:"model"`
			Usage anthropicUsage `json:"usage"`
		} `json:"message"`
		ContentBlock *anthropicBlock `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
		Usage *struct {
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.model, s.usage = ev.Message.Model, ev.Message.Usage
		}
	case "content_block_start":
		if ev.ContentBlock != nil {
			if s.blocks == nil {
				s.blocks, s.partial = map[int]*anthropicBlock{}, map[int]*strings.Builder{}
			}
			b := *ev.ContentBlock
			s.blocks[ev.Index], s.partial[ev.Index] = &b, &strings.Builder{}
		}
	case "content_block_delta":
		b, ok := s.blocks[ev.Index]
		if !ok {
			return
		}
		switch ev.Delta.Type {
		case "text_delta":
			b.Text += ev.Delta.Text
		case "input_json_delta":
			s.partial[ev.Index].WriteString(ev.Delta.PartialJSON)
		}
	case "message_delta":
		if ev.Usage != nil {
			s.usage.OutputTokens = ev.Usage.OutputTokens
		}
	case "message_stop":
		s.stopped = true
	case "error":
		s.err = "unknown error"
		if ev.Error != nil {
			s.err = ev.Error.Message
		}
	}
}

// result returns the answer the stream gathered.
func (s *anthropicStream) result() (*answer, error) {
	if s.err != "" {
		return nil, errors.New("the upstream's stream reported an error: " + s.err)
	}
	if !s.stopped {
		return nil, errIncomplete
	}
	idx := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	blocks := make([]anthropicBlock, 0, len(idx))
	for _, i := range idx {
		b := *s.blocks[i]
		if b.Type == "tool_use" && s.partial[i].Len() > 0 {
			b.Input = json.RawMessage(s.partial[i].String())
		}
		blocks = append(blocks, b)
	}
	raw, err := json.Marshal(blocks)
	if err != nil {
		return nil, err
	}
	msgs, err := anthropicMessages("assistant", raw)
	if err != nil {
		return nil, errors.New("the upstream's answer cannot be recorded: " + err.Error())
	}
	return anthropicAnswer(msgs, s.model, s.usage.usage())
}
