//go:build unix

package retry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustCommand(t *testing.T, command string, opts ...SpecOption) Validator {
	t.Helper()
	v, err := Command(command, opts...)
	require.NoError(t, err)
	return v
}

func TestCmdValidator(t *testing.T) {
	tests := []struct {
		name, command, answer string
		want                  string // "" means the answer passes
	}{
		{"exit 0 passes", "grep -q hello", "say hello", ""},
		{"exit status and output", "grep -q hello || { echo 'no greeting' >&2; exit 3; }", "bye", "command exited with status 3:\nno greeting"},
		{"answer on stdin", "cat; exit 1", "line one\nline two\n", "command exited with status 1:\nline one\nline two"},
		{"stdout and stderr interleaved", "echo out; echo err >&2; echo out2; exit 2", "", "command exited with status 2:\nout\nerr\nout2"},
		{"no output", "exit 1", "x", "command exited with status 1 (no output)"},
		{"ignores stdin", "true", strings.Repeat("x", 1<<20), ""},
		{
			"output is bounded",
			"head -c 5000 /dev/zero | tr '\\0' x; exit 1", "",
			"command exited with status 1:\n" + strings.Repeat("x", maxCmdOutput) + "\n[… 3000 more bytes of output not shown]",
		},
		{"killed by a signal", "kill -TERM $$", "", "command was killed: signal: terminated (no output)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCommand(t, tt.command)
			assert.Equal(t, "cmd:"+tt.command, v.Name())
			ok, diagnosis, err := v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want == "", ok)
			assert.Equal(t, tt.want, diagnosis)
		})
	}
}

// A command that hangs is killed at the timeout with every process it
// started, and the diagnosis says it timed out.
func TestCmdValidator_TimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	v := mustCommand(t, "echo started; sleep 100 & echo $! > "+pidFile+"; wait", WithCmdTimeout(300*time.Millisecond))

	start := time.Now()
	ok, diagnosis, err := v.Validate(t.Context(), "")
	elapsed := time.Since(start)

	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "command timed out after 300ms:\nstarted", diagnosis)
	assert.Less(t, elapsed, cmdWaitDelay, "the run must not wait for the orphaned sleep")

	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		return processGone(pid)
	}, 5*time.Second, 20*time.Millisecond, "the background sleep %d must be killed too", pid)
}

func TestCmdValidator_CancelledContextIsARunError(t *testing.T) {
	v := mustCommand(t, "sleep 100")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)

	start := time.Now()
	ok, diagnosis, err := v.Validate(ctx, "")

	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, ok)
	assert.Empty(t, diagnosis)
	assert.Less(t, time.Since(start), cmdWaitDelay)
}

func TestCmdValidator_BaseDir(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\ngrep -q ok || { echo 'want ok'; exit 1; }\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.sh"), []byte(script), 0o755))

	v, err := ParseSpec("cmd:./check.sh", WithBaseDir(dir))
	require.NoError(t, err)
	ok, _, err := v.Validate(t.Context(), "ok")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, diagnosis, err := v.Validate(t.Context(), "nope")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "command exited with status 1:\nwant ok", diagnosis)

	_, err = ParseSpec("cmd:./check.sh")
	assert.ErrorAs(t, err, new(*SpecError), "without the base dir ./check.sh does not exist")
}

func TestCmdValidator_ConfigurationErrors(t *testing.T) {
	for _, command := range []string{
		"no-such-command-tract-test --flag",
		"FOO=1 no-such-command-tract-test",
		"./no-such-script.sh",
		"/no/such/binary",
	} {
		t.Run(command, func(t *testing.T) {
			_, err := Command(command)
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "cmd:"+command, se.Spec)
			assert.Equal(t, "command not found", se.Reason)
		})
	}

	_, err := ParseSpec("cmd:")
	require.ErrorAs(t, err, new(*SpecError))
	assert.Contains(t, err.Error(), "cmd needs a command")

	_, err = Command("true", WithCmdTimeout(0))
	require.ErrorAs(t, err, new(*SpecError))
	assert.Contains(t, err.Error(), "must be positive")
}

// Shell words and constructs the check cannot resolve are left to the shell.
func TestCmdValidator_ShellWordsAreNotLookedUp(t *testing.T) {
	for _, command := range []string{
		"exit 0", "FOO=1 true", "if true; then exit 0; fi", "[ -n x ]", "{ true; }",
		"$SHELL -c true", "'quoted' arg", "(true)",
	} {
		_, err := Command(command)
		assert.NoError(t, err, command)
	}
}

// processGone reports whether pid has exited. A killed process whose parent
// died stays a zombie until init reaps it, which may take a while in a
// container; on Linux a zombie counts as gone.
func processGone(pid int) bool {
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			return stat[i+2] == 'Z' || stat[i+2] == 'X'
		}
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
