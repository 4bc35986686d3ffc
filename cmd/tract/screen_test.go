package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract"
)

// hostile is an answer that, printed as it is, sets the terminal's title,
// clears the screen, turns the text red, returns to the line's start and
// erases it, leaving only "over".
const hostile = "hi \x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x1b[Kover"

func TestScreenText(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain text is unchanged", "héllo, 世界\n\tindented", "héllo, 世界\n\tindented"},
		{"the hostile answer", hostile, "hi ^[]0;pwned^G^[[2J^[[31mred^M^[[Kover"},
		{"a line break after a return", "a\r\nb\r\n", "a\nb\n"},
		{"a lone return at the end", "a\r", "a^M"},
		{"backspace, NUL, DEL", "ab\b\x00c\x7f", "ab^H^@c^?"},
		{"C1 controls as ESC and a letter", "\u009b2J \u009d0;t\u009c \u0085", "^[[2J ^[]0;t^[\\ ^[E"},
		{"invalid UTF-8", "a\xffb\xe6", "a\uFFFDb\uFFFD"},
		{"other Unicode passes", "\u00a0\u200b\u2028", "\u00a0\u200b\u2028"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, screenText(tc.in))
		})
	}
}

// A stream shows the same as the whole text, wherever it is split: a
// sequence, a "\r\n" or a character cut between two pieces.
func TestScreenWriter_SplitAnywhere(t *testing.T) {
	for _, text := range []string{hostile, "ab\r\ncd\r\n", "世界\u009b\r\r\n", "x\xe4\xb8", "\r"} {
		want := screenText(text + "\n")
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var b bytes.Buffer
				w := newScreenWriter(&b, true)
				for _, piece := range []string{text[:i], text[i:j], text[j:], "\n"} { // a line break ends an answer
					n, err := w.Write([]byte(piece))
					assert.NoError(t, err)
					assert.Equal(t, len(piece), n)
				}
				assert.Equal(t, want, b.String(), "split at %d and %d of %q", i, j, text)
			}
		}
		assert.Equal(t, screenText(text), strings.TrimSuffix(screenText(text+"x"), "x"), "the end of a text shows as the middle would: %q", text)
	}
}

// Output that is not a terminal keeps its bytes.
func TestScreenWriter_NotATerminal(t *testing.T) {
	var b bytes.Buffer
	w := newScreenWriter(&b, false)
	assert.Same(t, &b, w)
	_, _ = w.Write([]byte(hostile))
	assert.Equal(t, hostile, b.String())
}

// What a terminal shows of a model's text besides its answer goes
// through the sanitiser too: a diagnosis in a progress or verdict line,
// the escalation table, an error.
func TestScreen_DiagnosesEscalationsAndErrors(t *testing.T) {
	shown := screenText(hostile)
	rejected := tract.Attempt{Number: 1, Max: 3, Diagnosis: hostile}

	var b bytes.Buffer
	progress(&b, true, true)(rejected)
	assert.Equal(t, "attempt 1/3: failed: "+shown+"\n", b.String())
	b.Reset()
	progress(&b, false, true)(rejected)
	assert.Equal(t, "attempt 1/3: failed: "+hostile+"\n", b.String(), "not a terminal: as it is")

	b.Reset()
	s := &attemptStream{w: &b, erase: true, width: 80, height: 24}
	s.verdict(rejected)
	assert.Equal(t, "✗ attempt 1/3 rejected: "+shown+"\n", b.String())

	b.Reset()
	e := testEscalation()
	e.Task = "task\x1b[2J"
	e.Failures[1].Error, e.Failures[1].Details, e.Failures[1].SuggestedFix = hostile+"\nsecond line", hostile, hostile
	writeEscalation(&b, e)
	assert.NotContains(t, b.String(), "\x1b")
	assert.Contains(t, b.String(), "Task:     task^[[2J\n")
	assert.Contains(t, b.String(), "timeout              hi ^[]0;pwned^G^[[2J^[[31mred ^[[Kover second line\n",
		"an error is one line of the table: its line breaks (a return too) are spaces")
	assert.Contains(t, b.String(), "Suggested fix: "+shown+"\n")

	var out, errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{Out: &out, ErrOut: &errOut, ErrTTY: true}, Getenv: func(string) string { return "" }}
	printError(f, nil, errors.New("server said: "+hostile))
	assert.Equal(t, "tract: server said: "+shown+"\n", errOut.String())
}

// JSON output escapes the controls encoding/json leaves as they are
// (DEL, C1): the same JSON, which a terminal cannot obey.
func TestWriteJSON_EscapesDELAndC1(t *testing.T) {
	v := map[string]string{"answer": "a\x7fb\u009b2Jc\u00a0é" + hostile}
	var b bytes.Buffer
	assert.NoError(t, writeJSON(&b, v))
	assert.Contains(t, b.String(), `a\u007fb\u009b2Jc`+"\u00a0é")
	assert.NotContains(t, b.String(), "\x7f")
	assert.NotContains(t, b.String(), "\u009b")
	var back map[string]string
	assert.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, v, back)
	assert.Equal(t, []byte("plain"), jsonSafe([]byte("plain")))
}
