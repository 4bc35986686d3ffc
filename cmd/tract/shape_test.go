package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// An answer streamed to a terminal shows its tool calls after its text:
// they come in no text delta.
func TestRun_StreamedAnswerShowsItsToolCalls(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{Content: "Checking.", ToolCalls: []llm.ToolCall{
		{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "TRACT_MODEL": "m"}
	getenv := func(k string) string { return env[k] }
	db := filepath.Join(t.TempDir(), "t.db")
	quiet := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "init"}, quiet, getenv))

	term := &writes{}
	io := &IOStreams{In: strings.NewReader(""), Out: term, ErrOut: &bytes.Buffer{}, OutTTY: true}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "chat", "weather?"}, io, getenv))
	assert.Equal(t, "Checking.\n→ tool call get_weather({\"city\":\"Paris\"})\n", strings.Join(term.calls, ""))
	require.True(t, srv.Requests()[0].Stream)
}
