package tool_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/tool"
)

// A validator given to a turn with tools reads the calls the answer rests
// on from its context: this one rejects an answer no successful lookup
// stands behind. (A turn sets the trace itself; WithTrace stands in for it
// here.)
func ExampleTrace() {
	lookedUp := retry.ValidatorFunc("looked-up", func(ctx context.Context, _ string) (bool, string, error) {
		ok := slices.ContainsFunc(tool.Trace(ctx), func(c tool.Call) bool { return c.Name == "lookup" && c.Failure == "" })
		return ok, "call lookup before you answer", nil
	})
	ctx := context.Background()
	ok, diagnosis, _ := lookedUp.Validate(ctx, "Sunny, I guess.")
	fmt.Println(ok, diagnosis)

	lookup := tool.New("lookup", "Looks up the weather.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	set, _ := tool.NewSet([]tool.Tool{lookup})
	call := set.Call(ctx, llm.ToolCall{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: "lookup", Arguments: `{"city":"Oslo"}`}})
	fmt.Println(call.Result)
	ok, _, _ = lookedUp.Validate(tool.WithTrace(ctx, []tool.Call{call}), "Sunny in Oslo.")
	fmt.Println(ok)
	// Output:
	// false call lookup before you answer
	// sunny in Oslo
	// true
}
