package tract_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// shapedChain returns n import messages of about 200 bytes: user messages
// of a text and an image part, assistant tool calls, tool results.
func shapedChain(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	pad := strings.Repeat("x", 120)
	for i := range msgs {
		switch i % 3 {
		case 0:
			msgs[i] = tract.ImportMessage{Role: tract.RoleUser, Parts: []llm.Part{
				llm.TextPart(fmt.Sprintf("look %08d", i)), llm.ImagePart("https://example.com/"+pad, "low")}}
		case 1:
			msgs[i] = tract.ImportMessage{Role: tract.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i),
				Type: "function", Function: llm.FunctionCall{Name: "lookup", Arguments: `{"q":"` + pad + `"}`}}}}
		default:
			msgs[i] = tract.ImportMessage{Role: tract.RoleTool, Content: pad, ToolCallID: fmt.Sprintf("call_%d", i-1)}
		}
	}
	return msgs
}

// BenchmarkImport_Shaped imports 10,000 messages that all have shapes
// (compare BenchmarkImportBulk's plain ones).
func BenchmarkImport_Shaped(b *testing.B) {
	msgs := shapedChain(10_000)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tr := benchTract(b, false)
		b.StartTimer()
		if _, err := tr.Import(context.Background(), msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileCold_Shaped compiles a 10,000-message chain of shaped
// messages with nothing cached (compare BenchmarkCompileCold).
func BenchmarkCompileCold_Shaped(b *testing.B) {
	tr := benchTract(b, false)
	_, err := tr.Import(context.Background(), shapedChain(10_000))
	require.NoError(b, err)
	compileCold(b, tr, 10_000)
}
