package compress_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// exampleItems is a short conversation: a system prompt, two turns, a note
// and a later system message.
func exampleItems() []compress.Item {
	msg := func(k dag.Kind, r dag.Role, text string) compress.Item {
		return compress.Item{Hash: dag.Sum([]byte(text)), Kind: k, Role: r, Text: text}
	}
	return []compress.Item{
		msg(dag.KindMessage, dag.RoleSystem, "You are a helpful Go tutor."),
		msg(dag.KindMessage, dag.RoleUser, "How do I reverse a slice in Go? I am on Go 1.26 and would like to avoid writing the loop myself."),
		msg(dag.KindMessage, dag.RoleAssistant, "Call slices.Reverse(s) from the standard library's slices package; it reverses s in place and returns nothing."),
		msg(dag.KindNote, dag.RoleUser, "reviewed by alice"),
		msg(dag.KindMessage, dag.RoleUser, "And to sort it? The elements are plain ints, nothing fancy, and the order should be ascending."),
		msg(dag.KindMessage, dag.RoleAssistant, "Call slices.Sort(s): it sorts any slice of ordered elements, such as ints, in ascending order, in place."),
		msg(dag.KindMessage, dag.RoleSystem, "Answer in one sentence from now on."),
	}
}

// Plan a range: the system messages stay, the note is dropped, the turns
// between become one summary.
func ExamplePlan() {
	p, err := compress.Plan(exampleItems())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range p.Groups {
		if g.Keep {
			fmt.Printf("keep       %s: %s\n", g.Items[0].Role, g.Items[0].Text)
		} else {
			fmt.Printf("summarize  %d messages\n", len(g.Items))
		}
	}
	fmt.Printf("drop       %d (%s)\n", len(p.Dropped), p.Dropped[0].Kind)
	// Output:
	// keep       system: You are a helpful Go tutor.
	// summarize  4 messages
	// keep       system: Answer in one sentence from now on.
	// drop       1 (note)
}

// Summarize a group with a model, validated by a spec string. The first
// summary is too long for "maxlen:80", so the model is asked again with the
// diagnosis; the second is accepted. Here the model is scripted; in real use
// it is llm.NewOpenAIFromEnv(os.Getenv, llm.WithModel(model)).
func ExampleSummarize() {
	p, _ := compress.Plan(exampleItems())
	client := llm.NewScripted(
		llm.Reply{Content: "The user asked how to reverse and then sort a slice of ints in Go 1.26; the assistant recommended slices.Reverse and slices.Sort, both in place."},
		llm.Reply{Content: "Reverse with slices.Reverse(s), sort with slices.Sort(s); both work in place."},
	)
	maxLen, _ := retry.ParseSpecs([]string{"maxlen:80"})

	s, err := compress.Summarize(context.Background(), p.Groups[1], compress.Config{
		Client:       client,
		TargetTokens: 40,
		Validator:    maxLen,
		OnAttempt: func(attempt int, ok bool, diagnosis string) {
			if ok {
				fmt.Printf("attempt %d accepted\n", attempt)
			} else {
				fmt.Printf("attempt %d rejected: %s\n", attempt, diagnosis)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Text)
	fmt.Printf("%d messages, %d → %d tokens (estimated), %d attempts\n",
		len(s.Sources), s.TokensBefore, s.TokensAfter, s.Attempts)
	// The second request carried the steering, in memory only:
	second := client.Requests()[1].Messages
	steer, _, _ := strings.Cut(second[len(second)-1].Content, "\n")
	fmt.Println(steer)
	// Output:
	// attempt 1 rejected: maxlen:80: answer is 144 characters, more than the maximum of 80
	// attempt 2 accepted
	// Reverse with slices.Reverse(s), sort with slices.Sort(s); both work in place.
	// 4 messages, 118 → 24 tokens (estimated), 2 attempts
	// previous summary was rejected: maxlen:80: answer is 144 characters, more than the maximum of 80
}

// A summary supplied by the caller is checked but never sent to a model;
// one that fails a check cannot be retried.
func ExampleSummarize_callerContent() {
	p, _ := compress.Plan(exampleItems())
	_, err := compress.Summarize(context.Background(), p.Groups[1], compress.Config{
		Content:      "The user asked how to reverse and then sort a slice of ints in Go 1.26; the assistant recommended slices.Reverse and slices.Sort, both in place.",
		TargetTokens: 20,
	})
	if exhausted, ok := errors.AsType[*retry.ExhaustedError](err); ok {
		fmt.Println(exhausted.Attempts, "attempt:", exhausted.LastDiagnosis)
	} else {
		fmt.Println(err)
	}
	// Output:
	// 1 attempt: summary is 40 tokens (estimated), over the target of 20 tokens by more than 20% (at most 24 allowed)
}
