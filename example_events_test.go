package tract_test

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

// A task's events, reported live with OnEvent and regenerated from the
// commits with Events, and the statistics of the repository's tasks.
func ExampleTract_Events() {
	t, done := retryRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	live := 0
	_, err := t.Chat(ctx, "Give me a JSON object with a name.", tract.Task("03-01:task-3"),
		tract.Validate(retry.JSON()), tract.OnEvent(func(tract.Event) { live++ }))
	if err != nil {
		panic(err)
	}
	events, _ := t.Events(ctx, tract.EventFilter{Task: "03-01:task-3"})
	for _, e := range events {
		switch at := e.Timestamp.Format(time.TimeOnly); e.Event {
		case tract.EventAttempt:
			fmt.Println(at, "attempt", e.Attempt, e.Status, cmp.Or(string(e.FailureType), "-"))
		case tract.EventFeedbackInjected:
			fmt.Println(at, "feedback for attempt", e.Attempt)
		case tract.EventResolved:
			fmt.Println(at, "resolved:", e.Resolution, "after", e.TotalAttempts, "attempts")
		}
	}
	fmt.Println("live:", live, "regenerated:", len(events))

	st, _ := t.Stats(ctx, tract.StatsFilter{})
	fmt.Println("tasks:", st.TotalTasks, "retried:", st.Retried, "retry successes:", st.RetrySuccesses)
	// Output:
	// 03:04:09 attempt 1 failed verification_failed
	// 03:04:11 feedback for attempt 2
	// 03:04:13 attempt 2 success -
	// 03:04:16 resolved: success after 2 attempts
	// live: 4 regenerated: 4
	// tasks: 1 retried: 1 retry successes: 1
}
