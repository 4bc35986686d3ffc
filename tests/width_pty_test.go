//go:build linux

package tests

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// terminalLines returns the lines a terminal session left on the screen,
// without colour or cursor escapes: of a line rewritten after a carriage
// return (a progress line), what was written last.
func terminalLines(out string) []string {
	out = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`).ReplaceAllString(out, "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		lines[i] = l[strings.LastIndexByte(l, '\r')+1:]
	}
	return lines
}

// On a terminal, log --all (a graph), log --oneline, reflog and the demo
// print no line wider than the terminal, so nothing wraps and the graph
// keeps its columns; the texts are cut, the graph is not.
func TestOneLineViews_FitTheTerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	long := "Describe Ada Lovelace as a JSON object with her name and year of birth, and more: 日本語のテキストです"
	s.commit("system", "You are a precise assistant: answer in exactly the format asked for, with nothing around it.")
	s.commit("user", long)
	s.ok("branch", "side", "HEAD~1")
	s.ok("commit", "--branch", "side", "-r", "user", "-m", long+" (side)")
	s.ok("reset", "--soft", "HEAD~1")
	s.commit("user", long+" (again)")

	for _, tc := range []struct {
		cols uint16
		args []string
	}{
		{50, []string{"--no-pager", "log", "--all"}},
		{40, []string{"--no-pager", "log", "--oneline"}},
		{60, []string{"--no-pager", "log", "--all", "--format", "%h %r %s"}},
		{45, []string{"--no-pager", "reflog"}},
		{80, []string{"demo"}},
	} {
		p := s.startPTYSized(tc.cols, nil, tc.args...)
		require.Equal(t, 0, p.exit(), "%v: %s", tc.args, p.finalOutput())
		lines := terminalLines(p.finalOutput())
		require.NotEmpty(t, lines)
		cut := false
		for _, l := range lines {
			assert.LessOrEqual(t, utf8.RuneCountInString(l)+wide(l), int(tc.cols), "%v at %d columns: %q", tc.args, tc.cols, l)
			assert.True(t, utf8.ValidString(l), "%q", l)
			cut = cut || strings.HasSuffix(l, "…")
		}
		assert.True(t, cut, "%v: some line was cut", tc.args)
		if len(tc.args) > 2 && tc.args[2] == "--all" {
			assert.Contains(t, strings.Join(lines, "\n"), "|/", "the graph is drawn")
		}
	}
	// Piped, the same views are not cut to any width.
	var widest int
	for _, l := range lines(s.ok("log", "--all").Stdout) {
		widest = max(widest, utf8.RuneCountInString(l))
	}
	assert.Greater(t, widest, 100)
}

// wide counts the runes of s that a terminal draws two columns wide (the
// test's texts hold CJK only).
func wide(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x3000 && r <= 0x9fff {
			n++
		}
	}
	return n
}

// --no-color turns colour off on a terminal, as NO_COLOR does.
func TestCLI_NoColor(t *testing.T) {
	t.Parallel()
	s := newSandbox(t).withEnv("NO_COLOR", "")
	s.initRepo()
	s.commit("user", "hello")
	colour := s.startPTY("--no-pager", "log", "--oneline").finalOutput()
	assert.True(t, sgr.MatchString(colour), "colour on a terminal: %q", colour)
	for _, args := range [][]string{{"--no-color", "--no-pager", "log", "--oneline"}, {"--no-pager", "log", "--oneline", "--no-color"}} {
		out := s.startPTY(args...).finalOutput()
		assert.False(t, sgr.MatchString(out), "%q: %q", args, out)
		assert.True(t, strings.Contains(out, "user: hello"), out)
	}
	out := s.withEnv("NO_COLOR", "1").startPTY("--no-pager", "log", "--oneline").finalOutput()
	assert.False(t, sgr.MatchString(out), "NO_COLOR: %q", out)
}

// In the REPL on a terminal, /log's lines are cut to its width.
func TestREPL_LogFitsTheTerminal(t *testing.T) {
	t.Parallel()
	s := chatEnv(newSandbox(t), llmtest.NewServer(t, llmtest.WithoutVerify()))
	s.initRepo()
	s.commit("user", "Describe Ada Lovelace as a JSON object with her name and year of birth, and more.")
	p := s.startPTYSized(50, nil, "chat")
	p.waitFor("> ")
	p.send("/log\r")
	p.waitFor("…")
	p.waitFor("> ")
	p.send("\x04")
	require.Equal(t, 0, p.exit())
	for _, l := range terminalLines(p.finalOutput()) {
		if strings.Contains(l, " user ") {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), 50, "%q", l)
			assert.True(t, strings.HasSuffix(l, "…"), "%q", l)
		}
	}
}

// On an 80-column terminal, tract chat --help is at most 60 lines and no
// line of any command's help, or of a guide's prose, is wider than the
// terminal: flag descriptions and paragraphs wrap to it.
func TestHelp_FitsAnEightyColumnTerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, args := range [][]string{
		{"chat", "--help"},
		{"--help"},
		{"export", "--help"},
		{"config", "--help"},
		{"--no-pager", "help", "validators"},
	} {
		p := s.startPTYSized(80, nil, args...)
		require.Equal(t, 0, p.exit(), "%v: %s", args, p.finalOutput())
		lines := terminalLines(p.finalOutput())
		for _, l := range lines {
			if args[0] == "--no-pager" && (strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "|")) {
				continue // a guide's code and tables are shown as they are
			}
			assert.LessOrEqual(t, utf8.RuneCountInString(l)+wide(l), 80, "%v: %q", args, l)
		}
		if args[0] == "chat" {
			assert.LessOrEqual(t, len(lines), 60, "tract chat --help at 80 columns:\n%s", strings.Join(lines, "\n"))
			assert.Contains(t, lines[0], "Usage: tract chat")
		}
	}
}
