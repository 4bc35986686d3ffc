package tract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tractdag/tract"
)

// Messages as OpenAI clients write them (content parts, tool calls with
// null content, tool results) are imported, stored and compiled back
// exactly; log and show read each commit's readable text.
func ExampleReadMessages_shapes() {
	t, done := exampleRepo()
	defer done()
	ctx := context.Background()

	in := `{"role":"user","content":[{"type":"text","text":"Weather where this was taken?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]}
{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}
{"role":"tool","content":"22C, sunny","tool_call_id":"call_1"}
`
	if _, err := t.ImportSeq(ctx, tract.ReadMessages(strings.NewReader(in))); err != nil {
		fmt.Println(err)
		return
	}
	msgs, _ := t.Compile(ctx)
	var out strings.Builder
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		out.Write(b)
		out.WriteByte('\n')
	}
	fmt.Println("compiled back exactly:", out.String() == in)
	log, _ := t.Log(ctx)
	for i := len(log) - 1; i >= 0; i-- {
		fmt.Printf("%s: %s\n", log[i].Role, strings.ReplaceAll(log[i].Text, "\n", " | "))
	}
	// Output:
	// compiled back exactly: true
	// user: Weather where this was taken? | [image: data:image/png…(34 B)]
	// assistant: → tool call get_weather({"city":"Paris"})
	// tool: 22C, sunny
}
