package llm_test

import (
	"context"
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
