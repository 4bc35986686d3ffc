package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --json parses into each command's options; branch takes it only to
// list, and events takes it as --format jsonl.
func TestJSONFlags(t *testing.T) {
	initOpts, err := parse(t, newCmdInit, "--json")
	require.NoError(t, err)
	assert.True(t, initOpts.JSON)

	importOpts, err := parse(t, newCmdImport, "--json", "in.jsonl")
	require.NoError(t, err)
	assert.True(t, importOpts.JSON)
	assert.Equal(t, "in.jsonl", importOpts.File)

	sw, err := parse(t, newCmdSwitch, "-c", "--json", "topic")
	require.NoError(t, err)
	assert.Equal(t, SwitchOptions{Factory: sw.Factory, Branch: "topic", Create: true, JSON: true}, *sw)

	co, err := parse(t, newCmdCheckout, "--json", "HEAD~1")
	require.NoError(t, err)
	assert.Equal(t, CheckoutOptions{Factory: co.Factory, Target: "HEAD~1", JSON: true}, *co)

	br, err := parse(t, newCmdBranch, "--json")
	require.NoError(t, err)
	assert.True(t, br.JSON)
	for _, args := range [][]string{{"--json", "new"}, {"--json", "-d", "old"}} {
		_, err = parse(t, newCmdBranch, args...)
		require.Error(t, err, args)
		assert.True(t, isUsage(err))
		assert.Contains(t, err.Error(), "--json lists the branches")
	}

	ev, err := parse(t, newCmdEvents, "--json")
	require.NoError(t, err)
	assert.Equal(t, "jsonl", ev.Format)
	_, err = parse(t, newCmdEvents, "--json", "--format", "text")
	require.Error(t, err)
	assert.True(t, isUsage(err))
}
