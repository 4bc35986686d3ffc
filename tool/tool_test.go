package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/tool"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sum struct {
	Sum int `json:"sum"`
}

func callOf(name, args string) llm.ToolCall {
	return llm.ToolCall{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: name, Arguments: args}}
}

func TestNew_ResultsAndFailures(t *testing.T) {
	add := tool.New("add", "Adds two numbers.", func(_ context.Context, in addArgs) (sum, error) { return sum{in.A + in.B}, nil })
	echo := tool.New("echo", "Echoes.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	fail := tool.New("fail", "Fails.", func(context.Context, struct{}) (string, error) { return "", errors.New("disk full") })
	// The schema says days may be any number; the argument type takes
	// whole numbers only.
	loose := tool.New("loose", "Takes days.", func(_ context.Context, in struct {
		Days int `json:"days"`
	}) (int, error) {
		return in.Days, nil
	}, tool.Schema(json.RawMessage(`{"type":"object","properties":{"days":{"type":"number"}}}`)))
	set, err := tool.NewSet([]tool.Tool{add, echo, fail, loose})
	require.NoError(t, err)
	assert.Equal(t, []string{"add", "echo", "fail", "loose"}, set.Names())
	assert.Equal(t, 4, set.Len())
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
		string(set.Defs()[0].Parameters))
	assert.Equal(t, "Adds two numbers.", set.Defs()[0].Description)

	for _, tc := range []struct {
		name, tool, args, result string
		failure                  tool.Failure
	}{
		{"struct result as JSON", "add", `{"a":2,"b":3}`, `{"sum":5}`, ""},
		{"string result as is", "echo", `{"text":"hi \"there\""}`, `hi "there"`, ""},
		{"empty result", "echo", `{"text":""}`, tool.EmptyResult, ""},
		{"no arguments at all", "fail", ``, "error: fail failed: disk full", tool.FailError},
		{"extra member", "add", `{"a":1,"b":2,"c":3}`,
			"error: the arguments of add do not match its schema: 1 schema violation: at root: additional properties 'c' not allowed. Call it again with arguments that match its parameters.", tool.FailInvalidArguments},
		{"not an object", "add", `[1,2]`,
			"error: the arguments of add are an array, not a JSON object. Call it again with arguments that match its parameters.", tool.FailInvalidArguments},
		{"passes the schema, not the type", "loose", `{"days":1.5}`,
			"error: the arguments of loose do not fit its parameters: json: cannot unmarshal number 1.5 into Go struct field .days of type int. Call it again with arguments that do.", tool.FailInvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := set.Call(context.Background(), callOf(tc.tool, tc.args))
			assert.Equal(t, tc.result, c.Result)
			assert.Equal(t, tc.failure, c.Failure)
			assert.Equal(t, "call_1", c.ID)
			assert.Equal(t, tc.tool, c.Name)
			assert.Equal(t, tc.args, c.Arguments, "kept as the model wrote them")
		})
	}
}

// A hand-made tool without parameters takes any object.
func TestSet_ToolWithoutParameters(t *testing.T) {
	raw := tool.Tool{Def: llm.ToolDef{Name: "raw"}, Run: func(_ context.Context, args json.RawMessage) (string, error) { return string(args), nil }}
	set, err := tool.NewSet([]tool.Tool{raw})
	require.NoError(t, err)
	assert.Equal(t, `{"x":[1]}`, set.Call(context.Background(), callOf("raw", `{"x":[1]}`)).Result)
	assert.Equal(t, tool.FailInvalidArguments, set.Call(context.Background(), callOf("raw", `"x"`)).Failure)

	_, err = tool.NewSet([]tool.Tool{{Def: llm.ToolDef{Name: "norun"}}})
	assert.EqualError(t, err, `tool "norun": it has no Run function`)
	_, err = tool.NewSet([]tool.Tool{{Def: llm.ToolDef{Name: ""}, Run: raw.Run}})
	assert.EqualError(t, err, `tool 1: a tool's name must be 1 to 64 letters, digits, "_" or "-"`)
}

func TestTrace(t *testing.T) {
	ctx := context.Background()
	assert.Empty(t, tool.Trace(ctx))
	calls := []tool.Call{{ID: "call_1", Name: "add", Result: "3"}}
	assert.Equal(t, calls, tool.Trace(tool.WithTrace(ctx, calls)))
}
