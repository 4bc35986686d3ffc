package tract_test

import (
	"context"
	"fmt"

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
		fmt.Println(e)
	}
	fmt.Println("live:", live, "regenerated:", len(events))

	st, _ := t.Stats(ctx, tract.StatsFilter{})
	fmt.Println("tasks:", st.TotalTasks, "retried:", st.Retried, "retry successes:", st.RetrySuccesses)
	// Output:
	// [2026-01-02T03:04:11.000Z] [RETRY] [03-01:task-3] attempt=1 status=failed type=verification_failed duration_ms=1000 error="invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value"
	// [2026-01-02T03:04:13.000Z] [RETRY] [03-01:task-3] injecting_feedback attempt=2 lines=2
	// [2026-01-02T03:04:17.000Z] [RETRY] [03-01:task-3] attempt=2 status=success duration_ms=1000
	// [2026-01-02T03:04:20.000Z] [RETRY] [03-01:task-3] resolved status=success attempts=2 duration_ms=10000
	// live: 4 regenerated: 4
	// tasks: 1 retried: 1 retry successes: 1
}
