package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/loopback"
	"github.com/tractdag/tract/llm/llmtest"
)

// A first model call that shows the setup to be wrong (no server at the
// base URL, a refused key, no endpoint, an HTML page, an unknown model)
// writes nothing: the branch and log --all are as before, the error says
// what to fix, and the next chat after the fix gives no warning about an
// unanswered message. The exit code is the failure's, as before.
func TestChat_SetupMistakeWritesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply *llmtest.Reply // nil: no server at all
		code  int
		hint  string
	}{
		{"connection refused", nil, exitModel, "Is the server running? No server answered at OPENAI_BASE_URL=http://127.0.0.1:"},
		{"401", &llmtest.Reply{Status: 401, Message: "Incorrect API key provided"}, exitEscalated,
			"refused the key in OPENAI_API_KEY: set one it accepts."},
		{"404 for the endpoint", &llmtest.Reply{Status: 404, Body: "404 page not found", ContentType: "text/plain"}, exitModel,
			"has no chat endpoint there: a base URL usually ends in /v1"},
		{"HTML page", func() *llmtest.Reply { r := llmtest.HTML(); return &r }(), exitModel,
			"answered with a web page, not the API: a base URL usually ends in /v1"},
		{"unknown model", &llmtest.Reply{Status: 404, Body: `{"error": "model \"test-model\" not found, try pulling it first"}`}, exitModel,
			`The server does not know the model "test-model": 'tract models' lists those it has`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer("first answer"))
			good := chatEnv(newSandbox(t).forTest(t), srv)
			good.initRepo()
			good.ok("chat", "first question")
			before := good.snapshot()

			bad := good
			if tc.reply == nil {
				addr, release, err := loopback.Refused()
				require.NoError(t, err)
				defer release()
				bad = good.withEnv("OPENAI_BASE_URL", "http://"+addr+"/v1")
			} else {
				srv.Reply(*tc.reply)
			}
			start := time.Now()
			r := bad.tract("chat", "second question")
			requireExit(t, r, tc.code)
			assert.Less(t, time.Since(start), 5*time.Second, "a refused connection is retried once, not for seconds")
			assert.Empty(t, r.Stdout)
			assert.Contains(t, r.Stderr, tc.hint)
			assert.Contains(t, r.Stderr, "Nothing was written: your message is not on the branch.")
			assert.NotContains(t, r.Stderr, "The branch now ends in your message")
			assert.NotContains(t, r.Stderr, "--retry-last")
			good.requireUnchanged(before)

			srv.Reply(llmtest.Answer("second answer"))
			r = good.ok("chat", "second question")
			assert.NotContains(t, r.Stderr, "warning")
			assert.Equal(t, []string{"second answer", "second question", "first answer", "first question"}, texts(good.log()))
		})
	}
}

// A refused connection is retried once: two attempts, one retry line.
func TestChat_RefusedConnectionRetriedOnce(t *testing.T) {
	t.Parallel()
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	defer release()
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", "http://"+addr+"/v1", "TRACT_MODEL", testModel)
	s.initRepo()
	r := s.tract("chat", "hello")
	requireExit(t, r, exitModel)
	assert.Equal(t, 1, countLines(r.Stderr, "; retrying in "), r.String())
	assert.Contains(t, r.Stderr, "after 2 attempts")
}

// --retry-last that meets a wrong setup leaves the failed turn as it was,
// and sends the message once the setup is right.
func TestChat_RetryLastWithAWrongSetupWritesNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.ContextLengthExceeded(), llmtest.Unauthorized(), llmtest.Answer("the answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	requireExit(t, s.tract("chat", "question"), exitEscalated)
	before := s.snapshot()

	r := s.tract("chat", "--retry-last")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "Nothing was written")
	s.requireUnchanged(before)

	r = s.ok("chat", "--retry-last")
	assert.Equal(t, "the answer\n", r.Stdout)
	assert.Equal(t, []string{"the answer", "question"}, texts(s.log()))
}

// countLines counts the lines of s that contain sub.
func countLines(s, sub string) int {
	n := 0
	for _, l := range lines(s) {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// --new with a wrong setup leaves HEAD where it was: the new branch is
// made, and HEAD moved to it, only with the message.
func TestChat_NewConversationWithAWrongSetupLeavesHEAD(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first answer"), llmtest.Unauthorized(), llmtest.Answer("fresh answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "first question")
	before := s.snapshot()

	r := s.tract("chat", "-n", "fresh start")
	requireExit(t, r, exitEscalated)
	assert.NotContains(t, r.Stderr, "New conversation on branch")
	s.requireUnchanged(before)

	r = s.ok("chat", "-n", "fresh start")
	assert.Regexp(t, `New conversation on branch chat-\d{8}-\d{6}`, r.Stderr)
	assert.Equal(t, []string{"fresh answer", "fresh start"}, texts(s.log()))
}
