package tests

import (
	"regexp"
	"strconv"
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
func TestChat_UnjudgedAnswerRetriedByTheHint(t *testing.T) {
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
func TestChat_EmptyAnswersHintWorks(t *testing.T) {
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

// flagsIn lists the long flags a text names.
var flagsIn = regexp.MustCompile(`--[a-z][a-z-]+`)

// A compress that fails says so once ("compress: " once, plurals right),
// with the exit code of its class, and its hint names only flags that
// compress has: it has no --on-exhausted or --fix, and keeps no rejected
// summary to inspect.
func TestCompress_FailuresNameWhatCompressCanDo(t *testing.T) {
	t.Parallel()
	s, _ := compressFixture(t)
	help := s.ok("compress", "--help").Stdout
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"rejected by a validator", []string{"--keep-last", "2", "--validate", "contains:GOOD", "--max-attempts", "1"}, exitExhausted,
			"(58 commits from "},
		{"summary given too long", []string{"--to", "HEAD~59", "--content", strings.Repeat("far too long ", 40)}, exitExhausted,
			"group 1 of 1 (1 commit from "},
		{"two summaries for one group", []string{"--keep-last", "2", "--content", "a", "--content", "b"}, exitUsage,
			"2 summaries given for 1 group to summarize"},
		{"empty range", []string{"--keep-last", "61"}, exitUsage, "tract: compress: empty range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := s.forTest(t)
			r := s.tract(append([]string{"compress"}, tc.args...)...)
			requireExit(t, r, tc.code)
			assert.Contains(t, r.Stderr, tc.msg)
			assert.NotContains(t, r.Stderr, "compress: compress:")
			assert.NotRegexp(t, `\b1 (commits|messages|groups)\b`, r.Stderr)
			for _, flag := range flagsIn.FindAllString(r.Stderr, -1) {
				assert.Contains(t, help, flag+" ", "the hint names %s, which compress does not have\n%s", flag, r)
			}
			assert.NotContains(t, r.Stderr, "log --all' shows the attempts", "rejected summaries are not committed")
		})
	}
}

// compress's progress line, its result line and --json count the same
// tokens: the summarized commits, with the pinned ones kept in place
// given apart (the system prompt of the fixture).
func TestCompress_TokenCountsAgree(t *testing.T) {
	t.Parallel()
	s, _ := compressFixture(t)
	r := s.ok("compress", "--keep-last", "20", "--content", "A short summary.")
	progress := regexp.MustCompile(`summary 1/1: 40 commits → (\d+) tokens \(from (\d+), estimated\)`).FindStringSubmatch(r.Stderr)
	require.NotNil(t, progress, r.String())
	result := regexp.MustCompile(`compressed 40 commits into 1 summary \((\d+) → (\d+) tokens, estimated; 1 pinned commit of (\d+) tokens kept as they were\)`).
		FindStringSubmatch(r.Stdout)
	require.NotNil(t, result, r.String())
	assert.Equal(t, progress[2], result[1], "before")
	assert.Equal(t, progress[1], result[2], "after")

	s.ok("reset", "--hard", "--force", "ORIG_HEAD")
	rec := decodeJSON[struct {
		TokensBefore int `json:"tokens_before"`
		TokensAfter  int `json:"tokens_after"`
		TokensKept   int `json:"tokens_kept"`
	}](t, s.ok("compress", "--keep-last", "20", "--content", "A short summary.", "--json"))
	assert.Equal(t, result[1], strconv.Itoa(rec.TokensBefore-rec.TokensKept))
	assert.Equal(t, result[2], strconv.Itoa(rec.TokensAfter-rec.TokensKept))
	assert.Equal(t, result[3], strconv.Itoa(rec.TokensKept))
}

// chat's errors before it sends are chat's, and come alone: a --branch
// that does not exist is not reported as log's, and a detached HEAD at
// an unanswered message gives no warning about it first.
func TestChat_BranchErrorsBeforeTheWarning(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.commit("user", "context pasted by hand")

	r := s.tract("chat", "--branch", "nosuch", "q")
	requireExit(t, r, exitNotFound)
	assert.True(t, strings.HasPrefix(r.Stderr, `tract: chat: no such branch: "nosuch"`), r.String())

	s.ok("commit", "--role", "user", "-m", "second")
	s.ok("checkout", "HEAD~1")
	r = s.tract("chat", "x")
	requireExit(t, r, exitError)
	assert.True(t, strings.HasPrefix(r.Stderr, "tract: chat: HEAD is detached"), r.String())
	assert.NotContains(t, r.Stderr, "warning")
	assert.Empty(t, srv.Requests())
}

// The warning before a message that follows an unanswered one says a
// turn failed only when one did (its error commit follows the message).
func TestChat_WarningSaysFailedOnlyAfterAFailure(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first answer"), llmtest.ContextLengthExceeded(), llmtest.Answer("second answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.commit("user", "context pasted by hand")

	r := s.ok("chat", "question")
	assert.Contains(t, r.Stderr, "warning: the branch ends in your message ")
	assert.Contains(t, r.Stderr, ", which has no answer (nothing after it);")
	assert.NotContains(t, r.Stderr, "failed")

	requireExit(t, s.tract("chat", "refused"), exitEscalated)
	r = s.ok("chat", "again")
	assert.Contains(t, r.Stderr, ", left unanswered by a failed turn (1 error commit after it);")
}

// --retry-last with nothing to retry says what the branch ends in, in
// words, and what to do instead.
func TestChat_RetryLastWithNothingPending(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "hello")

	r := s.tract("chat", "--retry-last")
	requireExit(t, r, exitError)
	log := s.log()
	assert.Contains(t, r.Stderr, "tract: retry last: nothing to retry: the branch's last message, "+log[1].Hash[:8]+
		", has its answer ("+log[0].Hash[:8]+")\n")
	assert.Contains(t, r.Stderr, "To ask something new, send a message: tract chat MESSAGE")
	assert.NotContains(t, r.Stderr, "does not end in a turn")
}

// The interactive chat with no model configured refuses to start, before
// it reads a line or records anything, with the exit code and the advice
// of a one-shot chat.
func TestChat_InteractiveWithoutAModelDoesNotStart(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	r := s.tractStdin("hi\nsecond\n", "chat", "--interactive")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "no model: set TRACT_MODEL")
	assert.Contains(t, r.Stderr, "tract config set model NAME")
	assert.Empty(t, r.Stdout)
	assert.Empty(t, s.logAll().Commits, "nothing recorded")
}

// The REPL's /status and /model name the model the requests use, and
// where it was set, when it comes from TRACT_MODEL or the settings.
func TestChat_InteractiveShowsTheModelInUse(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("hello"), llmtest.Answer("hello again"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	r := s.okStdin("/status\n/model\nhi\n", "chat", "--interactive")
	assert.Equal(t, 2, strings.Count(r.Stdout, "model: "+testModel+" (from TRACT_MODEL)\n"), r.String())
	assert.Equal(t, testModel, srv.Requests()[0].Model)

	s.ok("config", "set", "model", "set-model")
	s = s.withEnv("TRACT_MODEL", "")
	r = s.okStdin("/model\nagain\n", "chat", "--interactive")
	assert.Contains(t, r.Stdout, "model: set-model (from 'tract config set model')\n")
	assert.Equal(t, "set-model", srv.Requests()[1].Model)
}
