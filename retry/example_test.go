package retry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract/retry"
)

// A model that first answers in prose and then, steered by the diagnosis,
// in JSON. The "branch" is a slice of messages and the restore point is its
// length, so that Purify can cut the failed attempt and the steering message
// away.
func ExampleWithSteering() {
	ctx := context.Background()
	answers := []string{`Sure! Here it is: {"ok": true}`, `{"ok": true}`}
	branch := []string{"user: reply in JSON"}
	validator, err := retry.ParseSpec("json")
	if err != nil {
		panic(err)
	}

	res, err := retry.WithSteering(ctx, retry.Steering[string, int]{
		Attempt: func(ctx context.Context) (string, error) {
			answer := answers[0]
			answers = answers[1:]
			branch = append(branch, "assistant: "+answer)
			return answer, nil
		},
		Validate: validator.Validate,
		Steer: func(ctx context.Context, diagnosis string) error {
			branch = append(branch, "user: Your previous response failed validation: "+diagnosis)
			return nil
		},
		Head:   func(ctx context.Context) (int, error) { return len(branch), nil },
		Reset:  func(ctx context.Context, n int) error { branch = branch[:n]; return nil },
		Purify: true,
		OnAttempt: func(attempt int, ok bool, diagnosis string) {
			if ok {
				fmt.Printf("attempt %d passed\n", attempt)
			} else {
				fmt.Printf("attempt %d failed: %s\n", attempt, diagnosis)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	branch = append(branch, "assistant: "+res.Value) // re-commit the clean answer

	fmt.Println("value:", res.Value)
	fmt.Println("attempts:", res.Attempts)
	fmt.Printf("history: %q\n", res.History)
	fmt.Printf("branch: %q\n", branch)
	// Output:
	// attempt 1 failed: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value
	// attempt 2 passed
	// value: {"ok": true}
	// attempts: 2
	// history: ["invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value"]
	// branch: ["user: reply in JSON" "assistant: {\"ok\": true}"]
}

// When every attempt fails, the error is an *ExhaustedError with every
// diagnosis.
func ExampleExhaustedError() {
	n := 0
	_, err := retry.WithSteering(context.Background(), retry.Steering[string, struct{}]{
		Attempt: func(ctx context.Context) (string, error) {
			n++
			return fmt.Sprintf("draft %d is far too long", n), nil
		},
		Validate:    retry.MaxLen(10).Validate,
		MaxAttempts: 2,
	})

	fmt.Println(err)
	var ex *retry.ExhaustedError
	if errors.As(err, &ex) {
		fmt.Printf("%d attempts, last result %q\n", ex.Attempts, ex.LastResult)
	}
	// Output:
	// all 2 attempts failed; last diagnosis: answer is 23 characters, more than the maximum of 10
	// 2 attempts, last result "draft 2 is far too long"
}

// Spec strings as the command line takes them (tract chat --validate SPEC),
// combined so that every failure is reported.
func ExampleParseSpecs() {
	v, err := retry.ParseSpecs([]string{"json", "contains:\"id\"", "maxlen:20"})
	if err != nil {
		panic(err)
	}
	ok, diagnosis, err := v.Validate(context.Background(), `{"name": "a long name"}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(ok)
	fmt.Println(diagnosis)
	// Output:
	// false
	// contains:"id": answer does not contain "\"id\""
	// maxlen:20: answer is 23 characters, more than the maximum of 20
}

// A bad spec is a configuration error, found before any model is called.
func ExampleParseSpec() {
	_, err := retry.ParseSpec("maxlen:lots")
	fmt.Println(err)

	_, err = retry.ParseSpec("regex:[a-z")
	var se *retry.SpecError
	if errors.As(err, &se) {
		fmt.Println(se.Spec, "→", se.Reason)
	}
	// Output:
	// invalid validator "maxlen:lots": maxlen needs a whole number of characters, 0 or more, not "lots" (valid validators: json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA)
	// regex:[a-z → bad regular expression
}

// An llm: validator asks a judge model, given as a plain function; here a
// fake one that rejects answers without a greeting.
func ExampleWithJudge() {
	judge := func(ctx context.Context, prompt string) (string, error) {
		return "```json\n{\"pass\": false, \"reason\": \"The answer does not greet the user.\"}\n```", nil
	}
	v, err := retry.ParseSpec("llm:the answer greets the user", retry.WithJudge(judge))
	if err != nil {
		panic(err)
	}
	ok, diagnosis, err := v.Validate(context.Background(), "The report is attached.")
	fmt.Println(ok, diagnosis, err)
	// Output:
	// false The answer does not greet the user. <nil>
}

// A validator that can say more than "rejected": it suggests a fix, or
// reports that no retry can help. Check reads its verdict.
func ExampleCheckerFunc() {
	hasTitle := retry.CheckerFunc("has-title", func(_ context.Context, answer string) (retry.Verdict, error) {
		switch {
		case answer == "":
			return retry.Verdict{Blocked: "there is nothing to give a title to"}, nil
		case !strings.HasPrefix(answer, "# "):
			return retry.Verdict{Diagnosis: "the answer has no title", SuggestedFix: "start with a line such as '# Summary'"}, nil
		}
		return retry.Verdict{OK: true}, nil
	})
	for _, answer := range []string{"# Notes", "Notes", ""} {
		vd, _ := retry.Check(context.Background(), hasTitle, answer)
		fmt.Printf("ok=%v type=%q fix=%q blocked=%q\n", vd.OK, vd.Type, vd.SuggestedFix, vd.Blocked)
	}
	// Output:
	// ok=true type="" fix="" blocked=""
	// ok=false type="verification_failed" fix="start with a line such as '# Summary'" blocked=""
	// ok=false type="verification_failed" fix="" blocked="there is nothing to give a title to"
}

// The kinds a --validate spec may begin with, as shell completion offers
// them.
func ExampleSpecKinds() {
	fmt.Println(strings.Join(retry.SpecKinds(), " "))
	// Output: json schema: regex: contains: maxlen: minlen: cmd: llm:
}

// A fixer masks what must not be kept; the validator after it judges the
// masked text. Check hands the fix back; Validate, which cannot, rejects
// the answer as given.
func ExampleFixFunc() {
	ctx := context.Background()
	mask := retry.FixFunc("mask", func(ctx context.Context, answer string) (string, error) {
		return strings.ReplaceAll(answer, "sk-secret", "sk-***"), nil
	})
	v := retry.All(mask, retry.Contains("key"))

	vd, err := retry.Check(ctx, v, "the key is sk-secret")
	if err != nil {
		panic(err)
	}
	fmt.Printf("ok=%v fixed=%q by %s\n", vd.OK, vd.Fixed, vd.FixedBy)
	ok, diagnosis, _ := v.Validate(ctx, "the key is sk-secret")
	fmt.Printf("Validate: ok=%v (%s)\n", ok, diagnosis)
	// Output:
	// ok=true fixed="the key is sk-***" by mask
	// Validate: ok=false (mask: the answer needed a fix by mask)
}

// RepairJSON keeps the model's JSON and drops only what is certain to be
// no part of it; it does not guess a value.
func ExampleRepairJSON() {
	for _, answer := range []string{
		`Here you go: {"a": 1,}`,
		"```json\n[\"x\", \"y\",]\n```",
		`{"done": true, "items": ["a"]`,
		`{"count": 12`,
		`{"a": 1}`,
	} {
		fixed, ok := retry.RepairJSON(answer)
		fmt.Printf("%-5v %s\n", ok, fixed)
	}
	// Output:
	// true  {"a": 1}
	// true  ["x", "y"]
	// true  {"done": true, "items": ["a"]}
	// false {"count": 12
	// false {"a": 1}
}
