package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// Set is the tools one turn offers, checked by NewSet: it gives their
// definitions to the model and runs the model's calls.
type Set struct {
	tools  []entry
	byName map[string]int
}

// entry is one tool of a Set, with its compiled schema (nil: any object).
type entry struct {
	Tool
	check retry.Validator
}

// validName reports whether name is a tool name both providers take: 1
// to 64 ASCII letters, digits, "_" and "-". (A loop, not a regular
// expression: compiling `^[A-Za-z0-9_-]{1,64}$` at start-up cost every
// command 860 allocations and a 128 KiB stack.)
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewSet checks ts, the tools a turn offers, and returns them as a Set:
// a tool without a valid name (letters, digits, "_" and "-", 1 to 64
// characters), two tools of one name, a tool without a Run, or one whose
// Parameters are not a JSON Schema of type "object" are errors, each
// naming the tool.
func NewSet(ts []Tool) (*Set, error) {
	s := &Set{byName: make(map[string]int, len(ts))}
	for i, t := range ts {
		name := t.Def.Name
		what := fmt.Sprintf("tool %q", name)
		if name == "" {
			what = fmt.Sprintf("tool %d", i+1)
		}
		switch _, dup := s.byName[name]; {
		case !validName(name):
			return nil, fmt.Errorf("%s: a tool's name must be 1 to 64 letters, digits, \"_\" or \"-\"", what)
		case dup:
			return nil, fmt.Errorf("%s: two tools have this name; each tool needs its own", what)
		case t.err != nil:
			return nil, fmt.Errorf("%s: %w", what, t.err)
		case t.Run == nil:
			return nil, fmt.Errorf("%s: it has no Run function", what)
		}
		e := entry{Tool: t}
		if t.check != nil && bytes.Equal(t.checked, t.Def.Parameters) {
			e.check = t.check
		} else {
			var err error
			if e.check, err = compile(name, t.Def.Parameters); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		s.byName[name] = len(s.tools)
		s.tools = append(s.tools, e)
	}
	return s, nil
}

// compile checks params, a tool's parameters, and compiles them: nil
// (no parameters) takes any object.
func compile(name string, params json.RawMessage) (retry.Validator, error) {
	if params == nil {
		return nil, nil
	}
	var doc struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(params, &doc); err != nil {
		return nil, fmt.Errorf("its parameters are not a JSON object: %w", err)
	}
	if doc.Type != "object" {
		return nil, fmt.Errorf(`its parameters' schema must be of type "object" (the arguments are a JSON object), not %s`, describeType(doc.Type))
	}
	check, err := retry.SchemaDocument(name, params)
	if err != nil {
		return nil, fmt.Errorf("its parameters' schema: %w", err)
	}
	return check, nil
}

func describeType(v any) string {
	if v == nil {
		return "untyped"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Len is the number of tools in s.
func (s *Set) Len() int { return len(s.tools) }

// Defs are the tools' definitions, in the order given, as a request
// sends them.
func (s *Set) Defs() []llm.ToolDef {
	defs := make([]llm.ToolDef, len(s.tools))
	for i, t := range s.tools {
		defs[i] = t.Def
	}
	return defs
}

// Names are the tools' names, in the order given.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Def.Name
	}
	return names
}

// Failure says why a call got no result of its tool's.
type Failure string

// The failures of a call.
const (
	// FailUnknownTool: the model called a tool the turn does not offer.
	FailUnknownTool Failure = "unknown_tool"
	// FailInvalidArguments: the arguments are not a JSON object that
	// matches the tool's schema.
	FailInvalidArguments Failure = "invalid_arguments"
	// FailError: the tool ran and returned an error.
	FailError Failure = "tool_error"
)

// Call is one call the model made and what it was sent back.
type Call struct {
	// ID is the call's id, which its result names (tool_call_id).
	ID string `json:"id"`
	// Name is the tool called.
	Name string `json:"name"`
	// Arguments are the arguments as the model wrote them (JSON).
	Arguments string `json:"arguments"`
	// Result is the text the model was sent: the tool's result, or what
	// was wrong with the call.
	Result string `json:"result"`
	// Failure says why the call got no result of the tool's ("" when it
	// did).
	Failure Failure `json:"failure,omitempty"`
	// DurationMS is how long the tool ran, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
}

// EmptyResult is the result a model is sent for a tool that returned
// nothing (a message needs a text).
const EmptyResult = "(empty result)"

// Call runs the call c of the model: it finds the tool, checks the
// arguments against its schema, and runs it. A call that cannot run, or
// whose tool returns an error, is answered with a text that says what was
// wrong ("error: …"), and its Failure says which; Call itself never
// fails. ctx is the tool's: a cancelled ctx is the caller's to notice.
func (s *Set) Call(ctx context.Context, c llm.ToolCall) Call {
	out := Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
	i, ok := s.byName[c.Function.Name]
	if !ok {
		out.Failure = FailUnknownTool
		out.Result = fmt.Sprintf("error: there is no tool named %q; the tools you may call are %s.", c.Function.Name, strings.Join(s.Names(), ", "))
		return out
	}
	t := s.tools[i]
	args := strings.TrimSpace(c.Function.Arguments)
	if args == "" {
		args = "{}" // a call without arguments, as some models write it
	}
	if msg := t.checkArgs(ctx, args); msg != "" {
		out.Failure, out.Result = FailInvalidArguments, fmt.Sprintf("error: the arguments of %s %s. Call it again with arguments that match its parameters.", t.Def.Name, msg)
		return out
	}
	start := time.Now()
	res, err := t.Run(ctx, json.RawMessage(args))
	out.DurationMS = time.Since(start).Milliseconds()
	var ae *ArgumentsError
	switch {
	case errors.As(err, &ae):
		out.Failure, out.Result = FailInvalidArguments, fmt.Sprintf("error: the arguments of %s do not fit its parameters: %s. Call it again with arguments that do.", t.Def.Name, ae.Err)
	case err != nil:
		out.Failure, out.Result = FailError, fmt.Sprintf("error: %s failed: %s", t.Def.Name, err)
	case res == "":
		out.Result = EmptyResult
	default:
		out.Result = res
	}
	return out
}

// checkArgs says what is wrong with args ("" when nothing is): not JSON,
// not an object, or not matching the tool's schema.
func (e entry) checkArgs(ctx context.Context, args string) string {
	if err := json.Unmarshal([]byte(args), new(json.RawMessage)); err != nil {
		return "are not valid JSON (" + err.Error() + ")"
	}
	if kind := jsonerr.Kind([]byte(args)); kind != "an object" {
		return "are " + kind + ", not a JSON object"
	}
	if e.check == nil {
		return ""
	}
	ok, diagnosis, err := e.check.Validate(ctx, args)
	switch {
	case err != nil:
		return "could not be checked against its schema (" + err.Error() + ")"
	case !ok:
		return "do not match its schema: " + diagnosis
	}
	return ""
}

// traceKey is the context key of Trace.
type traceKey struct{}

// WithTrace returns ctx carrying calls, the tool calls of the answer a
// validator is given, in the order they were made: a turn sets it for
// its validators.
func WithTrace(ctx context.Context, calls []Call) context.Context {
	return context.WithValue(ctx, traceKey{}, calls)
}

// Trace returns the tool calls the answer being judged rests on: every
// call of its attempt's tool steps, in the order they were made, with
// what each got back. A validator reads it from the context it is given
// (retry.Validator's Validate); it is empty for an attempt that called no
// tool, and outside a turn with tools.
func Trace(ctx context.Context) []Call {
	calls, _ := ctx.Value(traceKey{}).([]Call)
	return calls
}
