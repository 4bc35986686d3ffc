package tests

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// --feedback xml --retry-context fresh --analyze: the retry gets the
// retry context (with the analyzer's fix and learning) before the
// question and never the failed answer; show prints the analysis.
func TestChat_FeedbackXMLFreshAnalyze(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.When("An answer to a task failed a check", llmtest.Answer(`{"root_cause_guess": "the keys are not quoted", "suggested_fix": "quote every key"}`))
	srv.Reply(llmtest.Answer("{name: Ada}"), llmtest.Answer(`{"name": "Ada"}`))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	r := c.tract("chat", "--task", "t1", "--validate", "json", "--feedback", "xml", "--retry-context", "fresh", "--analyze", "Name someone.")
	requireExit(t, r, exitOK)
	assert.Equal(t, "{\"name\": \"Ada\"}\n", r.Stdout)

	reqs := srv.Requests()
	require.Len(t, reqs, 3, "attempt 1, its analysis, attempt 2")
	retry := reqs[2].Messages
	require.Len(t, retry, 2)
	assert.True(t, strings.HasPrefix(retry[0].Content, `<retry_context attempt="2" max_attempts="3">`), retry[0].Content)
	assert.Contains(t, retry[0].Content, "<suggested_fix>quote every key</suggested_fix>")
	assert.Contains(t, retry[0].Content, "    - the keys are not quoted\n")
	assert.Equal(t, "Name someone.", retry[1].Content)
	assert.NoError(t, xml.Unmarshal([]byte(retry[0].Content), new(struct{})), "well-formed XML:\n%s", retry[0].Content)
	analysis := reqs[1].LastMessage()
	const diagnosis = "invalid JSON at line 1, column 2: invalid character 'n' looking for beginning of object key string"
	assert.Equal(t, 1, strings.Count(analysis, diagnosis), "the analysis prompt holds the diagnosis once:\n%s", analysis)

	log := s.log()
	require.Len(t, log, 2, "user, clean answer")
	h := s.logAll()
	require.Len(t, h.Orphans, 2, "attempt 1 (left by the retry); retry context, copied question, attempt 2 (left by purify)")
	var actions []string
	var failed commitInfo
	for _, o := range h.Orphans {
		actions = append(actions, o.Action)
		for _, c := range o.Commits {
			if c.Text == "{name: Ada}" {
				failed = c
			}
		}
	}
	assert.ElementsMatch(t, []string{"retry", "purify"}, actions)
	require.NotEmpty(t, failed.Hash)
	show := s.ok("show", failed.Hash).Stdout
	assert.Contains(t, show, "  root cause:     the keys are not quoted (a guess)\n")
	assert.Contains(t, show, "  suggested fix:  quote every key\n")
	s.fsckOK()
}

// After an xml retry context, an answer "BLOCKED: reason" stops the turn
// as a failure retrying cannot fix: exit 7.
func TestChat_ModelDeclaresBlockedExits7(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("no json"), llmtest.Answer("BLOCKED: a name needs a person"))
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tract("chat", "--validate", "json", "--feedback", "xml", "--max-attempts", "5", "Name someone.")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "attempt 2 is blocked, which retrying cannot fix: blocked: a name needs a person")
	assert.Len(t, srv.Requests(), 2)
}

func TestChat_BadFeedbackFlagsWriteNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--feedback", "yaml"}, `--feedback: unknown feedback format "yaml": use plain or xml`},
		{[]string{"--retry-context", "stale"}, `--retry-context: unknown retry context strategy "stale": use conversation or fresh`},
	}
	for _, tt := range tests {
		r := c.tract(append(append([]string{"chat"}, tt.args...), "hello")...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, tt.want)
	}
	assert.Empty(t, s.log())
	assert.Empty(t, srv.Requests())
}
