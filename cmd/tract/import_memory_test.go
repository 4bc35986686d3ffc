package main

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'tract import' of messages into a repository file calls ImportMemory
// once, with the environment; the commands around it, and an import in
// the openai format, do not.
func TestRun_ImportCallsImportMemory(t *testing.T) {
	env := map[string]string{"GOGC": "77"}
	getenv := func(k string) string { return env[k] }
	db := filepath.Join(t.TempDir(), "t.db")
	var calls []string
	io := func(in string) *IOStreams {
		return &IOStreams{In: strings.NewReader(in), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
			ImportMemory: func(getenv func(string) string) { calls = append(calls, getenv("GOGC")) }}
	}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "init"}, io(""), getenv))
	require.Empty(t, calls)
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "import"}, io(`{"role":"user","content":"hi"}`+"\n"), getenv))
	assert.Equal(t, []string{"77"}, calls)
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "import", "--format", "openai"},
		io(`{"messages":[{"role":"user","content":"hello"}]}`+"\n"), getenv))
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "log"}, io(""), getenv))
	assert.Len(t, calls, 1)
}

// importMemory sets the memory limit and leaves the collector's percent,
// unless the environment sets GOGC or GOMEMLIMIT.
func TestImportMemory(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	for _, tc := range []struct {
		env       map[string]string
		wantLimit int64
	}{
		{nil, importMemoryLimit},
		{map[string]string{"GOGC": "200"}, limit},
		{map[string]string{"GOMEMLIMIT": "2GiB"}, limit},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(limit)
		importMemory(func(k string) string { return tc.env[k] })
		assert.Equal(t, 100, debug.SetGCPercent(100), "%v", tc.env)
		assert.Equal(t, tc.wantLimit, debug.SetMemoryLimit(-1), "%v", tc.env)
	}
}
