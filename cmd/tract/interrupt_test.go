package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hardExit runs the restores still registered, once, says why, and
// exits with 130; on a nil *interrupts (a test's run) nothing happens.
func TestInterrupts_HardExitRestoresThenExits(t *testing.T) {
	var errOut bytes.Buffer
	var codes []int
	in := newInterrupts(&errOut, func(code int) { codes = append(codes, code) })
	var ran []string
	in.onHardExit(func() { ran = append(ran, "terminal") })
	remove := in.onHardExit(func() { ran = append(ran, "undone already") })
	remove()
	in.hardExit()
	in.hardExit() // a third Ctrl-C while exiting
	assert.Equal(t, []string{"terminal"}, ran)
	assert.Equal(t, []int{exitInterrupt}, codes)
	assert.Contains(t, errOut.String(), "tract: interrupted again: exiting at once; every commit made so far is intact")

	var none *interrupts
	none.onHardExit(func() { t.Error("a nil *interrupts runs nothing") })()
	none.hardExit()
}

// A command that returns while a second Ctrl-C's hardExit runs (its
// restore stopped the pager the command waited on) does not exit before
// hardExit has said why, with 130; a Ctrl-C after the command's own exit
// began does nothing.
func TestInterrupts_ExitWithWaitsForAHardExitUnderWay(t *testing.T) {
	var mu sync.Mutex
	var errOut bytes.Buffer
	var codes []int
	exited := make(chan struct{}, 2)
	exit := func(code int) {
		mu.Lock()
		codes = append(codes, code)
		mu.Unlock()
		exited <- struct{}{}
	}
	in := newInterrupts(&errOut, exit)
	restoring, release := make(chan struct{}), make(chan struct{})
	in.onHardExit(func() { close(restoring); <-release })
	go in.hardExit()
	<-restoring
	go in.exitWith(0) // the command returned: its pager was stopped
	close(release)
	<-exited
	select {
	case <-exited:
		t.Fatal("the process exited twice")
	case <-time.After(50 * time.Millisecond):
	}
	mu.Lock()
	assert.Equal(t, []int{exitInterrupt}, codes)
	mu.Unlock()
	assert.Contains(t, errOut.String(), "interrupted again")

	errOut.Reset()
	codes = nil
	in = newInterrupts(&errOut, exit)
	in.exitWith(3)
	in.hardExit()
	<-exited
	assert.Equal(t, []int{3}, codes)
	assert.Empty(t, errOut.String())
}

// A second Ctrl-C while -o's file is being written removes its temporary
// file: the target stays as it was, and nothing is left beside it.
func TestInterrupts_HardExitRemovesAWholeFilesTemporary(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(target, []byte("before\n"), 0o600))
	in := newInterrupts(io.Discard, func(int) {})
	w, err := createWhole(in, target, 0o600)
	require.NoError(t, err)
	_, err = w.WriteString("half of it")
	require.NoError(t, err)
	in.hardExit()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the target is left")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "before\n", string(got))
	w.Close()
}
