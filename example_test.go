package tract_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// fixedClock returns a clock that starts at a fixed instant and advances one
// second per call, so examples print the same hashes everywhere.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func Example() {
	dir, _ := os.MkdirTemp("", "tract-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	t, err := tract.Init(filepath.Join(dir, "tract.db"), tract.WithClock(fixedClock()))
	if err != nil {
		panic(err)
	}
	defer t.Close()
	t.System(ctx, "You are terse.")
	t.User(ctx, "What is 2+2?")
	t.Assistant(ctx, "4")

	msgs, _ := t.Compile(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// system: You are terse.
	// user: What is 2+2?
	// assistant: 4
}

// Chat with a JSON validator: the test server answers with invalid JSON
// first, then — once the steering message arrives — with valid JSON. Purify
// leaves only the clean answer on the branch; the failed attempt stays in
// the store as an orphan.
func ExampleTract_Chat() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("Sure! {name: Ada}"))
	srv.When("failed validation", llmtest.Answer(`{"name": "Ada"}`))

	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	dir, _ := os.MkdirTemp("", "tract-example")
	defer os.RemoveAll(dir)
	t, _ := tract.Init(filepath.Join(dir, "tract.db"), tract.WithClient(client))
	defer t.Close()
	ctx := context.Background()

	res, err := t.Chat(ctx, "Give me a JSON object with a name.", tract.Validate(retry.JSON()))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println("attempts:", res.Attempts, "purified:", res.Purified)
	fmt.Println("diagnosis:", res.Diagnoses[0])

	log, _ := t.Log(ctx)
	for _, c := range log {
		fmt.Printf("%s: %s\n", c.Role, c.Text)
	}
	all, _ := t.LogAll(ctx)
	fmt.Println("orphaned by:", all.Orphans[0].Reason)
	// Output:
	// {"name": "Ada"}
	// attempts: 2 purified: true
	// diagnosis: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value
	// assistant: {"name": "Ada"}
	// user: Give me a JSON object with a name.
	// orphaned by: purify: hid 1 failed attempt
}
