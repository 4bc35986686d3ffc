package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// The scriptable REPL: piped lines drive a turn, a failed turn recorded as
// message + error, a refused send, /retry with an attempt sent on the base
// only, and /apply, with no prompt and no colour.
func TestREPL_PipedStdin(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Paris."), llmtest.Error(404, "no such model"), llmtest.Answer("Lyon is second."))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	r := s.okStdin("capital of France?\nsecond city?\nrefused\n/retry\nthe second city, please\n/apply\n/log\n", "chat", "--interactive")
	assertNoANSI(t, r)
	assert.NotContains(t, r.Stdout, "> ", "no prompts")
	assert.Contains(t, r.Stdout, "Paris.\n")
	assert.Contains(t, r.Stderr, "error: chat: ")
	assert.Contains(t, r.Stderr, "error: the branch ends in an error")
	assert.Regexp(t, `\[attempt [0-9a-f]{8}\]\nLyon is second\.\n`, r.Stdout)
	assert.Regexp(t, `applied [0-9a-f]{8}`, r.Stdout)

	reqs := srv.Requests()
	require.Len(t, reqs, 3, "the refused line was not sent")
	var sent []string
	for _, m := range reqs[2].Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	assert.Equal(t, []string{"user: capital of France?", "assistant: Paris.", "user: the second city, please"}, sent)
	assert.Equal(t, []string{"Lyon is second.", "the second city, please", "Paris.", "capital of France?"}, texts(s.log()))
	all := s.logAll()
	var reasons []string
	for _, o := range all.Orphans {
		reasons = append(reasons, o.Reason)
	}
	assert.True(t, strings.Contains(strings.Join(reasons, "\n"), "apply: attempt "), "reasons: %q", reasons)
	s.fsckOK()
}

// --interactive takes no message.
func TestREPL_InteractiveTakesNoMessage(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	requireExit(t, s.tract("chat", "--interactive", "hello"), 2)
}
