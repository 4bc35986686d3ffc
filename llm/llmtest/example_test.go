package llmtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// Script a rate limit, an invalid answer, and a valid answer that comes
// once the steering message arrives. In a test, use NewServer(t) instead:
// it closes the server and checks that every reply was used.
func Example() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.RateLimited(time.Second), llmtest.Answer("not JSON")).
		When("failed validation", llmtest.Answer(`{"ok":true}`))

	client, _ := llm.NewOpenAI(
		llm.WithBaseURL(srv.URL()),
		llm.WithModel("test-model"),
		llm.WithSleep(func(context.Context, time.Duration) error { return nil }), // no real waiting
	)
	ask := func(text string) {
		resp, err := client.Complete(context.Background(), llm.Request{
			Messages: []llm.Message{{Role: "user", Content: text}},
		})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(resp.Content)
	}
	ask("Answer in JSON.")
	ask("Your previous response failed validation: invalid JSON")
	fmt.Println(len(srv.Requests()), "HTTP requests")
	// Output:
	// not JSON
	// {"ok":true}
	// 3 HTTP requests
}
