package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// slowUnlessFast is a cmd: validator that passes an answer holding "fast"
// at once and sleeps far past any --cmd-timeout of these tests otherwise.
const slowUnlessFast = "cmd:grep -q fast || sleep 20"

// --cmd-timeout bounds a cmd: validator's command in chat: the slow
// check is killed after 200ms, the answer rejected with a diagnosis that
// says so, and the retry passes; nothing waits for the command's 20 s.
func TestChat_CmdTimeoutKillsASlowValidator(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("slow answer"), llmtest.Answer("fast answer"))
	s := newSandbox(t)
	s.initRepo()

	start := time.Now()
	r := chatEnv(s, srv).tract("chat", "--validate", slowUnlessFast, "--cmd-timeout", "200ms", "Check it.")
	requireExit(t, r, exitOK)
	assert.Less(t, time.Since(start), 10*time.Second, "the command was killed at the timeout")
	assert.Equal(t, "fast answer\n", r.Stdout)
	assert.Contains(t, r.Stderr, "attempt 1/3: failed: "+slowUnlessFast+": command timed out after 200ms")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[1].LastMessage(), "timed out after 200ms", "the steering says why")
}

// The REPL takes --cmd-timeout as the one-shot chat does.
func TestREPL_CmdTimeoutKillsASlowValidator(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("slow answer"), llmtest.Answer("fast answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	start := time.Now()
	r := s.okStdin("Check it.\n", "chat", "--interactive", "--validate", slowUnlessFast, "--cmd-timeout", "200ms")
	assert.Less(t, time.Since(start), 10*time.Second, "the command was killed at the timeout")
	assert.Contains(t, r.Stdout, "fast answer")
	assert.Contains(t, r.Stderr, "command timed out after 200ms")
	require.Len(t, srv.Requests(), 2)
}

// compress takes --cmd-timeout for the validators of its summaries.
func TestCompress_CmdTimeoutKillsASlowValidator(t *testing.T) {
	t.Parallel()
	s, srv := compressFixture(t)
	srv.Reply(llmtest.Answer("A slow summary."), llmtest.Answer("A fast summary of the rivers."))

	start := time.Now()
	r := s.tract("compress", "--to", "HEAD~20", "--validate", slowUnlessFast, "--cmd-timeout", "200ms")
	requireExit(t, r, exitOK)
	assert.Less(t, time.Since(start), 10*time.Second, "the command was killed at the timeout")
	assert.Contains(t, r.Stderr, "after 2 attempts")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[1].LastMessage(), "timed out after 200ms", "the retried prompt says why")
}

// A --cmd-timeout that is not a positive duration is a usage error in
// tract's words, before any model call or write.
func TestCmdTimeout_BadValuesAreUsageErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)
	before := s.snapshot()
	for _, tc := range []struct{ value, want string }{
		{"abc", `--cmd-timeout "abc" is not a duration: give one such as 10s, 2m or 1m30s`},
		{"90", "--cmd-timeout 90 has no unit: give 90s for seconds, or a duration such as 2m or 1m30s"},
		{"0", "--cmd-timeout 0: a validator's command needs some time to run: give a positive duration such as 10s or 2m"},
		{"-5s", "--cmd-timeout -5s: a validator's command needs some time to run"},
	} {
		for _, command := range [][]string{{"chat", "hello"}, {"compress"}} {
			args := append([]string{command[0], "--validate", "json", "--cmd-timeout", tc.value}, command[1:]...)
			r := c.tract(args...)
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, "tract: "+tc.want, r.String())
			for _, internal := range []string{"time:", "invalid argument", "ParseDuration"} {
				assert.NotContains(t, r.Stderr, internal, r.String())
			}
			assert.True(t, strings.HasSuffix(r.Stderr, "Run 'tract "+command[0]+" --help' for usage.\n"), r.String())
		}
	}
	assert.Empty(t, srv.Requests())
	s.requireUnchanged(before)
}
