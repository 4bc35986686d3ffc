package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

const testModel = "test-model"

// chatEnv points the sandbox's model configuration at srv.
func chatEnv(s *sandbox, srv *llmtest.Server) *sandbox {
	return s.withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-test", "TRACT_MODEL", testModel)
}

// chatRecord is what 'tract chat --json' prints.
type chatRecord struct {
	Answer    string   `json:"answer"`
	Commit    string   `json:"commit"`
	User      string   `json:"user"`
	Attempts  int      `json:"attempts"`
	Diagnoses []string `json:"diagnoses"`
	Usage     struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Purified bool   `json:"purified"`
	Error    string `json:"error"`
}

const (
	badJSON  = `{"colors": ["red", "green"`
	goodJSON = `{"colors":["red","green","blue"]}`
)

// retryServer answers invalid JSON first, and valid JSON to any request
// whose last message is tract's steering ("…failed validation…").
func retryServer(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer(badJSON))
	srv.When("failed validation", llmtest.Answer(goodJSON))
	return srv
}

// The "done when": a failed attempt is steered, the valid answer
// is printed alone, the branch is clean and the failure stays inspectable.
func TestChat_ValidateJSONRetriesThenPurifies(t *testing.T) {
	t.Parallel()
	srv := retryServer(t)
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	r := c.tract("chat", "--validate", "json", "List three colours as JSON")
	requireExit(t, r, exitOK)
	assert.Equal(t, goodJSON+"\n", r.Stdout, "stdout carries only the accepted answer")
	var v map[string][]string
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &v))
	assert.Equal(t, []string{"red", "green", "blue"}, v["colors"])

	assert.Contains(t, r.Stderr, "attempt 1/3: failed: ")
	assert.Contains(t, r.Stderr, "attempt 2/3: passed")
	assert.Contains(t, r.Stderr, "accepted after 2 attempts")

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, testModel, reqs[0].Model)
	require.Len(t, reqs[1].Messages, 3, "user, failed answer, steering")
	assert.Equal(t, badJSON, reqs[1].Messages[1].Content)
	steering := reqs[1].LastMessage()
	assert.True(t, strings.HasPrefix(steering, "Your previous response failed validation: "), steering)
	diagnosis := strings.TrimSuffix(strings.TrimPrefix(steering, "Your previous response failed validation: "),
		"\nPlease try again, addressing the issue above.")
	require.NotEmpty(t, diagnosis)
	assert.Contains(t, r.Stderr, "attempt 1/3: failed: "+diagnosis, "stderr names the diagnosis")

	// The branch is user → assistant(clean).
	oneline := lines(s.ok("log", "--oneline").Stdout)
	require.Len(t, oneline, 2, strings.Join(oneline, "\n"))
	assert.Regexp(t, `^[0-9a-f]{8} \(HEAD -> main\) assistant: `+regexpQuote(goodJSON)+`$`, oneline[0])
	assert.Regexp(t, `^[0-9a-f]{8} user: List three colours as JSON$`, oneline[1])
	assert.Equal(t, "[user]\nList three colours as JSON\n\n[assistant]\n"+goodJSON+"\n", s.ok("compile").Stdout)

	// log --all: the attempts and the steering hang off the user message,
	// orphaned by purify; the accepted attempt was re-committed clean.
	//   * clean answer (HEAD -> main)
	//   | * accepted attempt (ORIG_HEAD)
	//   | * steering
	//   | * failed attempt  ✗ diagnosis
	//   |/  orphaned by purify: …
	//   * user
	all := lines(s.ok("log", "--all").Stdout)
	require.Len(t, all, 6, strings.Join(all, "\n"))
	assert.Regexp(t, `^\* [0-9a-f]{8} \(HEAD -> main\) assistant: `+regexpQuote(goodJSON)+`$`, all[0])
	assert.Regexp(t, `^\| \* [0-9a-f]{8} \(ORIG_HEAD\) assistant: `+regexpQuote(goodJSON)+`$`, all[1])
	assert.Regexp(t, `^\| \* [0-9a-f]{8} steering: Your previous response failed validation: `, all[2])
	assert.Regexp(t, `^\| \* [0-9a-f]{8} assistant: `+regexpQuote(badJSON)+`  ✗ `, all[3])
	assert.Contains(t, all[3], diagnosis[:min(len(diagnosis), 40)], "the failed attempt shows its diagnosis")
	assert.Regexp(t, `^\|/  orphaned by purify`, all[4])
	assert.Regexp(t, `^\* [0-9a-f]{8} user: List three colours as JSON$`, all[5])

	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	assert.Equal(t, "purify", h.Orphans[0].Action)
	assert.Equal(t, h.Commits[1].Hash, h.Orphans[0].Fork, "the orphans fork from the user message")

	// show HEAD: provenance in words.
	show := s.ok("show", "HEAD").Stdout
	assert.Contains(t, show, "Provenance: accepted after 2 attempts\n")
	assert.Contains(t, show, "  attempt 1 failed: "+diagnosis)
	s.fsckOK()

	// The next turn's context is clean: no failed attempt, no steering.
	srv.Reply(llmtest.Answer("you're welcome"))
	requireExit(t, c.tract("chat", "thanks"), exitOK)
	reqs = srv.Requests()
	require.Len(t, reqs, 3)
	var sent []string
	for _, m := range reqs[2].Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	assert.Equal(t, []string{"user: List three colours as JSON", "assistant: " + goodJSON, "user: thanks"}, sent)
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestChat_JSONRecord(t *testing.T) {
	t.Parallel()
	srv := retryServer(t)
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tract("chat", "--json", "--validate", "json", "List three colours as JSON")
	requireExit(t, r, exitOK)
	rec := decodeJSON[chatRecord](t, r)
	assert.Equal(t, goodJSON, rec.Answer)
	assert.Equal(t, 2, rec.Attempts)
	require.Len(t, rec.Diagnoses, 1)
	assert.NotEmpty(t, rec.Diagnoses[0])
	assert.True(t, rec.Purified)
	assert.Empty(t, rec.Error)
	assert.Positive(t, rec.Usage.PromptTokens)
	assert.Positive(t, rec.Usage.CompletionTokens)
	assert.Equal(t, rec.Usage.PromptTokens+rec.Usage.CompletionTokens, rec.Usage.TotalTokens)

	cs := s.log()
	require.Len(t, cs, 2)
	assert.Equal(t, cs[0].Hash, rec.Commit, "commit is the accepted commit at HEAD")
	assert.Equal(t, cs[1].Hash, rec.User)
}

func TestChat_ValidationExhaustedEndsWithErrorCommit(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("not JSON at all"))
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tract("chat", "--validate", "json", "--max-attempts", "2", "Give me JSON")
	requireExit(t, r, exitExhausted)
	assert.Empty(t, r.Stdout, "no accepted answer, nothing on stdout")
	assert.Contains(t, r.Stderr, "attempt 1/2: failed")
	assert.Contains(t, r.Stderr, "attempt 2/2: failed")
	assert.Contains(t, r.Stderr, "all 2 attempts failed")
	assert.Len(t, srv.Requests(), 2)

	cs := s.log()
	require.Len(t, cs, 2, "the branch ends user + error")
	assert.Equal(t, "error", cs[0].Kind)
	assert.Equal(t, "message/user", cs[1].Kind+"/"+cs[1].Role)
	s.fsckOK()
}

// A server failing with 500 exhausts the client's transport retries (with
// their real backoff); the branch records user + error.
func TestChat_ServerErrorStormExitsModelError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Error(500, "the server is on fire"))
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tract("chat", "hello?")
	requireExit(t, r, exitModel)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "500")
	assert.Contains(t, r.Stderr, "the server is on fire")
	assert.Len(t, srv.Requests(), 5, "1 request + 4 transport retries")

	cs := s.log()
	require.Len(t, cs, 2, "the branch ends user + error")
	assert.Equal(t, "error", cs[0].Kind)
	assert.Equal(t, "hello?", cs[1].Text)
	s.fsckOK()
}

// A 401 is not retried, and the key, although the server echoes it, is
// neither printed nor stored.
func TestChat_UnauthorizedNotRetriedKeyNeverShownOrStored(t *testing.T) {
	t.Parallel()
	const key = "sk-test-secret-999"
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Unauthorized())
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).withEnv("OPENAI_API_KEY", key).tract("chat", "hello")
	requireExit(t, r, exitEscalated)
	assert.Len(t, srv.Requests(), 1, "401 is not retried")
	assert.NotContains(t, r.Stderr, key)
	assert.NotContains(t, r.Stdout, key)
	assert.Contains(t, r.Stderr, "401")

	data := s.storedBytes()
	assert.False(t, strings.Contains(string(data), key), "the API key is in the repository file")
	assert.False(t, strings.Contains(string(data), "secret-999"), "part of the API key is in the repository file")
	s.fsckOK()
}

func TestChat_NoModelConfiguredIsUsageError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t)
	s.initRepo()
	before := s.snapshot()

	r := chatEnv(s, srv).withEnv("TRACT_MODEL", "").tract("chat", "hello")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "TRACT_MODEL")
	assert.Empty(t, r.Stdout)
	assert.Empty(t, srv.Requests())
	s.requireUnchanged(before)
}

// A validator that cannot run is a usage error reported before the model
// is called and before anything is committed.
func TestChat_BadValidatorSpecFailsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You are terse.")
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "notaschema.json"), []byte(`{"type": 12}`), 0o644))
	before := s.snapshot()

	cases := []struct {
		name, spec, stderr string
	}{
		{"unknown validator", "bogus:x", "bogus"},
		{"bad regex", "regex:(", "regex"},
		{"maxlen not a number", "maxlen:many", "maxlen"},
		{"missing schema file", "schema:missing.json", "missing.json"},
		{"file that is not a schema", "schema:notaschema.json", "notaschema.json"},
		{"missing command", "cmd:no-such-command-e2e-xyz --check", "no-such-command-e2e-xyz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			s := s.forTest(t)
			r := chatEnv(s, srv).tract("chat", "--validate", tc.spec, "hello")
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, tc.stderr)
			assert.Empty(t, r.Stdout)
			assert.Empty(t, srv.Requests(), "no request may reach the server")
			s.requireUnchanged(before)
		})
	}
}

func TestChat_MessageFromStdinWithDash(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Paris"))
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tractStdin("What is the capital\nof France?\n", "chat", "-")
	requireExit(t, r, exitOK)
	assert.Equal(t, "Paris\n", r.Stdout)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "What is the capital\nof France?", reqs[0].LastMessage())
	assert.Equal(t, []string{"Paris", "What is the capital\nof France?"}, texts(s.log()))
}

func TestChat_SystemPromptCommittedFirst(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Bonjour."), llmtest.Answer("Au revoir."))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	requireExit(t, c.tract("chat", "--system", "Answer in French.", "Hello"), exitOK)
	requireExit(t, c.tract("chat", "--system", "Answer in French.", "Bye"), exitOK)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.NotEmpty(t, reqs[0].Messages)
	assert.Equal(t, "system", reqs[0].Messages[0].Role)
	assert.Equal(t, "Answer in French.", reqs[0].Messages[0].Content)
	cs := s.log()
	assert.Equal(t, []string{"Au revoir.", "Bye", "Bonjour.", "Hello", "Answer in French."}, texts(cs),
		"the system prompt is committed once, not again when the context has it")
	assert.Equal(t, "system", cs[len(cs)-1].Role)
}

// Output is plain text off a terminal, with or without NO_COLOR, for the
// commands that colour on a terminal.
func TestOutput_NoANSIEscapesOffTerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.When("failed validation", llmtest.Answer(goodJSON))
	for _, noColor := range []string{"1", ""} {
		s := newSandbox(t).withEnv("NO_COLOR", noColor, "TERM", "xterm-256color")
		s.initRepo()
		s.commit("system", "You are terse.")
		s.commit("user", "hi")
		s.ok("reset", "HEAD~1")
		srv.Reply(llmtest.Answer(badJSON))
		requireExit(t, chatEnv(s, srv).tract("chat", "--validate", "json", "again"), exitOK)
		// Every run is checked for escapes by the sandbox itself.
		for _, args := range [][]string{
			{"log"}, {"log", "--oneline"}, {"log", "--all"}, {"log", "--graph"}, {"show", "HEAD"},
			{"status"}, {"branch"}, {"compile"}, {"fsck"}, {"show", "nope"}, {"log", "--bogus"},
		} {
			r := s.tract(args...)
			assert.NotContains(t, r.Stdout+r.Stderr, "\x1b", "escape byte in %v", args)
		}
	}
}

// Answers that are not a chat completion are model errors (exit 4, or 7
// for a context over the window), not validation failures, and leave the branch user + error.
func TestChat_MalformedServerAnswersExitModelError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		reply  llmtest.Reply
		stderr string
		exit   int
	}{
		{"HTML page", llmtest.HTML(), "HTML", exitModel},
		{"truncated JSON", llmtest.Truncated("a perfectly fine answer that is cut"), "tract: ", exitModel},
		// Retrying cannot fix a context over the window: it escalates.
		{"context length exceeded", llmtest.ContextLengthExceeded(), "context", exitEscalated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(tc.reply)
			s := newSandbox(t)
			s.initRepo()
			r := chatEnv(s, srv).tract("chat", "--no-stream", "hello")
			requireExit(t, r, tc.exit)
			assert.Empty(t, r.Stdout)
			assert.Contains(t, r.Stderr, tc.stderr)
			assert.Len(t, srv.Requests(), 1, "not retried")
			cs := s.log()
			require.Len(t, cs, 2, "the branch ends user + error")
			assert.Equal(t, "error", cs[0].Kind)
			s.fsckOK()
		})
	}
}

// An llm: judge whose reply is not the JSON verdict ends the turn as a
// model error (exit 4) that quotes the reply and says what to do; the
// unjudged answer is taken off the branch, which ends in the message and
// an error commit (chat_hints_test.go sends it again).
func TestChat_JudgeReplyNotJSONExitsModelError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.When("You are a strict reviewer", llmtest.Answer("Looks polite to me!"))
	srv.Reply(llmtest.Answer("Hello there."))
	s := newSandbox(t)
	s.initRepo()

	r := chatEnv(s, srv).tract("chat", "--validate", "llm:the answer is polite", "Greet me.")
	requireExit(t, r, exitModel)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, `the judge model's reply is not the JSON verdict expected`)
	assert.Contains(t, r.Stderr, `"Looks polite to me!"`)
	assert.Contains(t, r.Stderr, "The answer was not judged")
	assert.Len(t, srv.Requests(), 2, "the answer, then the judge once")

	cs := s.log()
	require.Len(t, cs, 2)
	assert.Equal(t, "error", cs[0].Kind)
	all := s.logAll()
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "Hello there.", all.Orphans[0].Commits[0].Text)
	assert.Contains(t, string(all.Orphans[0].Commits[0].Meta), "validator_error")
	s.fsckOK()

	help := s.ok("help", "validators")
	assert.Contains(t, help.Stdout, "4 for a model or\ntransport error, or an llm: judge's reply that is not its JSON verdict")
}

// Ctrl-C while the model is answering exits 130 and leaves the branch at a
// consistent commit.
func TestChat_InterruptDuringAttempt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Reply(llmtest.Reply{Content: "too late", Delay: 10 * time.Second})
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You are terse.")

	chat := chatEnv(s, srv).start("chat", "--validate", "json", "slow question")
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, chat.cmd.Process.Signal(os.Interrupt))
	start := time.Now()
	r := chat.wait()
	assert.Less(t, time.Since(start), 5*time.Second, "the interrupt ends the wait for the model")
	requireExit(t, r, 130)
	assert.Empty(t, r.Stdout)

	s.fsckOK()
	cs := s.log()
	require.NotEmpty(t, cs)
	assert.NotEqual(t, "too late", cs[0].Text)
	assert.True(t, cs[0].Text == "slow question" || cs[0].Kind == "error",
		"the branch ends at the user message or an error commit, got %s %q", cs[0].Kind, cs[0].Text)
	assert.Contains(t, texts(cs), "You are terse.")
	assert.Contains(t, r.Stderr, "tract chat --retry-last", "the way out of the unanswered message")
}
