package tract_test

import (
	"context"
	"os"

	"github.com/tractdag/tract"
)

// A history with a branch that diverged and an answer left behind by a
// reset, drawn as a Mermaid flowchart: the orphan is dashed, HEAD points
// at main.
func ExampleTract_WriteGraph() {
	t, done := exampleRepo(tract.WithClock(fixedClock()))
	defer done()
	ctx := context.Background()
	t.System(ctx, "Be brief.")
	t.User(ctx, `Say "hi" #1`)
	t.CreateBranch(ctx, "side", "")
	t.Assistant(ctx, "Hello <there>!")
	t.Reset(ctx, "HEAD~1", tract.Soft)
	t.Assistant(ctx, "hi")
	t.OnBranch("side").Assistant(ctx, "hi from side")

	if err := t.WriteGraph(ctx, os.Stdout, tract.GraphMermaid, tract.GraphAll()); err != nil {
		panic(err)
	}
	// Output:
	// flowchart TD
	//   classDef message fill:#fff,stroke:#555
	//   classDef failed fill:#fee,stroke:#c00,color:#900
	//   classDef steering fill:#fff3e0,stroke:#e65100
	//   classDef summary fill:#ffffe0,stroke:#aa0
	//   classDef note fill:#f4f4f4,stroke:#999
	//   classDef error fill:#fee,stroke:#c00
	//   classDef orphan stroke-dasharray:4 3
	//   classDef ref fill:#def,stroke:#369
	//   classDef head fill:#fd6,stroke:#a70
	//   ca02207a101de66c9["a02207a1 system<br>Be brief."]:::message
	//   c15caaad39a5bb75e["15caaad3 user<br>Say #34;hi#34; #35;1"]:::message
	//   ca02207a101de66c9 --> c15caaad39a5bb75e
	//   c4b7f6a19f8bb3cf8["4b7f6a19 assistant<br>Hello #60;there#62;!"]:::message
	//   class c4b7f6a19f8bb3cf8 orphan
	//   c15caaad39a5bb75e --> c4b7f6a19f8bb3cf8
	//   cd44597219a6a6f29["d4459721 assistant<br>hi from side"]:::message
	//   c15caaad39a5bb75e --> cd44597219a6a6f29
	//   c5173c1877dfe9f86["5173c187 assistant<br>hi"]:::message
	//   c15caaad39a5bb75e --> c5173c1877dfe9f86
	//   r0(["main"]):::ref
	//   r0 -.- c5173c1877dfe9f86
	//   r1(["side"]):::ref
	//   r1 -.- cd44597219a6a6f29
	//   r2(["ORIG_HEAD"]):::ref
	//   r2 -.- c4b7f6a19f8bb3cf8
	//   r3(["HEAD"]):::head
	//   r3 -.- r0
}
