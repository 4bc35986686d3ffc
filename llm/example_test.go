package llm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// Complete one message against the local test server; in real use the
// client comes from llm.NewOpenAIFromEnv(os.Getenv).
func ExampleOpenAI_Complete() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("Hello from the test server."))

	client, err := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := client.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "Say hello."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content)
	fmt.Println(resp.Model, resp.FinishReason)
	// Output:
	// Hello from the test server.
	// test-model stop
}

// Stream an answer: OnDelta receives each piece as it arrives.
func ExampleOpenAI_Complete_streaming() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("one two three"))

	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	var pieces []string
	resp, err := client.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "Count to three."}},
		OnDelta:  func(d string) { pieces = append(pieces, d) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", pieces)
	fmt.Println(resp.Content)
	// Output:
	// ["one " "two " "three"]
	// one two three
}

// The API key and the base URL come from the provider's variables (read
// through getenv: os.Getenv in a program), the model from WithModel; a
// missing key names the variable that supplies it.
func ExampleNewOpenAIFromEnv() {
	env := map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1/"} // a local server needs no key
	client, err := llm.NewOpenAIFromEnv(func(k string) string { return env[k] }, llm.WithModel("llama3.2"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(client.BaseURL(), client.Model())

	_, err = llm.NewOpenAIFromEnv(func(string) string { return "" }, llm.WithModel("gpt-4o"))
	fmt.Println(err)
	// Output:
	// http://localhost:11434/v1 llama3.2
	// no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs none)
}

// Script an invalid answer, then a valid one once a steering message
// arrives.
func ExampleScripted() {
	model := llm.NewScripted(llm.Reply{Content: "not JSON"}).
		When("failed validation", llm.Reply{Content: `{"ok":true}`})

	ask := func(text string) {
		resp, _ := model.Complete(context.Background(), llm.Request{
			Messages: []llm.Message{{Role: "user", Content: text}},
		})
		fmt.Println(resp.Content)
	}
	ask("Answer in JSON.")
	ask("Your previous response failed validation: invalid JSON")
	fmt.Println(len(model.Requests()), "requests,", model.Remaining(), "replies left")
	// Output:
	// not JSON
	// {"ok":true}
	// 2 requests, 0 replies left
}

// Offer the model a tool, read its call back, send the tool's result and
// get the answer. Here the test server plays the model: it calls the tool,
// then answers once the result it is sent contains "14°C".
func ExampleRequest_tools() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Calls(llmtest.Call("get_weather", `{"city":"Paris"}`)))
	srv.When("14°C", llmtest.Answer("It is 14°C in Paris."))

	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	req := llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "What is the weather in Paris?"}},
		Tools: []llm.ToolDef{{
			Name:        "get_weather",
			Description: "The current weather in a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		}},
	}
	resp, err := client.Complete(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.ToolCalls[0]
	fmt.Println(resp.FinishReason, call.ID, call.Function.Name, call.Function.Arguments)

	// Run the tool, then send its result back with the call it answers.
	req.Messages = append(req.Messages, resp.Message(),
		llm.Message{Role: "tool", ToolCallID: call.ID, Content: "14°C, cloudy"})
	resp, err = client.Complete(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content)
	// Output:
	// tool_calls call_scriptserver_1_0 get_weather {"city":"Paris"}
	// It is 14°C in Paris.
}
