package tests

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// modelServer answers "ok" to anything.
func modelServer(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("ok"))
	return srv
}

// The model is --model (-m, or the old -M), else TRACT_MODEL, else the
// model setting.
func TestChat_ModelPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     string
		setting string
		want    string
	}{
		{"flag over all", []string{"-m", "flag-model"}, "env-model", "set-model", "flag-model"},
		{"long flag", []string{"--model", "flag-model"}, "env-model", "set-model", "flag-model"},
		{"old -M", []string{"-M", "flag-model"}, "env-model", "set-model", "flag-model"},
		{"environment over setting", nil, "env-model", "set-model", "env-model"},
		{"setting", nil, "", "set-model", "set-model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modelServer(t)
			s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "TRACT_MODEL", tc.env)
			s.initRepo()
			if tc.setting != "" {
				s.ok("config", "set", "model", tc.setting)
			}
			s.ok(append([]string{"chat", "hi"}, tc.args...)...)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tc.want, reqs[0].Model)
		})
	}
}

func TestChat_NoModelAnywhereSaysWhereToSetOne(t *testing.T) {
	t.Parallel()
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	s.initRepo()
	r := s.tract("chat", "hi")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract config set model NAME")
}

// The system prompt is --system (-s), else TRACT_SYSTEM, else the system
// setting.
func TestChat_SystemPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     string
		setting string
		want    string
	}{
		{"-s over all", []string{"-s", "from flag"}, "from env", "from setting", "from flag"},
		{"environment over setting", nil, "from env", "from setting", "from env"},
		{"setting", nil, "", "from setting", "from setting"},
		{"none", nil, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modelServer(t)
			s := chatEnv(newSandbox(t), srv).withEnv("TRACT_SYSTEM", tc.env)
			s.initRepo()
			if tc.setting != "" {
				s.ok("config", "set", "system", tc.setting)
			}
			s.ok(append([]string{"chat", "hi"}, tc.args...)...)
			msgs := srv.Requests()[0].Messages
			if tc.want == "" {
				require.Len(t, msgs, 1)
				assert.Equal(t, "user", msgs[0].Role)
				return
			}
			require.Len(t, msgs, 2)
			assert.Equal(t, "system", msgs[0].Role)
			assert.Equal(t, tc.want, msgs[0].Content)
		})
	}
}

// -c continues the current branch (as a chat does anyway); -n starts a
// conversation with no history on a new branch and moves HEAD to it.
func TestChat_ContinueAndNew(t *testing.T) {
	t.Parallel()
	srv := modelServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "first")
	s.ok("chat", "-c", "second")
	assert.Len(t, srv.Requests()[1].Messages, 3, "-c sends the history")

	r := s.ok("chat", "-n", "-s", "Be brief.", "third")
	m := regexp.MustCompile(`New conversation on branch (chat-\d{8}-\d{6})\b`).FindStringSubmatch(r.Stderr)
	require.NotNil(t, m, r.String())
	msgs := srv.Requests()[2].Messages
	require.Len(t, msgs, 2, "a new conversation has no history")
	assert.Equal(t, "third", msgs[1].Content)
	assert.Contains(t, s.ok("status").Stdout, m[1], "HEAD is on the new branch")
	assert.Len(t, s.log(), 3, "system, user, assistant on the new branch")
	assert.Len(t, lines(s.ok("log", "main", "--oneline").Stdout), 4, "main is untouched")

	// A second --new in the same second gets its own branch.
	r2 := s.ok("chat", "--new", "fourth")
	assert.Regexp(t, `New conversation on branch chat-\d{8}-\d{6}`, r2.Stderr)
	assert.Len(t, s.log(), 2)

	for _, args := range [][]string{
		{"chat", "-c", "-n", "x"},
		{"chat", "--new", "--branch", "main", "x"},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
	}
}

func TestConfig_SetGetListUnset(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.ok("config", "set", "model", "llama3.2")
	s.ok("config", "set", "system", "Line one.\nLine two.")
	assert.Equal(t, "llama3.2\n", s.ok("config", "get", "model").Stdout)
	assert.Equal(t, "model=llama3.2\nsystem=Line one.\\nLine two.\n", s.ok("config", "list").Stdout)
	assert.JSONEq(t, `{"model":"llama3.2","system":"Line one.\nLine two."}`, s.ok("config", "list", "--json").Stdout)
	assert.FileExists(t, s.dir+"/.config/tract/config.json", "in the user's configuration directory")

	s.ok("config", "unset", "model")
	r := s.tract("config", "get", "model")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "model is not set")
	assert.Contains(t, s.ok("config", "unset", "model").Stderr, "was not set")

	r = s.tract("config", "set", "api-key", "sk-x")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `unknown setting "api-key": the settings are model, system`)

	other := t.TempDir() + "/cfg.json"
	s.withEnv("TRACT_CONFIG", other).ok("config", "set", "model", "m2")
	assert.FileExists(t, other)
	assert.Equal(t, "system=Line one.\\nLine two.\n", s.ok("config", "list").Stdout)
}

// The interactive chat takes the same flags: -n starts its conversation
// on a new branch, -s and -m set its system prompt and model.
func TestREPL_NewConversationFlags(t *testing.T) {
	t.Parallel()
	srv := modelServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "earlier")
	r := s.okStdin("hello\n", "chat", "-i", "-n", "-s", "Be brief.", "-m", "repl-model")
	assert.Regexp(t, `New conversation on branch chat-\d{8}-\d{6}`, r.Stderr)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "repl-model", reqs[1].Model)
	require.Len(t, reqs[1].Messages, 2, "no history: the system prompt and the message")
	assert.Equal(t, "Be brief.", reqs[1].Messages[0].Content)
}

// Invalid UTF-8 typed on the command line is a usage error (exit 2)
// before any model call, wherever it is: the message, the system prompt,
// a validator's spec (whose diagnoses quote it). Nothing is written.
func TestChat_InvalidUTF8IsRefusedBeforeTheModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.commit("user", "before")
	before := s.snapshot()
	for _, args := range [][]string{
		{"chat", "caf\xe9"},
		{"chat", "--system", "caf\xe9", "hi"},
		{"chat", "--validate", "contains:caf\xe9", "hi"},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "not valid UTF-8", "%q", args)
		s.requireUnchanged(before)
	}
	r := s.tractStdin("caf\xe9", "chat")
	requireExit(t, r, exitUsage)
	s.requireUnchanged(before)
	assert.Empty(t, srv.Requests(), "no model call")

	// Nor is it stored as a setting (JSON would keep U+FFFD instead).
	r = s.tract("config", "set", "system", "caf\xe9")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: config: the value for system is not valid UTF-8\n")
	requireExit(t, s.tract("config", "get", "system"), exitError)
}
