package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// userMessages counts the user messages a request sent.
func userMessages(r llmtest.Request) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// A turn that fails leaves the branch ending in its message and an error
// commit: chat says so with the exit code of the failure and prints both
// fixes, each with the right command; the reset it prints takes exactly
// the failed turn off the branch.
func TestChat_FailedTurnPrintsTheWayOut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		replies []llmtest.Reply
		// otherwise answers every request after the replies.
		otherwise *llmtest.Reply
		code      int
		parts     string
		// again is the command that sends the message again: with the
		// turn's validators.
		again string
	}{
		{"exhausted validation", []string{"-V", "json", "--max-attempts", "2"},
			[]llmtest.Reply{llmtest.Answer("no"), llmtest.Answer("still no")}, nil, exitExhausted, "1 error commit after it",
			"tract chat --retry-last --validate json"},
		{"server error", nil, nil, &llmtest.Reply{Status: 500, Message: "down"}, exitModel, "1 error commit after it",
			"tract chat --retry-last"},
		{"refused request", nil, []llmtest.Reply{llmtest.ContextLengthExceeded()}, nil, exitEscalated, "1 error commit after it",
			"tract chat --retry-last"},
		{"skipped task", []string{"-V", "json", "--max-attempts", "1", "--on-exhausted", "skip"},
			[]llmtest.Reply{llmtest.Answer("no")}, nil, exitSkipped, "1 error commit and 1 note after it",
			"tract chat --retry-last --validate json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer("first answer"))
			srv.Reply(tc.replies...)
			if tc.otherwise != nil {
				srv.Otherwise(*tc.otherwise)
			}
			s := chatEnv(newSandbox(t).forTest(t), srv)
			s.initRepo()
			s.ok("chat", "first question")

			r := s.tract(append([]string{"chat"}, append(tc.args, "second question")...)...)
			requireExit(t, r, tc.code)
			assertNoCrash(t, r)
			log := s.log()
			var user string
			for _, c := range log {
				if c.Role == "user" {
					user = c.Hash[:8]
					break
				}
			}
			n := 0
			for log[n].Text != "second question" {
				n++
			}
			n++ // the message itself
			assert.Contains(t, r.Stderr, "The branch now ends in your message "+user+" with no answer ("+tc.parts+")")
			assert.Contains(t, r.Stderr, "send it again: "+tc.again+"\n")
			assert.Contains(t, r.Stderr, fmt.Sprintf("'tract log --all'): tract reset --soft HEAD~%d\n", n))
			assert.Empty(t, r.Stdout)

			s.ok("reset", "--soft", fmt.Sprintf("HEAD~%d", n))
			assert.Equal(t, []string{"first answer", "first question"}, texts(s.log()), "the printed reset takes exactly the failed turn off")
			s.fsckOK()
		})
	}
}

// --retry-last sends the unanswered message again, once, without the
// error commits, and the answer follows it; the error commits stay in
// log --all and the reflog says retry-last.
func TestChat_RetryLastSendsTheMessageOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first answer"), llmtest.Answer("no"), llmtest.Answer("still no"), llmtest.Answer(`{"ok": true}`))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "first question")
	requireExit(t, s.tract("chat", "-V", "json", "--max-attempts", "2", "second question"), exitExhausted)
	errCommit := s.log()[0]
	require.Equal(t, "error", errCommit.Kind)

	r := s.ok("chat", "--retry-last", "-V", "json")
	assert.Equal(t, "{\"ok\": true}\n", r.Stdout)
	assert.NotContains(t, r.Stderr, "warning")
	assert.Equal(t, []string{`{"ok": true}`, "second question", "first answer", "first question"}, texts(s.log()))

	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	last := reqs[3]
	assert.Equal(t, 2, userMessages(last), "the first question and the second, once")
	assert.Equal(t, "second question", last.LastMessage())

	var orphaned []string
	for _, o := range s.logAll().Orphans {
		for _, c := range o.Commits {
			orphaned = append(orphaned, c.Hash)
		}
	}
	assert.Contains(t, orphaned, errCommit.Hash, "the error commit stays inspectable")
	assert.Contains(t, s.ok("reflog").Stdout, "retry-last: dropped 1 commit after message ")
	s.fsckOK()
}

// --retry-last with a message, with --interactive or --system is a usage
// error, and with nothing to retry a clear error; none sends anything.
func TestChat_RetryLastRefusals(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	for _, args := range [][]string{
		{"chat", "--retry-last", "a message"},
		{"chat", "--retry-last", "-"},
		{"chat", "--retry-last", "--interactive"},
		{"chat", "--retry-last", "--system", "Be terse."},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "--retry-last", "%v", args)
	}
	r := s.tract("chat", "--retry-last")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "nothing to retry")
	assert.Contains(t, r.Stderr, "no commits yet")

	s.ok("chat", "hello")
	r = s.tract("chat", "--retry-last")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "nothing to retry")
	assert.Contains(t, r.Stderr, "has its answer")
	assert.Len(t, srv.Requests(), 1)
}

// A message sent after a failed turn is warned about before it is sent,
// naming both fixes, and is sent; an answered branch gives no warning.
func TestChat_WarnsBeforeSendingAfterAFailedTurn(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first answer"), llmtest.ContextLengthExceeded(), llmtest.Answer("third answer"), llmtest.Answer("fourth answer"),
		llmtest.Answer("not JSON"), llmtest.Answer("sixth answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	r := s.ok("chat", "first question")
	assert.NotContains(t, r.Stderr, "warning")
	requireExit(t, s.tract("chat", "second question"), exitEscalated)

	r = s.ok("chat", "third question")
	assert.Equal(t, "third answer\n", r.Stdout)
	assert.Contains(t, r.Stderr, "warning: the branch ends in your message ")
	assert.Contains(t, r.Stderr, "tract chat --retry-last")
	assert.Contains(t, r.Stderr, "tract reset --soft HEAD~2")
	assert.Equal(t, 3, userMessages(srv.Requests()[2]), "sent anyway, after the unanswered message")

	r = s.ok("chat", "fourth question")
	assert.NotContains(t, r.Stderr, "warning")

	// On another branch, the commands name it.
	s.ok("branch", "side")
	requireExit(t, s.tract("chat", "--branch", "side", "-V", "json", "--max-attempts", "1", "fifth question"), exitExhausted)
	r = s.tract("chat", "--branch", "side", "sixth question")
	assert.Contains(t, r.Stderr, "tract chat --branch side --retry-last")
	assert.Contains(t, r.Stderr, "tract reset --soft --branch side HEAD~2")
	assert.True(t, strings.HasPrefix(r.Stderr, "warning:"), r.Stderr)
}
