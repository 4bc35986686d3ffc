package main

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"

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
