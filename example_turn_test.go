package tract_test

import (
	"context"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// A turn whose every attempt failed leaves the branch ending in the user
// message and an error commit. PendingTurn finds it; RetryLast answers the
// message again without committing it a second time.
func ExampleTract_RetryLast() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("Ada, I think"), llmtest.Answer("Ada!"))
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, done := exampleRepo(tract.WithClient(client), tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	_, err := t.Chat(ctx, `Who wrote the first program? Answer as JSON.`, tract.Validate(retry.JSON()), tract.MaxAttempts(2))
	fmt.Println("chat failed:", err != nil)
	pending, _ := t.PendingTurn(ctx)
	fmt.Printf("pending: %s of %d commits\n", pending.State, pending.Commits)

	srv.Reply(llmtest.Answer(`{"name": "Ada Lovelace"}`))
	res, _ := t.RetryLast(ctx, tract.Validate(retry.JSON()))
	fmt.Println(res.Text)
	msgs, _ := t.Compile(ctx)
	for _, m := range msgs {
		fmt.Println(m.Role)
	}
	// Output:
	// chat failed: true
	// pending: unanswered message of 2 commits
	// {"name": "Ada Lovelace"}
	// user
	// assistant
}

// OnAttemptDelta tells the pieces of each attempt apart, so that a
// terminal can show every attempt as it streams and mark the rejected.
func ExampleOnAttemptDelta() {
	t, done := retryRepo()
	defer done()
	current := 0
	_, _ = t.Chat(context.Background(), "Describe Ada as JSON.", tract.Validate(retry.JSON()),
		tract.OnAttemptDelta(func(d tract.AttemptDelta) {
			if d.Attempt != current {
				current = d.Attempt
				fmt.Printf("\nattempt %d/%d: ", d.Attempt, d.Max)
			}
			fmt.Print(d.Text)
		}),
		tract.OnAttempt(func(a tract.Attempt) {
			if !a.OK {
				fmt.Print(" ✗ rejected")
			}
		}))
	fmt.Println()
	// Output:
	// attempt 1/3: Sure! {name: Ada} ✗ rejected
	// attempt 2/3: {"name": "Ada"}
}
