//go:build linux

package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/llmtest"
)

// hostileAnswer, printed as it is, sets the terminal's title, clears the
// screen, turns the text red, returns to the line's start and erases it:
// only "over" would be left to see.
const hostileAnswer = "hi \x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x1b[Kover"

// hostileShown is hostileAnswer as a terminal shows it: every control
// character in caret notation.
const hostileShown = "hi ^[]0;pwned^G^[[2J^[[31mred^M^[[Kover"

// hostileStream is hostileAnswer as a streamed answer, cut inside its
// escape sequences: ESC in one chunk, the rest of its sequence in the
// next.
func hostileStream() llmtest.Reply {
	var b strings.Builder
	for _, piece := range []string{"hi \x1b", "]0;pwned\x07\x1b", "[2J\x1b[31mred\r", "\x1b[Kover"} {
		c, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}, "finish_reason": nil}}})
		b.WriteString("data: " + string(c) + "\n\n")
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	return llmtest.Reply{Body: b.String(), ContentType: "text/event-stream"}
}

// assertTerminalSafe checks what a terminal received: none of the bytes
// that set its title, clear its screen, colour text or erase a line, and
// the answer shown whole, "hi" and "red" included.
func assertTerminalSafe(t *testing.T, out string) {
	t.Helper()
	for _, b := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[31m", "\x1b[K"} {
		assert.NotContains(t, out, b, "a control sequence of the answer reached the terminal")
	}
	assert.Contains(t, out, hostileShown)
}

// A model's answer cannot take over the terminal: streamed or not,
// validated or not, in a one-shot chat or the REPL, its control
// characters are shown, not obeyed. Piped, it keeps every byte.
func TestChat_AnswerCannotTakeOverTheTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply llmtest.Reply
		args  []string
	}{
		{"one-shot, streamed", hostileStream(), []string{"chat", "hello"}},
		{"one-shot, not streamed", llmtest.Answer(hostileAnswer), []string{"chat", "--no-stream", "hello"}},
		{"one-shot, validated", hostileStream(), []string{"chat", "-V", "contains:red", "hello"}},
		{"one-shot, validated, not streamed", llmtest.Answer(hostileAnswer), []string{"chat", "-V", "contains:red", "--no-stream", "hello"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(tc.reply)
			s := chatEnv(newSandbox(t).forTest(t), srv).withEnv("TERM", "xterm")
			s.initRepo()
			p := s.startPTY(tc.args...)
			assert.Equal(t, 0, p.exit())
			assertTerminalSafe(t, p.finalOutput())
			assert.Equal(t, []string{hostileAnswer, "hello"}, texts(s.log()), "stored as the model sent it")
		})
	}
	repl := []struct {
		name  string
		reply llmtest.Reply
		args  []string
	}{
		{"REPL, streamed", hostileStream(), []string{"chat"}},
		{"REPL, not streamed", llmtest.Answer(hostileAnswer), []string{"chat", "--no-stream"}},
		{"REPL, validated", hostileStream(), []string{"chat", "-V", "contains:red"}},
	}
	for _, tc := range repl {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(tc.reply)
			s := chatEnv(newSandbox(t).forTest(t), srv).withEnv("TERM", "xterm")
			s.initRepo()
			p := s.startPTY(tc.args...)
			p.waitFor("> ")
			p.send("hello\r")
			p.waitFor("over")
			p.waitFor("> ")
			p.send("/log\r") // a one-line view of the answer
			p.waitFor("> ")
			p.send("\x04")
			assert.Equal(t, 0, p.exit())
			assertTerminalSafe(t, p.finalOutput())
		})
	}
	t.Run("piped", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Answer(hostileAnswer))
		s := chatEnv(newSandbox(t).forTest(t), srv)
		s.initRepo()
		var stdout output // 'tract chat hello | …' at a terminal
		p := s.startPTYOut(&stdout, "chat", "hello")
		assert.Equal(t, 0, p.exit())
		assert.Equal(t, hostileAnswer+"\n", stdout.String(), "piped output keeps every byte")
	})
}
