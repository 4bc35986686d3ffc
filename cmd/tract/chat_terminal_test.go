package main

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'tract chat' with no message opens the REPL on a terminal, and reads
// the message from standard input otherwise.
func TestNewCmdChat_NoMessageOnTerminalIsInteractive(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	f.IO.InTTY = true
	var got *ChatOptions
	cmd := newCmdChat(f, func(o *ChatOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	require.NoError(t, cmd.Execute())
	assert.True(t, got.Interactive)
	assert.False(t, got.FromStdin)

	got, err := parse(t, newCmdChat)
	require.NoError(t, err)
	assert.False(t, got.Interactive)
	assert.True(t, got.FromStdin)
}

// The line editor never sees a Ctrl-C (it would end the input): it gets
// the keys that clear the line instead.
func TestKeyboard_CtrlCClearsTheLine(t *testing.T) {
	k := newKeyboard(context.Background(), bytes.NewReader([]byte("ab\x03cd")))
	got, err := io.ReadAll(k)
	require.NoError(t, err)
	assert.Equal(t, "ab"+keyKillLine+"cd", string(got))
}

// While a line runs, Ctrl-C interrupts it; other keys wait for the next
// line.
func TestKeyboard_WatchInterruptsAndKeepsTypeAhead(t *testing.T) {
	in, keysIn := io.Pipe()
	k := newKeyboard(context.Background(), in)
	interrupted := make(chan struct{})
	stop := k.watch(func() { close(interrupted) })
	_, err := keysIn.Write([]byte("next"))
	require.NoError(t, err)
	_, err = keysIn.Write([]byte{keyCtrlC})
	require.NoError(t, err)
	<-interrupted
	stop()
	require.NoError(t, keysIn.Close())
	got, err := io.ReadAll(k)
	require.NoError(t, err)
	assert.Equal(t, "next", string(got))
}

// While a line runs, a tool's approval takes the keys typed: the first
// key it knows answers (another is ignored), Enter answers "", and the
// keys after the question go back to the next line.
func TestKeyboard_AnswerDuringALine(t *testing.T) {
	in, keysIn := io.Pipe()
	k := newKeyboard(context.Background(), in)
	stop := k.watch(func() { t.Error("no Ctrl-C was typed") })
	answered := make(chan string)
	ask := func() {
		go func() {
			a, err := k.answer(t.Context(), "yna", nil)
			assert.NoError(t, err)
			answered <- a
		}()
	}
	waitQuestion := func() {
		assert.Eventually(t, func() bool {
			k.mu.Lock()
			defer k.mu.Unlock()
			return k.question != nil
		}, 5*time.Second, time.Millisecond)
	}
	ask()
	waitQuestion()
	_, err := keysIn.Write([]byte("xY"))
	require.NoError(t, err)
	assert.Equal(t, "y", <-answered)
	ask()
	waitQuestion()
	_, err = keysIn.Write([]byte("\r"))
	require.NoError(t, err)
	assert.Equal(t, "", <-answered)
	_, err = keysIn.Write([]byte("next"))
	require.NoError(t, err)
	stop()
	require.NoError(t, keysIn.Close())
	got, err := io.ReadAll(k)
	require.NoError(t, err)
	assert.Equal(t, "next", string(got))

	// A cancelled line ends the question.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = k.answer(ctx, "yna", nil)
	assert.ErrorIs(t, err, context.Canceled)
}

// The history keeps typed lines in memory, newest first, but none typed
// in secret mode, no empty line and no immediate repeat.
func TestLineHistory_SkipsSecretLines(t *testing.T) {
	h := &lineHistory{}
	h.Add("one")
	h.Add("one")
	h.Add("")
	h.secret = true
	h.Add("a secret")
	h.secret = false
	h.Add("two")
	require.Equal(t, 2, h.Len())
	assert.Equal(t, "two", h.At(0))
	assert.Equal(t, "one", h.At(1))
	for i := range historySize + 5 {
		h.Add(strconv.Itoa(i))
	}
	assert.Equal(t, historySize, h.Len())
}

func TestCRLFWriter(t *testing.T) {
	var b bytes.Buffer
	n, err := crlfWriter{&b}.Write([]byte("a\nb\n"))
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, "a\r\nb\r\n", b.String())
}

// The paste tracker notes, for each Enter the line editor is given,
// whether a bracketed paste was open at it, however the keys are split
// into reads, and makes a "\r\n" one Enter.
func TestPasteTracker(t *testing.T) {
	tests := []struct {
		name   string
		reads  []string
		keys   string
		enters []bool
	}{
		{"typed lines", []string{"one\rtwo\r"}, "one\rtwo\r", []bool{false, false}},
		{"a paste on an empty line", []string{"\x1b[200~a\rb\x1b[201~\r"}, "\x1b[200~a\rb\x1b[201~\r", []bool{true, false}},
		{"a paste into a half-typed line", []string{"half ", "\x1b[200~one\rtwo\x1b[201~", "\r"}, "half \x1b[200~one\rtwo\x1b[201~\r", []bool{true, false}},
		{"markers split across reads", []string{"x\x1b[2", "00~a\r", "b\x1b[20", "1~\r"}, "x\x1b[200~a\rb\x1b[201~\r", []bool{true, false}},
		{"a newline at the end of a paste", []string{"\x1b[200~a\n\x1b[201~"}, "\x1b[200~a\n\x1b[201~", []bool{true}},
		{"CRLF is one Enter", []string{"a\r\nb\r", "\nc\r"}, "a\rb\rc\r", []bool{false, false, false}},
		{"an escape that is not a marker", []string{"\x1b[A\x1b[2\r"}, "\x1b[A\x1b[2\r", []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pt pasteTracker
			var got []byte
			for _, r := range tt.reads {
				got = append(got, pt.keys([]byte(r))...)
			}
			assert.Equal(t, tt.keys, string(got))
			var enters []bool
			for range len(pt.enters) {
				enters = append(enters, pt.endedInPaste())
			}
			assert.Equal(t, tt.enters, enters)
			assert.False(t, pt.endedInPaste(), "no more lines")
		})
	}
}

// A message of several lines, typed with "\" or pasted, is one history
// entry: Up shows it on one line, its breaks as ⏎, and the line read is
// the message again, line breaks and all, even after an edit. Other lines
// keep a ⏎ typed in them.
func TestLineHistory_RecallsAWholeMessage(t *testing.T) {
	h := &lineHistory{}
	// A message as the REPL reads it: the editor adds each line (Add),
	// the REPL expands it and ends the message with its text.
	send := func(lines ...string) {
		h.startMessage()
		for _, l := range lines {
			h.startLine()
			h.Add(l)
			assert.Equal(t, l, h.expand(l), "a typed line is read as typed")
		}
	}
	send("single")
	send(`line one\`, "line two")
	h.endMessage("line one\nline two")
	require.Equal(t, 2, h.Len())
	assert.Equal(t, "line one⏎line two", h.At(0), "Up shows the whole message")
	assert.Equal(t, "single", h.At(1))

	// Enter on the recalled line sends the message as it was.
	h.startMessage()
	h.startLine()
	recalled := h.At(0)
	h.Add(recalled)
	assert.Equal(t, "line one\nline two", h.expand(recalled))
	h.endMessage("line one\nline two")
	assert.Equal(t, 2, h.Len(), "sent again, not added twice")

	// An edit of it keeps its breaks.
	h.startMessage()
	h.startLine()
	edited := h.At(0) + " and three"
	h.Add(edited)
	assert.Equal(t, "line one\nline two and three", h.expand(edited))
	h.endMessage("line one\nline two and three")
	assert.Equal(t, "line one⏎line two and three", h.At(0))
	assert.Equal(t, 3, h.Len())

	// A ⏎ typed on a line that was not recalled is text.
	h.startMessage()
	h.startLine()
	h.Add("a ⏎ typed")
	assert.Equal(t, "a ⏎ typed", h.expand("a ⏎ typed"))
	h.endMessage("a ⏎ typed")
	assert.Equal(t, "a ⏎ typed", h.At(0))

	// A message typed in secret mode stays out, whole.
	h.secret = true
	h.startMessage()
	h.Add(`secret one\`)
	h.Add("secret two")
	h.endMessage("secret one\nsecret two")
	h.secret = false
	assert.Equal(t, 4, h.Len())
	assert.Equal(t, "a ⏎ typed", h.At(0))
}
