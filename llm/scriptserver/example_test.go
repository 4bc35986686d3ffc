package scriptserver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/scriptserver"
)

// Script a rate limit, an invalid answer, and a valid answer that comes
// once the steering message arrives. In a test, llmtest.NewServer(t) also
// closes the server and checks that every reply was used.
func Example() {
	srv, err := scriptserver.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.Reply(scriptserver.RateLimited(time.Second), scriptserver.Answer("not JSON")).
		When("failed validation", scriptserver.Answer(`{"ok":true}`))

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
