//go:build unix

package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/tool"
)

// A command tool: the call's arguments go to a sed script on standard input, and
// its standard output is the result the model reads.
func ExampleCommand() {
	def := llm.ToolDef{
		Name:        "shout",
		Description: "Returns the text in capitals.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`),
	}
	shout, err := tool.Command(def, []string{"sh", "-c", "sed 's/.*\"input\":\"\\([^\"]*\\)\".*/\\1/' | tr a-z A-Z"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := shout.Run(context.Background(), json.RawMessage(`{"input":"hello"}`))
	fmt.Println(out, err)
	// Output: HELLO <nil>
}
