package ingest_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/llm"
)

// Message's JSON is the message with "kind" and "meta"; it reads
// back as it was written.
func TestMessage_JSON(t *testing.T) {
	for _, m := range []ingest.Message{
		{Role: dag.RoleUser, Content: "hi"},
		{Kind: dag.KindNote, Role: dag.RoleSystem, Content: "n", Meta: json.RawMessage(`{"a":1}`)},
		{Role: dag.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: "{}"}}},
			Extra: map[string]json.RawMessage{"refusal": json.RawMessage("null")}, Meta: json.RawMessage(`{"k":"v"}`)},
		{Role: dag.RoleUser, Parts: []llm.Part{llm.TextPart("a"), llm.ImagePart("https://x/y.png", "")}, Name: "n"},
	} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var back ingest.Message
		require.NoError(t, json.Unmarshal(b, &back), string(b))
		assert.Equal(t, m, back, string(b))
	}
	b, err := json.Marshal(ingest.Message{Kind: dag.KindNote, Role: dag.RoleSystem, Content: "n", Meta: json.RawMessage(`{"a":1}`)})
	require.NoError(t, err)
	assert.Equal(t, `{"role":"system","content":"n","kind":"note","meta":{"a":1}}`, string(b))
	_, err = json.Marshal(ingest.Message{Role: dag.RoleUser, Content: "a", Extra: map[string]json.RawMessage{"kind": json.RawMessage(`"x"`)}})
	assert.ErrorContains(t, err, "kind is tract's")
}

// A message that is more than a role and a text keeps the rest as its
// shape, which ShapedMessage turns back into the message.
func TestMessage_StoredAndShapedMessage(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: `{"x":1}`}}
	for _, m := range []ingest.Message{
		{Role: dag.RoleUser, Content: "plain"},
		{Role: dag.RoleUser, Content: "named", Name: "bob"},
		{Role: dag.RoleAssistant, Content: "calling", ToolCalls: []llm.ToolCall{call}},
		{Role: dag.RoleTool, Content: "42", ToolCallID: "c1"},
		{Role: dag.RoleUser, Parts: []llm.Part{llm.TextPart("look"), llm.ImagePart("https://x/y.png", "low")}},
	} {
		text, shape, err := m.Stored()
		require.NoError(t, err)

		if m.Name == "" && m.ToolCalls == nil && m.ToolCallID == "" && m.Parts == nil {
			assert.Nil(t, shape, "a role and a text have no shape")
			assert.Equal(t, m.Content, text)
			continue
		}
		back, err := ingest.ShapedMessage(m.Role, text, shape)
		require.NoError(t, err)
		want := llm.Message{Role: string(m.Role), Content: m.Content, Parts: m.Parts, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		assert.Equal(t, want, back)
	}
}

func TestMessage_StoredRefusesWhatCannotBeKept(t *testing.T) {
	_, _, err := (&ingest.Message{Role: dag.RoleUser}).Stored()
	assert.ErrorIs(t, err, dag.ErrInvalidText, "no content at all")
	_, _, err = (&ingest.Message{Role: dag.RoleAssistant, ToolCalls: []llm.ToolCall{{Type: "function", Function: llm.FunctionCall{Name: "f"}}}}).Stored()
	assert.ErrorContains(t, err, "tool_calls[0].id is missing or empty")
}

func TestCheckKindRole(t *testing.T) {
	assert.NoError(t, ingest.CheckKindRole(dag.KindNote, dag.RoleSystem))
	assert.ErrorIs(t, ingest.CheckKindRole("poem", dag.RoleUser), dag.ErrInvalidKind)
	assert.ErrorIs(t, ingest.CheckKindRole(dag.KindMessage, "robot"), dag.ErrInvalidRole)
}
