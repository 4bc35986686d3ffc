package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// sendAgainCommand is the command a failed turn's way out prints after
// "Either send it again: ".
var sendAgainCommand = regexp.MustCompile(`send it again: (tract chat [^\n]*)\n`)

// followHint runs the tract command line a hint printed, as a user who
// pastes it into a shell would.
func followHint(s *sandbox, command string) result {
	s.t.Helper()
	script, ok := strings.CutPrefix(command, "tract ")
	require.True(s.t, ok, "not a tract command: %q", command)
	return s.startShell(shellQuoteArg(tractBin) + " " + script).wait()
}

// shellQuoteArg quotes s for sh.
func shellQuoteArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// A judge whose reply is not its verdict leaves no unjudged answer in
// the context: the branch ends in the message and an error commit, and
// the command the hint prints sends the message again, judged this time.
func TestQAChat_UnjudgedAnswerRetriedByTheHint(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("the answer"), llmtest.Answer("I think yes"),
		llmtest.Answer("a polite answer"), llmtest.Answer(`{"pass": true, "reason": "polite"}`))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	r := s.tract("chat", "--validate", "llm:is polite", "q")
	requireExit(t, r, exitModel)
	assert.Contains(t, r.Stderr, "The answer was not judged, so it was taken off the branch")
	compiled := s.ok("compile", "--json")
	assert.JSONEq(t, `[{"role": "user", "content": "q"}]`, compiled.Stdout, "no unjudged answer in the context")

	m := sendAgainCommand.FindStringSubmatch(r.Stderr)
	require.NotNil(t, m, r.String())
	assert.Equal(t, "tract chat --retry-last --validate 'llm:is polite'", m[1])
	again := followHint(s, m[1])
	requireExit(t, again, exitOK)
	assert.Equal(t, "a polite answer\n", again.Stdout)
	assert.Contains(t, again.Stderr, "attempt 1/3: passed")
	assert.Equal(t, []string{"a polite answer", "q"}, texts(s.log()))
	s.fsckOK()
}

// Empty answers exhaust a turn without a validator; the hint's flags
// work with the command that sends the message again: --fix gives the
// model guidance (it needs no --validate), and --on-exhausted retry
// another round.
func TestQAChat_EmptyAnswersHintWorks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"fix", []string{"--fix", "Answer in one word."}},
		{"another round", []string{"--on-exhausted", "retry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer(""), llmtest.Answer(""), llmtest.Answer(""),
				llmtest.Answer(""), llmtest.Answer(""), llmtest.Answer(""), llmtest.Answer("Paris"))
			s := chatEnv(newSandbox(t).forTest(t), srv)
			s.initRepo()

			r := s.tract("chat", "capital of France?")
			requireExit(t, r, exitExhausted)
			assert.Contains(t, r.Stderr, "the answer is empty")
			for _, flag := range []string{"--on-exhausted retry", "--fix TEXT"} {
				assert.Contains(t, r.Stderr, flag)
			}
			m := sendAgainCommand.FindStringSubmatch(r.Stderr)
			require.NotNil(t, m, r.String())
			require.Equal(t, "tract chat --retry-last", m[1])

			again := followHint(s, m[1]+" "+strings.Join(quoteAll(tc.flags), " "))
			requireExit(t, again, exitOK)
			assert.Equal(t, "Paris\n", again.Stdout)
			assert.Equal(t, []string{"Paris", "capital of France?"}, texts(s.log()))
		})
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuoteArg(a)
	}
	return out
}
