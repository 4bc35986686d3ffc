// Package tool holds the tools a validated turn offers a model: a
// definition the model reads (name, description, the JSON Schema of the
// arguments) and the function that runs a call.
package tool

import (
	"context"
	"encoding/json"

	"github.com/tractdag/tract/llm"
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
}
