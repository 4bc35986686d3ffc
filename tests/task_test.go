package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// failureMeta is the part of a commit's metadata the task protocol adds.
type failureMeta struct {
	Task    string `json:"task"`
	Failure *struct {
		Attempt       int    `json:"attempt"`
		Timestamp     string `json:"timestamp"`
		Type          string `json:"failure_type"`
		Error         string `json:"error"`
		Details       string `json:"details"`
		Command       string `json:"command"`
		ExitCode      *int   `json:"exit_code"`
		OutputSummary string `json:"output_summary"`
		Escalation    string `json:"escalation"`
	} `json:"failure"`
}

func metaOf(t *testing.T, c commitInfo) failureMeta {
	t.Helper()
	var m failureMeta
	require.NoError(t, json.Unmarshal(c.Meta, &m))
	return m
}

// A cmd: validator's rejection, retried under --task: every commit carries
// the task id, the failed attempt its failure record, which 'tract show'
// prints and 'tract log --all' sums up next to the orphaned attempt.
func TestChat_TaskAndFailureRecordShownByShowAndLogAll(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("draft"))
	srv.When("failed validation", llmtest.Answer("final answer"))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	check := "grep -q final || { echo 'checking answer'; echo 'FAIL: not final'; exit 1; }"
	r := c.tract("chat", "--task", "03-01:task-3", "--validate", "cmd:"+check, "Write it.")
	requireExit(t, r, exitOK)

	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	all := append(append([]commitInfo{}, h.Commits...), h.Orphans[0].Commits...)
	require.Len(t, all, 5, "user, clean answer, attempt 1, steering, attempt 2")
	for _, c := range all {
		assert.Equal(t, "03-01:task-3", metaOf(t, c).Task, "%s %s", c.Role, c.Text)
	}
	failed := h.Orphans[0].Commits[2] // newest first: attempt 2, steering, attempt 1
	require.Equal(t, "draft", failed.Text)
	m := metaOf(t, failed)
	require.NotNil(t, m.Failure)
	assert.Equal(t, 1, m.Failure.Attempt)
	assert.Equal(t, "verification_failed", m.Failure.Type)
	assert.Equal(t, check, m.Failure.Command)
	require.NotNil(t, m.Failure.ExitCode)
	assert.Equal(t, 1, *m.Failure.ExitCode)
	assert.Equal(t, "checking answer\nFAIL: not final", m.Failure.OutputSummary)
	assert.Equal(t, check+" exited with status 1: FAIL: not final", m.Failure.Error)

	show := s.ok("show", failed.Hash).Stdout
	assert.Contains(t, show, "\nTask: 03-01:task-3\n")
	assert.Contains(t, show, "\nFailure: attempt 1, verification_failed, at ")
	assert.Contains(t, show, "  error:          "+m.Failure.Error+"\n")
	assert.Contains(t, show, "  command:        "+check+"\n")
	assert.Contains(t, show, "  exit code:      1\n")
	assert.Contains(t, show, "  output (last lines):\n    checking answer\n    FAIL: not final\n")

	lines := lines(s.ok("log", "--all").Stdout)
	var attempt string
	for _, l := range lines {
		if strings.Contains(l, "assistant: draft") {
			attempt = l
		}
	}
	assert.Regexp(t, `^\| \* [0-9a-f]{8} assistant: draft  ✗ verification_failed: `+regexpQuote(check), attempt)
	s.fsckOK()
}

// A cmd: validator that exits 77 reports the answer blocked: the turn stops
// after one attempt with exit 7 and a hint, the branch ends user + error.
func TestChat_CmdExit77IsBlocked(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	r := c.tract("chat", "--task", "t1", "--validate", "cmd:echo 'no compiler'; exit 77", "Build it.")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "attempt 1/3: failed: ")
	assert.Contains(t, r.Stderr, `tract: chat: aborted task "t1" (blocked): attempt 1 is blocked, which retrying cannot fix: blocked: `)
	assert.Contains(t, r.Stderr, "retrying cannot fix the answer")
	assert.Len(t, srv.Requests(), 1)

	log := s.log()
	require.Len(t, log, 2)
	assert.Equal(t, "error", log[0].Kind)
	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	m := metaOf(t, h.Orphans[0].Commits[0])
	require.NotNil(t, m.Failure)
	assert.Equal(t, "blocked", m.Failure.Escalation)
	assert.Contains(t, s.ok("show", h.Orphans[0].Commits[0].Hash).Stdout, "  escalated:      blocked (retrying cannot fix it)\n")
}

// A 401 is one request and one error commit with its failure record; it
// exits as a failure retrying cannot fix.
func TestChat_UnauthorizedRecordsFailure(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Unauthorized())
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	r := c.tract("chat", "--task", "t1", "--validate", "json", "Hello")
	requireExit(t, r, exitEscalated)
	assert.Len(t, srv.Requests(), 1)
	log := s.log()
	require.Len(t, log, 2)
	m := metaOf(t, log[0])
	require.NotNil(t, m.Failure)
	assert.Equal(t, "execution_error", m.Failure.Type)
	assert.Equal(t, "auth", m.Failure.Escalation)
	assert.Equal(t, "t1", m.Task)
}

func TestChat_BadTaskIsAUsageErrorAndWritesNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)
	before := s.snapshot()
	for _, id := range []string{"", "two\nlines", strings.Repeat("x", 201)} {
		r := c.tract("chat", "--task", id, "Hello")
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "tract: chat: task id ")
		assert.Contains(t, r.Stderr, "Run 'tract chat --help' for usage.")
	}
	s.requireUnchanged(before)
	assert.Empty(t, srv.Requests())
}
