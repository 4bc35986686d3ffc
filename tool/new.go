package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tractdag/tract/llm"
)

// Option configures a tool New makes.
type Option func(*options)

type options struct {
	schema json.RawMessage
}

// Schema gives the JSON Schema of the tool's arguments instead of the one
// New infers from its argument type: doc must be a JSON Schema of type
// "object", and a call's arguments that pass it must decode into the
// argument type.
func Schema(doc json.RawMessage) Option {
	return func(o *options) { o.schema = doc }
}

// New makes a tool named name of fn: the model calls it with a JSON
// object that decodes into an In, and is sent fn's Out as the result,
// as JSON (an Out of type string as it is). The arguments' JSON Schema is
// inferred from In (a struct: its fields by their json names, a field
// without omitempty required, its jsonschema tag as its description)
// unless Schema gives one. fn runs with no transaction and no lock held;
// its error is sent to the model as the call's result.
//
// What is wrong with the tool (an In no schema can describe, no fn) is
// reported when a turn is given it, by NewSet, before anything is
// written.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) Tool {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t := Tool{Def: llm.ToolDef{Name: name, Description: description, Parameters: o.schema}}
	if t.Def.Parameters == nil {
		s, err := jsonschema.For[In](nil)
		if err == nil {
			t.Def.Parameters, err = json.Marshal(s)
		}
		if err != nil {
			t.err = fmt.Errorf("the schema of its arguments cannot be inferred from %s: %w", reflect.TypeFor[In](), err)
		}
	}
	if fn == nil {
		t.err = fmt.Errorf("it has no function")
		return t
	}
	if t.err == nil {
		// Compiled once here, not by every turn given the tool.
		t.check, t.err = compile(name, t.Def.Parameters)
		t.checked = t.Def.Parameters
	}
	t.Run = func(ctx context.Context, args json.RawMessage) (string, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return "", &ArgumentsError{Err: err}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		if s, ok := any(out).(string); ok {
			return s, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", fmt.Errorf("its result cannot be sent as JSON: %w", err)
		}
		return string(b), nil
	}
	return t
}

// ArgumentsError is returned by a Run that cannot decode its arguments
// (into a New tool's argument type): the call is answered as one whose
// arguments do not match the tool's schema.
type ArgumentsError struct {
	Err error
}

// Error says why the arguments cannot be decoded.
func (e *ArgumentsError) Error() string { return "the arguments cannot be decoded: " + e.Err.Error() }

// Unwrap returns the decoding error.
func (e *ArgumentsError) Unwrap() error { return e.Err }
