package compress_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
)

func TestTranscript_RoleColonText(t *testing.T) {
	items := []compress.Item{
		user("How do I reverse a list in Go?"),
		asst("  Use slices.Reverse(s).\nIt works in place.\n"),
		it(dag.RoleTool, "ok"),
	}
	assert.Equal(t, "user: How do I reverse a list in Go?\n\n"+
		"assistant: Use slices.Reverse(s).\nIt works in place.\n\n"+
		"tool: ok", compress.Transcript(items))
	assert.Equal(t, "", compress.Transcript(nil))
}

func TestDefaultPrompt(t *testing.T) {
	items := []compress.Item{user("How do I reverse a list in Go?"), asst("Use slices.Reverse(s).")}
	tests := []struct {
		name         string
		target       int
		instructions string
		wantUser     string
	}{
		{
			name: "transcript only",
			wantUser: "Summarize the conversation in this transcript.\n\n" +
				"<transcript>\nuser: How do I reverse a list in Go?\n\nassistant: Use slices.Reverse(s).\n</transcript>\n\n" +
				"Reply with the summary only.",
		},
		{
			name:         "target and instructions",
			target:       120,
			instructions: " keep code identifiers verbatim \n",
			wantUser: "Summarize the conversation in this transcript.\n\n" +
				"<transcript>\nuser: How do I reverse a list in Go?\n\nassistant: Use slices.Reverse(s).\n</transcript>\n\n" +
				"Target length: at most about 120 tokens.\n\n" +
				"Additional instructions: keep code identifiers verbatim\n\n" +
				"Reply with the summary only.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := compress.DefaultPrompt(items, tt.target, tt.instructions)
			require.Len(t, msgs, 2)
			assert.Equal(t, llm.Message{Role: "system", Content: compress.SystemPrompt}, msgs[0])
			assert.Equal(t, llm.Message{Role: "user", Content: tt.wantUser}, msgs[1])
		})
	}
}
