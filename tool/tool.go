// Package tool holds the tools a validated turn offers a model: a
// definition the model reads (name, description, the JSON Schema of the
// arguments) and the function that runs a call.
//
// New makes a tool of a Go function, its arguments' schema inferred from
// the function's argument type. A turn checks its tools with NewSet
// (names, schemas) before it asks anything, and runs each call the model
// makes with Set.Call: the arguments are checked against the schema
// first, and a call that cannot run (an unknown tool, arguments that do
// not match) or that fails is answered with a text that says what was
// wrong, so that the model can correct its call. A validator reads the
// calls the judged answer rests on with Trace.
package tool

import (
	"context"
	"encoding/json"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// Tool is a tool a turn offers the model: Def is what the model is sent,
// Run runs one call.
type Tool struct {
	// Def names and describes the tool and holds the JSON Schema of its
	// arguments.
	Def llm.ToolDef
	// Run runs one call with its arguments, a JSON object already
	// checked against Def.Parameters, and returns the text the model is
	// sent as the call's result. It runs with no transaction and no lock
	// held; an error is sent to the model as the result of the call.
	Run func(ctx context.Context, args json.RawMessage) (string, error)

	// err is what New found wrong with the tool, reported by NewSet.
	err error
	// check is New's compiled Def.Parameters, as they were then
	// (checked); NewSet compiles the parameters of a tool made otherwise,
	// or changed since.
	check   retry.Validator
	checked json.RawMessage
}
