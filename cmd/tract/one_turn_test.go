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

	"github.com/tractdag/tract/llm/llmtest"
)

// 'tract chat' without the REPL is one turn: it calls OneTurn once, with
// the environment; the commands around it do not.
func TestRun_ChatCallsOneTurn(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("hi"))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "TRACT_MODEL": "m", "GOGC": "77"}
	getenv := func(k string) string { return env[k] }
	db := filepath.Join(t.TempDir(), "t.db")
	var calls []string
	io := func() *IOStreams {
		return &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
			OneTurn: func(getenv func(string) string) { calls = append(calls, getenv("GOGC")) }}
	}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "init"}, io(), getenv))
	require.Empty(t, calls)
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "chat", "hello"}, io(), getenv))
	assert.Equal(t, []string{"77"}, calls)
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "log"}, io(), getenv))
	assert.Len(t, calls, 1)
}

// oneTurnMemory turns the collector off under the memory limit, unless
// the environment sets GOGC or GOMEMLIMIT.
func TestOneTurnMemory(t *testing.T) {
	limit := restoreGC(t)
	for _, tc := range []struct {
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{nil, -1, oneTurnMemoryLimit},
		{map[string]string{"GOGC": "200"}, 100, limit},
		{map[string]string{"GOMEMLIMIT": "2GiB"}, 100, limit},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(limit)
		oneTurnMemory(func(k string) string { return tc.env[k] })
		assert.Equal(t, tc.wantPercent, debug.SetGCPercent(100), "%v", tc.env)
		assert.Equal(t, tc.wantLimit, debug.SetMemoryLimit(-1), "%v", tc.env)
	}
}

// restoreGC has the collector's percent and the memory limit set back as
// they are when t ends, and returns the limit.
func restoreGC(t *testing.T) int64 {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	return limit
}
