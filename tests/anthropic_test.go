package tests

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// anthropicEnv points the sandbox at srv's Anthropic wire, with only
// Anthropic's variables set.
func anthropicEnv(s *sandbox, srv *llmtest.Server, model string) *sandbox {
	return s.withEnv("ANTHROPIC_BASE_URL", srv.AnthropicURL(), "ANTHROPIC_API_KEY", "sk-ant-test-key-42", "TRACT_MODEL", model)
}

func TestChat_ProviderAnthropicEndToEnd(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithAPIKey("sk-ant-test-key-42"))
	srv.Reply(llmtest.Answer("Paris."))
	s := anthropicEnv(newSandbox(t), srv, "some-model")
	s.initRepo()

	r := s.ok("chat", "--provider", "anthropic", "--max-tokens", "256", "--system", "Be brief.", "--json", "Capital of France?")
	rec := decodeJSON[chatRecord](t, r)
	assert.Equal(t, "Paris.", rec.Answer)
	assert.Positive(t, rec.Usage.PromptTokens)

	req := srv.Requests()[0]
	assert.Equal(t, llmtest.WireAnthropic, req.Wire)
	assert.Equal(t, "/v1/messages", req.Path)
	assert.Equal(t, 256, req.MaxTokens)
	assert.Equal(t, "Be brief.", req.System, "the system commit is the top-level system field")
	assert.Equal(t, "some-model", req.Model)
	assert.Equal(t, "Capital of France?", req.LastMessage())
	assert.Equal(t, []string{"Paris.", "Capital of France?", "Be brief."}, texts(s.log()))
	s.fsckOK()
}

// A claude-* model, or TRACT_PROVIDER, picks the Anthropic client without
// --provider; --provider openai overrides both.
func TestChat_ProviderChosenByModelAndEnvironment(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("ok"))
	s := anthropicEnv(newSandbox(t), srv, "claude-sonnet-4-5").withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-o")
	s.initRepo()

	s.ok("chat", "one")
	s.withEnv("TRACT_MODEL", "gpt-x", "TRACT_PROVIDER", "anthropic").ok("chat", "two")
	s.ok("chat", "--provider", "openai", "three")

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, llmtest.WireAnthropic, reqs[0].Wire)
	assert.Equal(t, llmtest.WireAnthropic, reqs[1].Wire)
	assert.Equal(t, llmtest.WireOpenAI, reqs[2].Wire)
	assert.Zero(t, reqs[2].MaxTokens, "the OpenAI client sends max_tokens only when asked")
}

func TestChat_AnthropicOverloadedThenSuccess(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Overloaded(), llmtest.Answer("made it"))
	s := anthropicEnv(newSandbox(t), srv, "claude-test")
	s.initRepo()

	r := s.ok("chat", "hello")
	assert.Equal(t, "made it\n", r.Stdout)
	assert.Contains(t, r.Stderr, "529")
	assert.Contains(t, r.Stderr, "retrying")
	assert.Len(t, srv.Requests(), 2)
}

func TestChat_AnthropicUnauthorizedKeyRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-wrong-secret-77"
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Unauthorized(), llmtest.Answer("not json"), llmtest.Unauthorized())
	s := anthropicEnv(newSandbox(t), srv, "claude-test").withEnv("ANTHROPIC_API_KEY", key)
	s.initRepo()

	// Refused on the first call: nothing written, and the hint names
	// Anthropic's variables.
	r := s.tract("chat", "hello")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "401")
	assert.Regexp(t, `The server at ANTHROPIC_BASE_URL=http://127\.0\.0\.1:\d+ refused the key in ANTHROPIC_API_KEY`, r.Stderr)
	assert.Contains(t, r.Stderr, "Nothing was written")
	assert.NotContains(t, r.Stderr+r.Stdout, key)
	assert.Empty(t, s.logAll().Commits)

	// Refused after the model was reached: the error commit.
	r = s.tract("chat", "--validate", "json", "hello")
	requireExit(t, r, exitEscalated)
	assert.NotContains(t, r.Stderr+r.Stdout, key)
	assert.NotContains(t, string(s.storedBytes()), "wrong-secret-77")
	assert.Len(t, srv.Requests(), 3)
	head := decodeJSON[commitInfo](t, s.ok("show", "--json", "HEAD"))
	assert.Equal(t, "error", head.Kind)
	assert.Contains(t, string(head.Meta), `"provider": "anthropic"`, "the error commit names the provider asked")
}

// The interactive chat builds its client the same way.
func TestREPL_ProviderAnthropic(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-repl-secret-55"
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first answer"), llmtest.Unauthorized())
	s := anthropicEnv(newSandbox(t), srv, "claude-test").withEnv("ANTHROPIC_API_KEY", key)
	s.initRepo()

	r := s.okStdin("hello\nagain\n", "chat", "--interactive", "--system", "Be brief.")
	assert.Contains(t, r.Stdout, "first answer")
	assert.Contains(t, r.Stderr, "401")
	assert.NotContains(t, r.Stdout+r.Stderr, key)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, llmtest.WireAnthropic, reqs[0].Wire)
	assert.Equal(t, "Be brief.", reqs[0].System)
	assert.Equal(t, []string{"user", "assistant", "user"}, roles(reqs[1].Messages))
}

func roles(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

func TestChat_ModelFlagErrorsAreUsageErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	for _, args := range [][]string{
		{"chat", "--provider", "gemini", "hi"},
		{"chat", "--structured", "always", "hi"},
		{"chat", "--max-tokens", "-3", "hi"},
		{"models", "--provider", "gemini"},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assert.NotContains(t, r.Stderr, "panic")
	}
	r := s.withEnv("TRACT_PROVIDER", "bard").tract("chat", "hi")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `unknown provider "bard" (from TRACT_PROVIDER)`)
	assert.Empty(t, srv.Requests())
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`

// writeSchema writes the person schema into the sandbox as name.
func writeSchema(t *testing.T, s *sandbox, name string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, name), []byte(personSchema), 0o644))
}

func TestChat_StructuredSchemaSent(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer(`{"name":"Ada"}`))
			s := anthropicEnv(chatEnv(newSandbox(t), srv), srv, testModel)
			s.initRepo()
			writeSchema(t, s, "person.json")

			r := s.ok("chat", "--provider", provider, "--validate", "schema:person.json", "Who?")
			var got map[string]string
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got), r.String())
			assert.Equal(t, "Ada", got["name"])

			req := srv.Requests()[0]
			assert.Equal(t, "person", req.SchemaName)
			assert.JSONEq(t, personSchema, string(req.Schema))
			head := decodeJSON[commitInfo](t, s.ok("show", "--json", "HEAD"))
			var meta struct {
				Structured json.RawMessage `json:"structured_output"`
			}
			require.NoError(t, json.Unmarshal(head.Meta, &meta))
			assert.JSONEq(t, `{"outcome":"sent","schema":"person"}`, string(meta.Structured))
		})
	}
}

// A server that refuses response_format is asked again without it, and the
// attempt records the refusal.
func TestChat_StructuredRefusedRetriedWithoutAndRecorded(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Error(http.StatusBadRequest, "response_format json_schema is not supported by this server"), llmtest.Answer(`{"name":"Ada"}`))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	writeSchema(t, s, "person.json")

	r := s.ok("chat", "--validate", "schema:person.json", "Who?")
	assert.Contains(t, r.Stdout, "Ada")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.NotEmpty(t, reqs[0].SchemaName)
	assert.Empty(t, reqs[1].SchemaName)
	head := decodeJSON[commitInfo](t, s.ok("show", "--json", "HEAD"))
	var meta struct {
		Structured struct {
			Outcome, Rejection string
		} `json:"structured_output"`
	}
	require.NoError(t, json.Unmarshal(head.Meta, &meta))
	assert.Equal(t, "rejected", meta.Structured.Outcome)
	assert.Contains(t, meta.Structured.Rejection, "response_format")
}

func TestChat_StructuredNotSent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
	}{
		{"--structured off", []string{"--structured", "off", "--validate", "schema:person.json"}},
		{"two schemas", []string{"--validate", "schema:person.json", "--validate", "schema:other.json"}},
		{"no schema validator", []string{"--validate", "json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer(`{"name":"Ada"}`))
			s := chatEnv(newSandbox(t), srv)
			s.initRepo()
			writeSchema(t, s, "person.json")
			writeSchema(t, s, "other.json")

			s.ok(append(append([]string{"chat"}, tc.args...), "Who?")...)
			assert.Empty(t, srv.Requests()[0].SchemaName)
			assert.NotContains(t, string(srv.Requests()[0].Body), "response_format")
			head := decodeJSON[commitInfo](t, s.ok("show", "--json", "HEAD"))
			assert.NotContains(t, string(head.Meta), "structured_output")
		})
	}
}

func TestCompress_StructuredAndMaxTokens(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer(`{"name":"a short summary"}`))
	s := anthropicEnv(newSandbox(t), srv, "claude-test")
	s.initRepo()
	for i := range 4 {
		role := map[bool]string{true: "user", false: "assistant"}[i%2 == 0]
		s.commit(role, strings.Repeat("a long sentence about rivers and lakes ", 10))
	}
	writeSchema(t, s, "person.json")

	s.ok("compress", "--max-tokens", "300", "--validate", "schema:person.json")
	req := srv.Requests()[0]
	assert.Equal(t, llmtest.WireAnthropic, req.Wire)
	assert.Equal(t, 300, req.MaxTokens)
	assert.Equal(t, "person", req.SchemaName)
}

func TestModels(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithAPIKey("sk-ant-test-key-42")).Models("claude-b", "claude-a")
	s := anthropicEnv(newSandbox(t), srv, "").withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-ant-test-key-42")

	r := s.ok("models")
	assert.Equal(t, "claude-b\nclaude-a\n", r.Stdout, "openai by default; no repository needed")

	r = s.ok("models", "--provider", "anthropic", "--json")
	var recs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &recs), r.String())
	require.Len(t, recs, 2)
	assert.Equal(t, "claude-b", recs[0]["id"])
	assert.Equal(t, "model", recs[0]["type"], "the server's full record")

	r = s.withEnv("ANTHROPIC_API_KEY", "sk-ant-bad-key-999").tract("models", "--provider", "anthropic")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "401")
	assert.NotContains(t, r.Stderr, "sk-ant-bad-key-999")

	r = s.withEnv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1").tract("models")
	requireExit(t, r, exitModel)
}

// The provider setting comes after --provider and TRACT_PROVIDER; a bad
// one is a usage error that names the setting.
func TestChat_ProviderFromTheSettings(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("ok"))
	s := anthropicEnv(newSandbox(t), srv, "gpt-x").withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-o")
	s.initRepo()

	s.ok("config", "set", "provider", "anthropic")
	s.ok("chat", "one")
	s.withEnv("TRACT_PROVIDER", "openai").ok("chat", "two")
	s.ok("chat", "--provider", "openai", "three")
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{llmtest.WireAnthropic, llmtest.WireOpenAI, llmtest.WireOpenAI}, []string{reqs[0].Wire, reqs[1].Wire, reqs[2].Wire})

	r := s.tract("config", "set", "provider", "bard")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `provider cannot be "bard": want openai or anthropic`)
	s.ok("config", "get", "provider") // still anthropic

	// A file written by hand (or by another version) is checked when used.
	settings := filepath.Join(s.dir, ".config", "tract", "config.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"provider":"bard"}`), 0o600))
	r = s.tract("chat", "four")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `the provider setting is "bard": want openai or anthropic`)
}

// In the REPL, /model changes the provider with the model when neither
// --provider nor a setting fixes it: a claude-* model goes to Anthropic.
func TestREPL_ModelChangesTheProvider(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("ok"))
	s := anthropicEnv(newSandbox(t), srv, "gpt-x").withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-o")
	s.initRepo()

	s.okStdin("one\n/model claude-sonnet-4-5\ntwo\n/model gpt-x\nthree\n", "chat", "--interactive")
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{llmtest.WireOpenAI, llmtest.WireAnthropic, llmtest.WireOpenAI}, []string{reqs[0].Wire, reqs[1].Wire, reqs[2].Wire})
	assert.Equal(t, "claude-sonnet-4-5", reqs[1].Model)

	s.okStdin("/model claude-sonnet-4-5\nfour\n", "chat", "--interactive", "--provider", "openai")
	reqs = srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, llmtest.WireOpenAI, reqs[3].Wire, "--provider fixes the provider")
}
