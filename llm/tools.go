package llm

import "encoding/json"

// ToolDef describes a tool a Request offers the model: OpenAI receives it
// as {"type": "function", "function": {"name", "description",
// "parameters"}}, Anthropic as {"name", "description", "input_schema"}.
type ToolDef struct {
	// Name names the tool to the model: letters, digits, "_" and "-", at
	// most 64 characters.
	Name string
	// Description says what the tool does and when to call it.
	Description string
	// Parameters is the JSON Schema of the call's arguments, a JSON
	// object whose type is "object"; nil means an object of any members.
	Parameters json.RawMessage
}

// ToolChoiceMode says whether the model may, must or must not call a
// tool.
type ToolChoiceMode string

// The modes of a ToolChoice.
const (
	// ToolChoiceAuto lets the model choose between answering and calling
	// tools (the providers' default).
	ToolChoiceAuto ToolChoiceMode = ""
	// ToolChoiceNone forbids calls: the model answers in text.
	ToolChoiceNone ToolChoiceMode = "none"
	// ToolChoiceRequired makes the model call at least one tool.
	ToolChoiceRequired ToolChoiceMode = "required"
	// ToolChoiceTool makes the model call the tool ToolChoice.Name.
	ToolChoiceTool ToolChoiceMode = "tool"
)

// ToolChoice is a Request's tool-choice setting ("tool_choice"); the
// zero value is ToolChoiceAuto.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the tool ToolChoiceTool forces.
	Name string
}
