package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
