package llm_test

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// Ask Claude for an answer constrained to a JSON Schema, against the local
// test server; in real use the client comes from
// llm.NewFromEnv(os.Getenv, "anthropic") with ANTHROPIC_API_KEY set.
func ExampleNewAnthropic() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer(`{"name": "Ada Lovelace"}`))

	client, err := llm.NewAnthropic(llm.WithBaseURL(srv.AnthropicURL()), llm.WithAPIKey("sk-ant-example"),
		llm.WithModel("claude-sonnet-4-5"), llm.WithMaxTokens(512))
	if err != nil {
		fmt.Println(err)
		return
	}
	schema, err := llm.NewSchema("person.json", []byte(`{"type": "object",
		"properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := client.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "Answer with JSON."},
			{Role: "user", Content: "Who wrote the first program?"},
		},
		Schema: schema,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := srv.Requests()[0]
	fmt.Println(resp.Content)
	fmt.Println(resp.FinishReason, resp.Structured)
	fmt.Printf("system %q, forced tool %q, max_tokens %d\n", req.System, req.SchemaName, req.MaxTokens)
	// Output:
	// {"name":"Ada Lovelace"}
	// tool_use sent
	// system "Answer with JSON.", forced tool "person", max_tokens 512
}
