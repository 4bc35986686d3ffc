package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// The shapes beyond text go to Anthropic as content blocks: parts as
// text, image and document blocks, tool calls as tool_use, a tool's
// answer as a tool_result in a user message, merged with its neighbours
// of the same role; plain messages stay strings.
func TestAnthropic_MessageShapesAsContentBlocks(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	c, _ := newAnthropic(t, srv)

	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: "user", Parts: []llm.Part{
			llm.TextPart("What is in these?"),
			llm.ImagePart("data:image/png;base64,iVBORw0KGgo=", "low"),
			llm.ImagePart("https://example.com/cat.jpg", ""),
			{Type: llm.PartFile, File: &llm.File{Filename: "a.pdf", FileData: "data:application/pdf;base64,JVBERi0="}},
		}},
		{Role: "assistant", Content: "Let me look.", ToolCalls: []llm.ToolCall{
			{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: "describe", Arguments: `{"n":2}`}},
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "a cat and a report"},
		{Role: "user", Content: "Thanks.", Name: "ada"},
		{Role: "assistant", Content: "You're welcome."},
	}})
	require.NoError(t, err)

	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(srv.Requests()[0].Body, &body))
	require.Len(t, body.Messages, 4)
	wants := []struct{ role, content string }{
		{"user", `[{"type":"text","text":"What is in these?"},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
			`{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},` +
			`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]`},
		{"assistant", `[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"call_1","name":"describe","input":{"n":2}}]`},
		{"user", `[{"type":"tool_result","tool_use_id":"call_1","content":"a cat and a report"},{"type":"text","text":"Thanks."}]`},
		{"assistant", `"You're welcome."`},
	}
	for i, want := range wants {
		assert.Equal(t, want.role, body.Messages[i].Role, "message %d", i)
		assert.JSONEq(t, want.content, string(body.Messages[i].Content), "message %d", i)
	}
}

// A shape the Messages API has no place for is refused before anything
// is sent, naming the message and the part.
func TestAnthropic_UnsupportedShapesAreRefused(t *testing.T) {
	tests := []struct {
		name string
		msg  llm.Message
		want string
	}{
		{"audio", llm.Message{Role: "user", Parts: []llm.Part{{Type: llm.PartInputAudio, InputAudio: &llm.InputAudio{Data: "AAAA", Format: "wav"}}}},
			"message 1 (user): content[0]: input_audio parts cannot be sent to Anthropic"},
		{"file by id", llm.Message{Role: "user", Parts: []llm.Part{{Type: llm.PartFile, File: &llm.File{FileID: "file-1"}}}},
			"content[0]: file: a file by id (file-1) is OpenAI's to resolve"},
		{"not a PDF", llm.Message{Role: "user", Parts: []llm.Part{{Type: llm.PartFile, File: &llm.File{FileData: "data:text/plain;base64,aGk="}}}},
			"text/plain documents cannot be sent to Anthropic (PDF only)"},
		{"image by other URL", llm.Message{Role: "user", Parts: []llm.Part{llm.ImagePart("ftp://x/y.png", "")}},
			"neither a data: URL nor an http(s) URL"},
		{"arguments not an object", llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
			{ID: "c", Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: `[1]`}}}},
			"tool_calls[0]: the arguments of f are not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			c, _ := newAnthropic(t, srv)
			_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{tt.msg}})
			require.ErrorIs(t, err, llm.ErrUnsupported)
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, srv.Requests(), "nothing is sent")
		})
	}
}
