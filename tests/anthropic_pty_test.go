//go:build linux

package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// On a terminal the Anthropic answer streams, as the OpenAI one does.
func TestChat_AnthropicStreamsOnATerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Streamed over server-sent events."))
	s := anthropicEnv(newSandbox(t), srv, "claude-test")
	s.initRepo()

	p := s.startPTY("chat", "Stream, please.")
	p.waitFor("Streamed over server-sent events.")
	assert.Equal(t, 0, p.exit())
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].Stream)
	assert.Equal(t, llmtest.WireAnthropic, reqs[0].Wire)
	assert.Equal(t, "Streamed over server-sent events.", s.log()[0].Text)
}
