package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{
		"":                      0,
		"abc":                   3,
		"naïve":                 5,
		"e\u0301":               1, // e and a combining acute
		"日本語":                   6,
		"한국":                    4,
		"🙂":                     2,
		"\x1b[33mabc\x1b[0m":    3,
		"a\tb":                  9,
		"* | " + "✗ invalid":    13,
		"\x1b[2m\x1b[0m":        0,
		"Ｆｕｌｌ":                  8,
		"\u200bzero\u200dwidth": 9,
	} {
		assert.Equal(t, want, displayWidth(s), "%q", s)
	}
}

func TestFitLine(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"anything", 0, "anything"},
		{"日本語のテキスト", 7, "日本語…"},
		{"日本語のテキスト", 8, "日本語…"},
		{"ab日本", 4, "ab…"},
		{"e\u0301e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301…"},
		{"🙂🙂🙂", 4, "🙂…"},
		// Colour sequences take no column, and a cut inside coloured text
		// ends the colour.
		{"\x1b[33mabcdef\x1b[0m", 4, "\x1b[33mabc…\x1b[0m"},
		{"\x1b[33mab\x1b[0mcdef", 4, "\x1b[33mab\x1b[0mc…"},
		{"a\tbcdefghijkl", 10, "a\tb…"},
	}
	for _, tt := range tests {
		got := fitLine(tt.s, tt.width)
		assert.Equal(t, tt.want, got, "fitLine(%q, %d)", tt.s, tt.width)
		assert.True(t, utf8.ValidString(got), "no rune is split: %q", got)
		if tt.width > 0 {
			assert.LessOrEqual(t, displayWidth(got), tt.width, "%q", got)
		}
	}
}

// The writer cuts each line however the writes split it, and passes
// everything through with width 0.
func TestFitWriter(t *testing.T) {
	var b bytes.Buffer
	w := newFitWriter(&b, 5)
	for _, p := range []string{"abc", "defgh\nxy", "\n", "12345\n", "tail without end"} {
		_, err := w.Write([]byte(p))
		require.NoError(t, err)
	}
	assert.Equal(t, "abcd…\nxy\n12345\n", b.String())
	require.NoError(t, w.flushLine())
	assert.Equal(t, "abcd…\nxy\n12345\ntail…", b.String())

	b.Reset()
	w = newFitWriter(&b, 0)
	_, err := w.Write([]byte("a line much longer than any width\n"))
	require.NoError(t, err)
	assert.Equal(t, "a line much longer than any width\n", b.String())
}

// The width of one-line views: none when piped; on a terminal, COLUMNS,
// else the terminal's, else 80.
func TestFactory_OutWidth(t *testing.T) {
	f, _, _ := testFactory(t, map[string]string{"COLUMNS": "120"})
	assert.Equal(t, 0, f.outWidth(), "piped: no cut, whatever COLUMNS says")
	f.IO.OutTTY = true
	assert.Equal(t, 120, f.outWidth())
	f, _, _ = testFactory(t, map[string]string{"COLUMNS": "wide"})
	f.IO.OutTTY = true
	assert.Equal(t, 80, f.outWidth(), "a terminal of unknown width")
}

// On a terminal the one-line views are cut to its width, a graph's lines
// included (the graph is kept, the text cut), so that none wraps; piped,
// they are as they were.
func TestRun_OneLineViewsFitTheTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	exec := func(tty bool, columns string, args ...string) string {
		t.Helper()
		f, _, errOut := testFactory(t, map[string]string{"COLUMNS": columns, "NO_COLOR": "1"})
		var out bytes.Buffer
		f.IO.Out, f.IO.OutTTY = &out, tty
		code := run(context.Background(), append([]string{"--db", db, "--no-pager"}, args...), f.IO, f.Getenv)
		require.Equal(t, exitOK, code, errOut.String())
		return out.String()
	}
	exec(false, "", "init")
	long := "Describe Ada Lovelace as a JSON object with her name and year of birth, in detail: 日本語のテキスト"
	exec(false, "", "commit", "-r", "system", "-m", "You are a precise assistant.")
	exec(false, "", "commit", "-r", "user", "-m", long)
	exec(false, "", "branch", "side", "HEAD~1")
	exec(false, "", "commit", "--branch", "side", "-r", "user", "-m", long+" on a side branch")

	views := [][]string{
		{"log", "--oneline"},
		{"log", "--graph"},
		{"log", "--all"},
		{"log", "--all", "--format", "%h %r %s %s"},
		{"log", "--format", "%H %s"},
		{"reflog"},
	}
	for _, width := range []int{30, 50, 80} {
		for _, args := range views {
			out := exec(true, strconv.Itoa(width), args...)
			require.NotEmpty(t, out)
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				assert.LessOrEqual(t, displayWidth(line), width, "%v at %d columns: %q", args, width, line)
				assert.True(t, utf8.ValidString(line), "%q", line)
			}
		}
	}
	// A graph keeps its columns: the text is cut, not the graph.
	graph := exec(true, "30", "log", "--all")
	assert.Contains(t, graph, "| * ")
	assert.Contains(t, graph, "|/")
	for _, args := range views {
		piped := exec(false, "30", args...)
		wide := false
		for _, line := range strings.Split(piped, "\n") {
			wide = wide || displayWidth(line) > 80
		}
		assert.True(t, wide, "piped, %v is not cut to a width", args)
	}
}

// A --format without a line break, %b or %B prints one line per commit:
// line breaks in a value become spaces. One with them keeps the values.
func TestLogFormat_OneLine(t *testing.T) {
	for format, want := range map[string]bool{
		"%h %k %x": true, "%s": true, "%H%%n": true,
		"%h%n%x": false, "%b": false, "%h %B": false, "a\nb %h": false,
	} {
		lf, err := parseLogFormat(format)
		require.NoError(t, err)
		assert.Equal(t, want, lf.oneLine(), "%q", format)
	}
	for in, want := range map[string]string{
		"one line":                            "one line",
		"status 1:\nx.go:3: a\n  x.go:5: b\n": "status 1: x.go:3: a x.go:5: b",
		"a\r\nb\n\n\nc":                       "a b c",
	} {
		assert.Equal(t, want, flattenLines(in), "%q", in)
	}
}
