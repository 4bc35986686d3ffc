package tract_test

import (
	"context"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// With xml feedback, a retry is told every earlier failure of the turn in
// a <retry_context> block; with the fresh strategy that block is sent
// before the question instead of after the failed answer.
func ExampleFeedback() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(llmtest.Answer("Sure! {name: Ada}"), llmtest.Answer(`{"name": "Ada"}`))
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, done := exampleRepo(tract.WithClient(client), tract.WithClock(fixedClock()))
	defer done()

	res, err := t.Chat(context.Background(), "Give me a JSON object with a name.", tract.Validate(retry.JSON()),
		tract.Feedback(retry.FeedbackXML), tract.RetryContextStrategy(tract.ContextFresh))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	for _, m := range srv.Requests()[1].Messages {
		fmt.Printf("%s:\n%s\n", m.Role, m.Content)
	}
	// Output:
	// {"name": "Ada"}
	// user:
	// <retry_context attempt="2" max_attempts="3">
	//   <previous_failures>
	//     <failure attempt="1">
	//       <type>verification_failed</type>
	//       <timestamp>2026-01-02T03:04:08Z</timestamp>
	//       <error_summary>invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value</error_summary>
	//     </failure>
	//   </previous_failures>
	//   <instruction>
	//     This is attempt 2 of 3.
	//     Review the previous failures above and address each of them in your answer.
	//     If retrying cannot make the task succeed, answer with a first line "BLOCKED: &lt;reason&gt;" and nothing else.
	//   </instruction>
	// </retry_context>
	// user:
	// Give me a JSON object with a name.
}
