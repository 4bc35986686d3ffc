package tract_test

import (
	"context"
	"errors"
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

// retryRepo is the set-up of the chat examples: a repository whose model
// (a test server speaking the OpenAI protocol) answers with invalid JSON
// first and, once a steering message arrives, with valid JSON. done closes
// both.
func retryRepo(opts ...tract.Option) (t *tract.Tract, done func()) {
	srv := llmtest.New()
	srv.Reply(llmtest.Answer("Sure! {name: Ada}"))
	srv.When("failed validation", llmtest.Answer(`{"name": "Ada"}`))
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, closeRepo := exampleRepo(append([]tract.Option{tract.WithClient(client)}, opts...)...)
	return t, func() {
		closeRepo()
		srv.Close()
	}
}

// exampleRepo is the set-up of the examples: a new repository in a
// temporary directory, as the package example makes one. done closes it
// and removes the directory.
func exampleRepo(opts ...tract.Option) (t *tract.Tract, done func()) {
	dir, _ := os.MkdirTemp("", "tract-example")
	t, err := tract.Init(filepath.Join(dir, "tract.db"), opts...)
	if err != nil {
		panic(err)
	}
	return t, func() {
		t.Close()
		os.RemoveAll(dir)
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
//
// retryRepo sets the example up: a repository whose client is
// llm.NewOpenAI(llm.WithBaseURL(server), llm.WithModel(…)) for a test
// server scripted that way.
func ExampleTract_Chat() {
	t, done := retryRepo()
	defer done()
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

// Two agents extend their own branches of one repository through OnBranch
// views; HEAD stays where it was. Each view could as well live in another
// process that opened the same file.
func ExampleTract_OnBranch() {
	t, done := exampleRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()
	t.System(ctx, "You are one of two agents.")
	for _, name := range []string{"agent-1", "agent-2"} {
		if _, err := t.CreateBranch(ctx, name, ""); err != nil {
			panic(err)
		}
		agent := t.OnBranch(name)
		agent.User(ctx, "Task for "+name)
		agent.Assistant(ctx, name+" is done")
	}

	for _, name := range []string{"agent-1", "agent-2"} {
		msgs, _ := t.OnBranch(name).Compile(ctx)
		fmt.Printf("%s: %d messages, last %q\n", name, len(msgs), msgs[len(msgs)-1].Content)
	}
	branch, _, _ := t.Head(ctx)
	fmt.Println("HEAD is on", branch)
	// Output:
	// agent-1: 3 messages, last "agent-1 is done"
	// agent-2: 3 messages, last "agent-2 is done"
	// HEAD is on main
}

// A step of an operation that finds its branch moved by another writer
// does not move it: the error says what moved, and what was made is kept
// off the branch under ConflictError.Kept.
func ExampleConflictError() {
	srv := llmtest.New()
	defer srv.Close()
	t, done := exampleRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	// The model answers; but before its answer is committed, another writer
	// (here, a goroutine on the same handle) commits on main.
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: "the answer", Hold: hold})
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		t.User(ctx, "another writer's message")
		close(hold)
	}()
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	_, err := t.Chat(ctx, "A question", tract.UseClient(client))

	var conflict *tract.ConflictError
	if errors.As(err, &conflict) {
		kept, _ := t.Show(ctx, conflict.Kept.String())
		fmt.Printf("%s moved; the %s %q was kept off it\n", conflict.Ref, conflict.What, kept.Text)
	}
	all, _ := t.LogAll(ctx)
	fmt.Println(all.Orphans[0].Action)
	// Output:
	// refs/heads/main moved; the answer "the answer" was kept off it
	// conflict
}

// An agent logging many messages makes them durable together: one
// transaction, one sync, instead of one per message.
func ExampleTract_CommitMany() {
	t, done := exampleRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	hashes, err := t.CommitMany(ctx, []tract.ImportMessage{
		{Role: tract.RoleUser, Content: "run the tests"},
		{Role: tract.RoleTool, Content: "ok  	example.com/pkg	0.1s", Meta: []byte(`{"exit_code": 0}`)},
		{Role: tract.RoleAssistant, Content: "All tests pass."},
	})
	if err != nil {
		panic(err)
	}
	log, _ := t.Log(ctx)
	fmt.Println(len(hashes), "commits; HEAD is the last:", log[0].Hash == hashes[2])
	// Output:
	// 3 commits; HEAD is the last: true
}

// Reflog lists where HEAD has been, newest first: a purify shows as the
// reset to the user message and the clean answer's commit after it.
func ExampleTract_Reflog() {
	t, done := retryRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()
	if _, err := t.Chat(ctx, "Describe Ada as JSON", tract.Validate(retry.JSON())); err != nil {
		panic(err)
	}
	entries, _ := t.Reflog(ctx, "HEAD")
	for _, e := range entries {
		fmt.Printf("HEAD@{%d} %s\n", e.Index, e.Message)
	}
	// Output:
	// HEAD@{0} commit (message assistant): {"name": "Ada"}
	// HEAD@{1} purify: hid 1 failed attempt
	// HEAD@{2} commit (message assistant): {"name": "Ada"}
	// HEAD@{3} commit (steering user): Your previous response failed validation: invalid JSON at l…
	// HEAD@{4} commit (message assistant): Sure! {name: Ada}
	// HEAD@{5} commit (message user): Describe Ada as JSON
}

// OpenOrInit creates the repository on an agent's first run and opens it on
// every run after.
func ExampleOpenOrInit() {
	dir, _ := os.MkdirTemp("", "tract-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, ".tract", "tract.db")
	for run := 1; run <= 2; run++ {
		t, err := tract.OpenOrInit(path)
		if err != nil {
			panic(err)
		}
		t.User(ctx, fmt.Sprintf("run %d", run))
		st, _ := t.Status(ctx)
		fmt.Printf("run %d: %d commits\n", run, st.Length)
		t.Close()
	}
	// Output:
	// run 1: 1 commits
	// run 2: 2 commits
}

// The result of a turn lists every attempt: what the model said, why it
// was rejected, what it cost, and where it is stored (failed attempts stay
// as orphans after purify; Show or LogAll reads them).
func ExampleChatResult_History() {
	t, done := retryRepo()
	defer done()
	ctx := context.Background()

	res, err := t.Chat(ctx, "Describe Ada as JSON", tract.Validate(retry.JSON()))
	if err != nil {
		panic(err)
	}
	for _, a := range res.History {
		fmt.Printf("attempt %d ok=%v %q\n", a.Number, a.OK, a.Text)
		if !a.OK {
			fmt.Println("  rejected:", a.Diagnosis)
		}
	}
	clean, _ := t.Show(ctx, "HEAD")
	prov, _ := clean.Provenance()
	fmt.Printf("accepted after %d attempts; restore point is the user message: %v\n", prov.Attempts, prov.Restore == res.User)
	// Output:
	// attempt 1 ok=false "Sure! {name: Ada}"
	//   rejected: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value
	// attempt 2 ok=true "{\"name\": \"Ada\"}"
	// accepted after 2 attempts; restore point is the user message: true
}

// Compress a range of history into a summary. Here the summary is given;
// without Summaries, a model writes it (SummaryClient, or the Tract's
// client) and ValidateSummaries checks it.
func ExampleTract_CompressRange() {
	t, done := exampleRepo()
	defer done()
	ctx := context.Background()
	t.System(ctx, "You are a travel agent.")
	t.User(ctx, "I want to go to Lisbon in May.")
	t.Assistant(ctx, "Lisbon in May is lovely. Budget?")
	t.User(ctx, "About 1500 euros.")
	t.Assistant(ctx, "Then a week in a guesthouse in Alfama works.")

	res, err := t.CompressRange(ctx, "HEAD~3", "HEAD~1",
		tract.Summaries("The user wants a week in Lisbon in May for about 1500 euros."))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Summaries), "summary replaces", len(res.Sources), "commits")
	msgs, _ := t.Compile(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// 1 summary replaces 3 commits
	// system: You are a travel agent.
	// system: The user wants a week in Lisbon in May for about 1500 euros.
	// assistant: Then a week in a guesthouse in Alfama works.
}

// A turn with a task id: every commit it writes carries the id, and each
// failed attempt records a typed failure record that FailureRecord reads
// back. A validator that reports the answer blocked would stop the turn at
// once with an *EscalationError carrying these records.
func ExampleTask() {
	t, done := retryRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()

	_, err := t.Chat(ctx, "Give me a JSON object with a name.", tract.Task("03-01:task-3"), tract.Validate(retry.JSON()))
	if err != nil {
		panic(err)
	}
	all, _ := t.LogAll(ctx)
	for _, c := range all.Orphans[0].Commits {
		if r, ok := c.FailureRecord(); ok {
			fmt.Printf("task %s, attempt %d at %s: %s: %s\n", c.Task(), r.Attempt, r.Timestamp.Format(time.TimeOnly), r.Type, r.Error)
		}
	}
	// Output:
	// task 03-01:task-3, attempt 1 at 03:04:08: verification_failed: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value
}

// An escalation hook decides what a turn does when its attempts run out:
// here it gives the model a fix instruction for one more round.
func ExampleOnEscalation() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Otherwise(llmtest.Answer("Sure! {name: Ada}"))
	srv.When("quote the key", llmtest.Answer(`{"name": "Ada"}`))
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, done := exampleRepo(tract.WithClient(client))
	defer done()

	hook := func(_ context.Context, e tract.Escalation) (tract.Resolution, error) {
		fmt.Printf("task %s: %s after %d of %d attempts\n", e.Task, e.Reason, e.Attempts, e.MaxAttempts)
		return tract.ParseResolution("fix: Answer with JSON only; quote the key.")
	}
	res, err := t.Chat(context.Background(), "Give me a JSON object with a name.", tract.Task("t1"),
		tract.Validate(retry.JSON()), tract.MaxAttempts(2), tract.OnEscalation(hook))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s after %d attempts\n", res.Text, res.Attempts)
	// Output:
	// task t1: max_retries_exceeded after 2 of 2 attempts
	// {"name": "Ada"} after 3 attempts
}
