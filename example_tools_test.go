package tract_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// weatherModel stands in for a model that calls tools: asked a question,
// it calls the tool "weather"; given the tool's result, it answers.
type weatherModel struct{}

func (weatherModel) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		return &llm.Response{Content: "In Paris: " + last.Content}, nil
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "call_1", Type: "function",
		Function: llm.FunctionCall{Name: req.Tools[0].Name, Arguments: `{"city":"Paris"}`}}}}, nil
}

// A tool is a Go function: Tool infers the JSON Schema of its arguments
// from the argument type, and Tools offers it to the model. The turn runs
// each call the model makes and commits it with its result before the
// answer.
func ExampleTool() {
	t, done := exampleRepo(tract.WithClient(weatherModel{}), tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	type place struct {
		City string `json:"city" jsonschema:"the city"`
	}
	type forecast struct {
		Sky  string `json:"sky"`
		MaxC int    `json:"max_c"`
	}
	weather := tract.Tool("weather", "Today's weather in a city.", func(_ context.Context, p place) (forecast, error) {
		return forecast{Sky: "sunny", MaxC: 24}, nil
	})
	fmt.Println(string(weather.Def.Parameters))

	res, err := t.Chat(ctx, "What's the weather in Paris?", tract.Tools(weather))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	for _, c := range res.ToolSteps[0].Calls {
		fmt.Printf("%s(%s) → %s\n", c.Name, c.Arguments, c.Result)
	}
	msgs, _ := t.Compile(ctx)
	for _, m := range msgs {
		fmt.Println(m.Role, strings.ReplaceAll(m.Text(), "\n", " "))
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"],"additionalProperties":false}
	// In Paris: {"sky":"sunny","max_c":24}
	// weather({"city":"Paris"}) → {"sky":"sunny","max_c":24}
	// user What's the weather in Paris?
	// assistant → tool call weather({"city":"Paris"})
	// tool {"sky":"sunny","max_c":24}
	// assistant In Paris: {"sky":"sunny","max_c":24}
}
