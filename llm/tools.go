package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/tractdag/tract/internal/jsonerr"
)

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
	// object whose type is "object"; nil (or null, or {}) means an object
	// of any members, sent as {"type": "object", "properties": {}}.
	Parameters json.RawMessage
}

// NewToolCall returns the call of the tool name with arguments, a JSON
// text, as an answer carries it: a "function" call whose id is id.
func NewToolCall(id, name, arguments string) ToolCall {
	return ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: name, Arguments: arguments}}
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

// ToolDefError is a tool definition or a tool choice of a Request that
// cannot be sent. Request.CheckTools finds it, and the clients refuse such
// a request with it (wrapped) before sending anything.
type ToolDefError struct {
	// Index is the tool's position in Request.Tools, or -1 when the fault
	// is the ToolChoice's.
	Index int
	// Tool is the tool's name as given; with Index -1, the tool the
	// choice names ("" for none).
	Tool string
	// Field is what is at fault: "name", "parameters" or "tool_choice".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the tool (or the tool choice) and what is wrong.
func (e *ToolDefError) Error() string {
	if e.Index < 0 {
		return "tool_choice " + e.Reason
	}
	return fmt.Sprintf("tools[%d] %q: %s %s", e.Index, e.Tool, e.Field, e.Reason)
}

// defaultParameters is sent for a ToolDef without Parameters: an object
// of any members.
var defaultParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// parameters returns the schema a tool is sent with: its Parameters, or
// defaultParameters when they are nil, null or {}.
func (d ToolDef) parameters() json.RawMessage {
	p := bytes.TrimSpace(d.Parameters)
	if len(p) == 0 || string(p) == "null" {
		return defaultParameters
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(p, &obj) == nil && len(obj) == 0 {
		return defaultParameters
	}
	return d.Parameters
}

// CheckTools reports the first problem of r's tools and tool choice as a
// *ToolDefError: a tool name that is empty, longer than 64 characters,
// made of anything but letters, digits, "_" and "-", or given twice (or
// given to the Schema too, which Anthropic receives as a tool);
// Parameters that are not a JSON Schema of an object (a JSON object whose
// "type" is "object"; nil, null and {} stand for an object of any
// members); a ToolChoice of an unknown mode, one that names a tool
// without ToolChoiceTool, forces a tool not among Tools, or requires a
// call with no tools offered. Both clients run it before sending.
func (r Request) CheckTools() error {
	seen := make(map[string]int, len(r.Tools))
	for i, d := range r.Tools {
		fail := func(field, format string, args ...any) error {
			return &ToolDefError{Index: i, Tool: d.Name, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
		if reason := badToolName(d.Name); reason != "" {
			return fail("name", "%s", reason)
		}
		if j, ok := seen[d.Name]; ok {
			return fail("name", "is also the name of tools[%d]: tool names must be unique", j)
		}
		seen[d.Name] = i
		if r.Schema != nil && r.Schema.Name == d.Name {
			return fail("name", "is also the name of the request's schema, which Anthropic receives as a tool of that name")
		}
		if reason := badParameters(d.parameters()); reason != "" {
			return fail("parameters", "%s", reason)
		}
	}
	c := r.ToolChoice
	fail := func(format string, args ...any) error {
		return &ToolDefError{Index: -1, Tool: c.Name, Field: "tool_choice", Reason: fmt.Sprintf(format, args...)}
	}
	switch c.Mode {
	case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		if c.Name != "" {
			return fail("names the tool %q, but only mode %q names a tool (mode is %q)", c.Name, ToolChoiceTool, c.Mode)
		}
		if c.Mode == ToolChoiceRequired && len(r.Tools) == 0 {
			return fail("requires a tool call, but the request offers no tools")
		}
	case ToolChoiceTool:
		if c.Name == "" {
			return fail("forces a tool but names none")
		}
		if _, ok := seen[c.Name]; !ok {
			return fail("forces the tool %q, which is not among the %d tools offered", c.Name, len(r.Tools))
		}
	default:
		return fail("has the unknown mode %q (want %q for auto, %q, %q or %q)", c.Mode, ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired, ToolChoiceTool)
	}
	return nil
}

// badToolName says what is wrong with a tool name, or "".
func badToolName(name string) string {
	if name == "" {
		return "is empty"
	}
	if n := utf8.RuneCountInString(name); n > maxSchemaName {
		return fmt.Sprintf("is %d characters long, more than the %d allowed", n, maxSchemaName)
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Sprintf("has %q, which is not a letter, digit, \"_\" or \"-\"", c)
		}
	}
	return ""
}

// badParameters says what is wrong with a tool's parameters schema, or "".
func badParameters(p json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(p, &obj); err != nil {
		if !json.Valid(p) {
			return "are not valid JSON: " + jsonerr.Describe(err)
		}
		return "are " + jsonerr.Kind(p) + ", not a JSON Schema object"
	}
	typ, ok := obj["type"]
	if !ok {
		return `have no "type": the arguments are an object, so the schema needs "type": "object"`
	}
	var s string
	if json.Unmarshal(typ, &s) != nil || s != "object" {
		return fmt.Sprintf(`have the type %s: the arguments are an object, so the type must be "object"`, typ)
	}
	return ""
}
