//go:build linux

package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/llmtest"
)

// While the model has not answered, a chat on a terminal shows
// "waiting for MODEL… N.Ns" on standard error, redrawn as the time
// passes and erased before the answer: for a streamed answer, a
// validated one (-V json) and the REPL's.
func TestChat_WaitingLineOnTheTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		args   []string
		repl   string // the REPL's input, when it is one
		answer string
	}{
		{"streamed", []string{"chat", "hello"}, "", "the answer"},
		{"validated", []string{"chat", "-V", "json", "hello"}, "", `{"ok": true}`},
		{"validated, not streamed", []string{"chat", "-V", "json", "--no-stream", "hello"}, "", `{"ok": true}`},
		{"REPL", []string{"chat"}, "hello\r", "the answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Content: tc.answer, Delay: 3 * time.Second}) // long enough for redraws on a loaded machine
			s := chatEnv(newSandbox(t).forTest(t), srv)
			s.initRepo()

			p := s.startPTY(tc.args...)
			if tc.repl != "" {
				p.waitFor("> ")
				p.send(tc.repl)
			}
			// Drawn, then redrawn (every 0.1s: a busy machine may skip some).
			p.waitFor("waiting for test-model… ")
			p.waitFor("\r\x1b[Kwaiting for test-model… ")
			p.waitFor("\r\x1b[K")
			p.waitFor(tc.answer)
			if tc.repl != "" {
				p.waitFor("> ")
				p.send("\x04")
			}
			assert.Equal(t, 0, p.exit())
			out := p.finalOutput()
			last := strings.LastIndex(out, "waiting for test-model…")
			assert.Contains(t, out[last:], "\r\x1b[K", "the line is erased")
			assert.Less(t, last, strings.LastIndex(out, tc.answer), "before the answer shows")
		})
	}
}

// With -q, or with standard error piped, there is no waiting line.
func TestChat_NoWaitingLineWhenQuietOrPiped(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{Content: "one", Delay: 500 * time.Millisecond}, llmtest.Reply{Content: "two", Delay: 500 * time.Millisecond})
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("-q", "chat", "hello")
	assert.Equal(t, 0, p.exit())
	assert.NotContains(t, p.finalOutput(), "waiting for")

	r := s.ok("chat", "again")
	assert.NotContains(t, r.Stderr, "waiting for")
}
