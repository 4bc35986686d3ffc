//go:build linux

package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// inOrder requires each of want to occur in out after the one before.
func inOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		require.GreaterOrEqual(t, i, 0, "%q is missing, or out of order, in:\n%q", w, out)
		rest = rest[i+len(w):]
	}
}

// A validated chat on a terminal streams each attempt under its header;
// the rejected attempt is erased and replaced by its verdict, and so is
// the accepted one before standard output (the same terminal) prints the
// answer once.
func TestChat_StreamsAttemptsOnTheTerminal(t *testing.T) {
	t.Parallel()
	srv := retryServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat", "-V", "json", "colours?")
	assert.Equal(t, 0, p.exit())
	out := p.finalOutput()
	inOrder(t, out,
		"attempt 1/3 ▸\r\n", badJSON, "\r\x1b[1A\x1b[J", "✗ attempt 1/3 rejected: json: invalid JSON",
		"attempt 2/3 ▸\r\n", goodJSON, "\r\x1b[1A\x1b[J", "✓ attempt 2/3 passed\r\n",
		goodJSON+"\r\n", "accepted after 2 attempts")
	assert.Equal(t, 2, strings.Count(out, goodJSON), "streamed once, printed once")
	assert.False(t, sgr.MatchString(out), "colour despite NO_COLOR: %q", out)
	assert.Equal(t, []string{goodJSON, "colours?"}, texts(s.log()))
}

// With standard output piped, it carries only the accepted answer, as
// without a terminal; the terminal keeps the accepted attempt's stream
// (nothing prints it again there) and strikes the rejected one.
func TestChat_StreamsAttemptsWithStdoutPiped(t *testing.T) {
	t.Parallel()
	srv := retryServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	var stdout output
	p := s.startPTYOut(&stdout, "chat", "-V", "json", "colours?")
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, goodJSON+"\n", stdout.String())
	out := p.finalOutput()
	inOrder(t, out, "attempt 1/3 ▸", badJSON, "\x1b[J✗ attempt 1/3 rejected", "attempt 2/3 ▸", goodJSON+"\r\n✓ attempt 2/3 passed")
	assert.NotContains(t, out, "attempt 1/3: failed", "the plain progress lines are replaced")
}

// TERM=dumb moves no cursor: each attempt stays on the screen and its
// verdict follows it. Without NO_COLOR the header is dim and the verdicts
// coloured.
func TestChat_StreamsAttemptsOnADumbOrColourTerminal(t *testing.T) {
	t.Parallel()
	t.Run("dumb", func(t *testing.T) {
		t.Parallel()
		srv := retryServer(t)
		s := chatEnv(newSandbox(t).forTest(t), srv).withEnv("TERM", "dumb", "NO_COLOR", "")
		s.initRepo()
		p := s.startPTY("chat", "-V", "json", "colours?")
		assert.Equal(t, 0, p.exit())
		out := p.finalOutput()
		assert.NotContains(t, out, "\x1b[")
		inOrder(t, out, "attempt 1/3 ▸\r\n"+badJSON+"\r\n✗ attempt 1/3 rejected: json:", "attempt 2/3 ▸\r\n"+goodJSON+"\r\n✓ attempt 2/3 passed\r\n", goodJSON+"\r\n")
	})
	t.Run("colour", func(t *testing.T) {
		t.Parallel()
		srv := retryServer(t)
		s := chatEnv(newSandbox(t).forTest(t), srv).withEnv("TERM", "xterm", "NO_COLOR", "")
		s.initRepo()
		p := s.startPTY("chat", "-V", "json", "colours?")
		assert.Equal(t, 0, p.exit())
		inOrder(t, p.finalOutput(), "\x1b[2mattempt 1/3 ▸\x1b[0m", "\x1b[31m✗ attempt 1/3 rejected:\x1b[0m json:", "\x1b[32m✓ attempt 2/3 passed\x1b[0m")
	})
}

// The REPL streams a validated turn's attempts the same way; Ctrl-C
// during an attempt ends its line before the REPL says the message was
// cancelled.
func TestREPL_StreamsValidatedAttempts(t *testing.T) {
	t.Parallel()
	srv := retryServer(t)
	srv.When("slow question", llmtest.Reply{Content: "this answer never ends", ChunkDelay: time.Hour})
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat", "-V", "json")
	p.waitFor("> ")
	p.send("colours?\r")
	p.waitFor("attempt 1/3 ▸")
	p.waitFor(badJSON)
	p.waitFor("✗ attempt 1/3 rejected")
	p.waitFor("attempt 2/3 ▸")
	p.waitFor("✓ attempt 2/3 passed")
	p.waitFor(goodJSON)
	p.waitFor("> ")

	p.send("slow question\r")
	p.waitFor("attempt 1/3 ▸\r\nthis ")
	p.send("\x03")
	p.waitFor("\r\n[message cancelled]")
	p.waitFor("> ")
	p.send("\x04")
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, []string{goodJSON, "colours?"}, texts(s.log()))
}
