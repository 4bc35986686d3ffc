package tract_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// A turn whose escalation waits in the repository: this program records
// it and stops (ExitWhenEscalated); anyone with the repository answers it,
// from any process, and ResumeEscalation finishes the turn with the
// answer. Without ExitWhenEscalated, the turn itself would wait for the
// answer and go on.
func ExampleEscalateWait() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("one, two, three"))
	srv.When("use integers", llmtest.Answer("[1, 2, 3]"))
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, done := exampleRepo(tract.WithClient(client), tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()
	opts := []tract.ChatOption{tract.Validate(retry.JSON()), tract.MaxAttempts(1), tract.Task("nightly-1")}

	_, err := t.Chat(ctx, "List three numbers as JSON.", append(opts, tract.EscalateWait(tract.ExitWhenEscalated()))...)
	fmt.Println("waiting:", errors.Is(err, tract.ErrWaiting))

	// Elsewhere, later:
	waiting, _ := t.Escalations(ctx)
	e := waiting[0]
	fmt.Println(e.State, e.Task, e.Reason, e.Failures[0].Error)
	_, _ = t.AnswerEscalation(ctx, e.ID, tract.Resolution{Action: tract.ResolveFix, Instruction: "use integers", By: "ann"})
	_, err = t.AnswerEscalation(ctx, e.ID, tract.Resolution{Action: tract.ResolveSkip, By: "bob"})
	fmt.Println("second answer refused:", errors.Is(err, tract.ErrAnswered))

	res, _ := t.ResumeEscalation(ctx, e.ID, opts...)
	fmt.Println(res.Text, "after", res.Attempts, "attempts")
	// Output:
	// waiting: true
	// pending nightly-1 max_retries_exceeded invalid JSON at line 1, column 1: invalid character 'o' looking for beginning of value
	// second answer refused: true
	// [1, 2, 3] after 2 attempts
}
