package retry_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tractdag/tract/retry"
)

// A draft stage writes about the topic; a review stage rejects drafts over
// 40 characters and sends the draft back upstream with a hint, which only
// the draft stage's re-run sees. The trace shows the retry.
func ExampleNewPipeline() {
	draft := retry.NewStage("draft", func(ctx context.Context, sc *retry.StageContext[string]) (retry.StageResult[string], error) {
		if sc.Hint != nil {
			return retry.Output(fmt.Sprintf("%s: small, fast, simple. (attempt %d, told %q)", sc.Input, sc.Try, sc.Hint)), nil
		}
		return retry.Output(sc.Input + " is a programming language with fast builds, a simple syntax and good tooling."), nil
	})
	review := retry.NewStage("review", func(ctx context.Context, sc *retry.StageContext[string]) (retry.StageResult[string], error) {
		if len(sc.Input) > 60 {
			return sc.RetryUpstream("too long"), nil
		}
		return retry.Output(sc.Input), nil
	})

	p := retry.NewPipeline(retry.SourceValue("Go"), draft, review)
	out, err := p.Run(context.Background(), retry.WithTrace(os.Stdout))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
	// Output:
	// ┌─ plan: source → draft → review
	// ├─ s0 start (attempt 1) mode=initial
	// ├─ s0 ok → "Go"
	// ├─ s1 start (attempt 1) mode=initial ← "Go"
	// ├─ s1 ok → "Go is a programming language with fast builds, a…" (80 bytes)
	// ├─ s2 start (attempt 1) mode=initial ← "Go is a programming language with fast builds, a…" (80 bytes)
	// ├─ s2 retry request → retry s1 (hint: "too long")
	// ├─ s1 start (attempt 2) mode=fresh ← "Go"
	// ├─ s1 ok → "Go: small, fast, simple. (attempt 2, told \"too l…" (53 bytes)
	// ├─ s2 start (attempt 2) mode=fresh ← "Go: small, fast, simple. (attempt 2, told \"too l…" (53 bytes)
	// ├─ s2 ok → "Go: small, fast, simple. (attempt 2, told \"too l…" (53 bytes)
	// └─ complete
	// Go: small, fast, simple. (attempt 2, told "too long")
}

// BestOfN collects candidates from the stage before it, re-running that
// stage until it has n, and passes on the best one.
func ExampleBestOfN() {
	candidates := []string{"ok", "better", "best of all", "fine"}
	generate := retry.NewStage("generate", func(ctx context.Context, sc *retry.StageContext[string]) (retry.StageResult[string], error) {
		return retry.Output(candidates[sc.Try-1]), nil
	})
	longest := retry.BestOfN(4, func(s string) float64 { return float64(len(s)) })

	out, err := retry.NewPipeline(retry.SourceValue("prompt"), generate, longest).Run(context.Background())
	fmt.Println(out, err)
	// Output:
	// best of all <nil>
}

// A draft → review pipeline in three lines of plumbing: the source drafts
// (and on a re-run sees the reviewer's critique and its try number), the
// review is a check that sends the draft back with a hint, and a transform
// finishes the accepted draft.
func ExampleSourceFuncWithHint() {
	draft := retry.SourceFuncWithHint(func(ctx context.Context, sc *retry.SourceContext[string]) (string, error) {
		if sc.Hint == nil {
			return "Go is a programming language with fast builds, a simple syntax and good tooling", nil
		}
		return fmt.Sprintf("Go: small and fast (try %d, after %q)", sc.Try, sc.Hint), nil
	})
	review := retry.CheckStage("review", func(ctx context.Context, s string) (bool, any, error) {
		return len(s) <= 60, "too long", nil
	})
	finish := retry.TransformStage("finish", func(ctx context.Context, s string) (string, error) {
		return s + ".", nil
	})

	out, err := retry.NewPipeline(draft, review, finish).Run(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
	// Output:
	// Go: small and fast (try 2, after "too long").
}

// ValidatorFunc makes a custom validator of a function, for Chat, All or
// ValidatorStage.
func ExampleValidatorFunc() {
	noApology := retry.ValidatorFunc("no-apology", func(ctx context.Context, answer string) (bool, string, error) {
		if strings.Contains(strings.ToLower(answer), "sorry") {
			return false, "the answer apologises; answer directly", nil
		}
		return true, "", nil
	})
	for _, answer := range []string{"Sorry, I cannot.", "42"} {
		ok, diagnosis, _ := noApology.Validate(context.Background(), answer)
		fmt.Printf("%s %q: %v %s\n", noApology.Name(), answer, ok, diagnosis)
	}
	// Output:
	// no-apology "Sorry, I cannot.": false the answer apologises; answer directly
	// no-apology "42": true
}
