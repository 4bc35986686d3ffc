//go:build unix

package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/tool"
)

func mustCommand(t *testing.T, argv []string, opts ...tool.CommandOption) tool.Tool {
	t.Helper()
	tl, err := tool.Command(llm.ToolDef{Name: "t"}, argv, opts...)
	require.NoError(t, err)
	return tl
}

func TestCommand_Runs(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		args string
		want string
	}{
		{"arguments on stdin", []string{"cat"}, `{"q":"x"}`, `{"q":"x"}`},
		{"trailing newlines trimmed", []string{"echo", "42"}, `{}`, "42"},
		{"no shell", []string{"echo", "$HOME", "|", "x"}, `{}`, "$HOME | x"},
		{"sh -c when asked", []string{"sh", "-c", "tr a-z A-Z | tr -d '{}\"'"}, `{"q":"x"}`, "Q:X"},
		{"ignores stdin", []string{"true"}, `{"big":"` + strings.Repeat("x", 1<<20) + `"}`, ""},
		{"invalid UTF-8 replaced", []string{"printf", `a\377b`}, `{}`, "a\uFFFDb"},
		{"stderr of a success ignored", []string{"sh", "-c", "echo warn >&2; echo ok"}, `{}`, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mustCommand(t, tt.argv).Run(t.Context(), json.RawMessage(tt.args))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCommand_OutputIsBounded(t *testing.T) {
	tl := mustCommand(t, []string{"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x"}, tool.MaxOutput(1000))
	got, err := tl.Run(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", 1000)+"\n[… 4000 more bytes of output not shown]", got)
}

func TestCommand_Failures(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		want     string
		exitCode int
	}{
		{"status and stderr", []string{"sh", "-c", "echo out; echo 'no such key' >&2; exit 3"}, "command sh exited with status 3: no such key", 3},
		{"stdout when stderr is empty", []string{"sh", "-c", "echo 'bad input'; exit 1"}, "command sh exited with status 1: bad input", 1},
		{"no output", []string{"false"}, "command false exited with status 1 (no output)", 1},
		{"killed", []string{"sh", "-c", "kill -TERM $$"}, "command sh was killed: signal: terminated (no output)", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustCommand(t, tt.argv).Run(t.Context(), json.RawMessage(`{}`))
			var ce *tool.CommandError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.want, err.Error())
			assert.Equal(t, tt.exitCode, ce.ExitCode)
			assert.Equal(t, tt.argv, ce.Argv)
		})
	}
}

// A hung command is killed at the timeout with the processes it started,
// without waiting for them.
func TestCommand_TimeoutKillsProcessGroup(t *testing.T) {
	tl := mustCommand(t, []string{"sh", "-c", "echo started >&2; sleep 100 & wait"}, tool.Timeout(200*time.Millisecond))
	start := time.Now()
	_, err := tl.Run(t.Context(), json.RawMessage(`{}`))
	var ce *tool.CommandError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "command sh timed out after 200ms: started", err.Error())
	assert.Less(t, time.Since(start), 2*time.Second, "the background sleep holds stderr open: it must be killed too")
}

func TestCommand_CancelledContext(t *testing.T) {
	tl := mustCommand(t, []string{"sleep", "100"})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := tl.Run(ctx, json.RawMessage(`{}`))
	require.ErrorIs(t, err, context.Canceled)
}

func TestCommand_DirAndEnv(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lookup"), []byte("#!/bin/sh\necho \"$PWD $GREETING\"\n"), 0o755))
	tl := mustCommand(t, []string{"./lookup"}, tool.Dir(dir), tool.Env([]string{"GREETING=hi"}))
	got, err := tl.Run(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Contains(t, []string{dir + " hi", real + " hi"}, got)
}

func TestCommand_Refused(t *testing.T) {
	tests := []struct {
		name string
		def  llm.ToolDef
		argv []string
		opts []tool.CommandOption
		want string
	}{
		{"bad name", llm.ToolDef{Name: "look up"}, []string{"true"}, nil, `tool name "look up": a tool's name is 1 to 64 letters, digits, "_" and "-"`},
		{"long name", llm.ToolDef{Name: strings.Repeat("a", 65)}, []string{"true"}, nil, "a tool's name is 1 to 64"},
		{"no command", llm.ToolDef{Name: "t"}, nil, nil, "tool t: no command"},
		{"not found", llm.ToolDef{Name: "t"}, []string{"no-such-command-xyz"}, nil, "tool t: command not found"},
		{"schema not an object", llm.ToolDef{Name: "t", Parameters: json.RawMessage(`[1]`)}, []string{"true"}, nil, "tool t: the parameters' schema is not a JSON object"},
		{"zero timeout", llm.ToolDef{Name: "t"}, []string{"true"}, []tool.CommandOption{tool.Timeout(0)}, "tool t: timeout 0s, must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.Command(tt.def, tt.argv, tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
