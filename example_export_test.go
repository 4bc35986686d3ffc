package tract_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/retry"
)

// A validated turn whose first answer was rejected, exported as a
// preference pair for TRL's DPO trainer and as a conversation for
// supervised fine-tuning; the conversation imported back.
func ExampleTract_Export() {
	t, done := retryRepo()
	defer done()
	ctx := context.Background()
	if _, err := t.Chat(ctx, "Give me a JSON object with a name.", tract.Validate(retry.JSON())); err != nil {
		panic(err)
	}

	if _, err := t.Export(ctx, os.Stdout, export.TRLPreference); err != nil {
		panic(err)
	}
	var sft strings.Builder
	if _, err := t.Export(ctx, &sft, export.OpenAI, tract.ExportWeights(export.WeightsAssistantLast)); err != nil {
		panic(err)
	}
	fmt.Print(sft.String())

	branches, err := t.ImportConversations(ctx, "sft", tract.ReadConversations(strings.NewReader(sft.String())))
	if err != nil {
		panic(err)
	}
	fmt.Println("imported onto", branches[0].Name)
	// Output:
	// {"prompt":[{"role":"user","content":"Give me a JSON object with a name."}],"chosen":[{"role":"assistant","content":"{\"name\": \"Ada\"}"}],"rejected":[{"role":"assistant","content":"Sure! {name: Ada}"}]}
	// {"messages":[{"role":"user","content":"Give me a JSON object with a name."},{"role":"assistant","content":"{\"name\": \"Ada\"}","weight":1}]}
	// imported onto sft-1
}
