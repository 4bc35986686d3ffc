//go:build linux

package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/llmtest"
)

// A one-shot chat on a terminal never waits for keyboard input unless
// asked: by default the exhaustion is aborted at once; with
// --on-exhausted ask, chat prints the escalation and reads the answer.
func TestChat_EscalationOnATerminal(t *testing.T) {
	t.Parallel()
	newServer := func(t *testing.T) *llmtest.Server {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
		return srv
	}
	t.Run("default: no prompt", func(t *testing.T) {
		t.Parallel()
		s := chatEnv(newSandbox(t), newServer(t))
		s.initRepo()
		p := s.startPTY("chat", "--no-stream", "-V", "json", "--max-attempts", "2", "Give me JSON")
		assert.Equal(t, exitExhausted, p.exit())
		out := p.finalOutput()
		assert.NotContains(t, out, "Your answer:")
		assert.Contains(t, out, "answer: abort")
	})
	t.Run("ask", func(t *testing.T) {
		t.Parallel()
		s := chatEnv(newSandbox(t), newServer(t))
		s.initRepo()
		p := s.startPTY("chat", "--no-stream", "-V", "json", "--max-attempts", "2", "--on-exhausted", "ask", "Give me JSON")
		p.waitFor("Task escalation required")
		p.waitFor("Your answer: ")
		p.send("skip\r")
		assert.Equal(t, exitSkipped, p.exit())
		assert.True(t, strings.Contains(p.finalOutput(), "skipped"))
	})
}
