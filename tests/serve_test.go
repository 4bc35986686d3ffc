package tests

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// freeAddr returns a loopback address with a port no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// startServe runs 'tract serve' on a free port and waits until it
// accepts connections.
func startServe(t *testing.T, s *sandbox, args ...string) (*background, string) {
	t.Helper()
	addr := freeAddr(t)
	b := s.start(append([]string{"serve", "--addr", addr}, args...)...)
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "tract serve never listened on %s", addr)
	return b, addr
}

// postChat sends a chat completion through the proxy.
func postChat(t *testing.T, addr string, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

func TestServe_RecordsAConversationEndToEnd(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithAPIKey("sk-upstream-key-77"))
	srv.Reply(llmtest.Answer("Paris."), llmtest.Answer("About two million."))
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-upstream-key-77")
	s.initRepo()
	b, addr := startServe(t, s)

	resp, body := postChat(t, addr, `{"model":"gpt-x","messages":[{"role":"user","content":"Capital of France?"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "Paris.")
	branch := resp.Header.Get("X-Tract-Branch")
	require.True(t, strings.HasPrefix(branch, "serve/"), branch)
	resp, body = postChat(t, addr, `{"model":"gpt-x","messages":[{"role":"user","content":"Capital of France?"},
		{"role":"assistant","content":"Paris."},{"role":"user","content":"How many people live there?"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, branch, resp.Header.Get("X-Tract-Branch"))

	// The server stops on SIGTERM, cleanly.
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	r := b.wait()
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stderr, "tract serve: stopped")
	assert.NotContains(t, r.Stderr+r.Stdout, "sk-upstream-key-77")

	log := s.ok("log", "--all", "--oneline")
	for _, text := range []string{"Capital of France?", "Paris.", "How many people live there?", "About two million."} {
		assert.Equal(t, 1, strings.Count(log.Stdout, text), "%q once in\n%s", text, log.Stdout)
	}
	assert.Contains(t, log.Stdout, branch)
	show := s.ok("show", branch, "--json")
	var rec struct {
		Meta map[string]any `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(show.Stdout), &rec))
	assert.Equal(t, "gpt-x", rec.Meta["model"])
	assert.NotNil(t, rec.Meta["usage"])
	s.fsckOK()
}

func TestServe_TokenAndAddress(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	r := s.tract("serve", "--addr", "0.0.0.0:0")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "not a loopback address")
	assert.Contains(t, r.Stderr, "TRACT_SERVE_TOKEN")
	r = s.tract("serve", "--addr", "nonsense")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "HOST:PORT")

	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	s = s.withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-u", "TRACT_SERVE_TOKEN", "tok-123")
	b, addr := startServe(t, s)
	resp, body := postChat(t, addr, `{"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "authentication_error")
	resp, body = postChat(t, addr, `{"messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer tok-123")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, b.wait(), exitOK)
	log := s.ok("log", "--all", "--oneline").Stdout
	assert.Equal(t, 2, strings.Count(log, "\n"), "the refused call left nothing:\n%s", log)
}

// Bad requests through the binary: each is refused in its wire's error
// shape, before the upstream hears of it, and leaves the repository as it
// was (the same log --all, branches and status before and after).
func TestServe_BadInputWritesNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-u",
		"ANTHROPIC_BASE_URL", srv.AnthropicURL(), "ANTHROPIC_API_KEY", "sk-u")
	s.initRepo()
	s.commit("user", "Recorded before the server started.")
	before := s.snapshot()
	b, addr := startServe(t, s.withEnv("TRACT_MAX_MESSAGE_SIZE", "1KiB", "TRACT_SERVE_TOKEN", "tok-9"))

	const chat, messages = "/v1/chat/completions", "/v1/messages"
	ok := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		want                     string
	}{
		{"malformed body", "POST", chat, `{"messages": [`, nil, 400, "the request body is not a chat-completions request"},
		{"malformed body, anthropic", "POST", messages, `{"messages": "hi"}`, nil, 400, "not a Messages API request"},
		{"unknown role", "POST", chat, `{"messages":[{"role":"wizard","content":"x"}]}`, nil, 400, `role \"wizard\"`},
		{"unknown route", "POST", "/v1/embeddings", `{"input":"x"}`, nil, 404, "no route POST /v1/embeddings"},
		{"wrong method", "GET", chat, "", nil, 405, "takes POST, not GET"},
		{"oversized message", "POST", chat, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 8<<10) + `"}]}`, nil, 413,
			"messages[0] is 8 KiB, over the message size limit (1 KiB)"},
		// The body's bound: 4 × the message size, plus the metadata's.
		{"oversized body", "POST", messages, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 1100<<10) + `"}]}`, nil, 413,
			"the request body is larger than 1052672 bytes"},
		{"wrong token", "POST", chat, ok, []string{"Authorization", "Bearer tok-8"}, 401, "requires its token: send Authorization: Bearer"},
		{"wrong token, anthropic", "POST", messages, ok, []string{"x-api-key", "tok-8"}, 401, "requires its token: send Authorization: Bearer"},
		{"invalid validator spec", "POST", chat, ok, []string{"X-Tract-Validate", "jsno"}, 400, "jsno"},
		{"invalid validator spec, anthropic", "POST", messages, ok, []string{"X-Tract-Validate", "maxlen:lots"}, 400, "maxlen"},
		{"command in a header", "POST", chat, ok, []string{"X-Tract-Validate", "cmd:touch pwned"}, 400, "may not name a cmd: validator"},
		{"bad attempts", "POST", chat, ok, []string{"X-Tract-Validate", "json", "X-Tract-Max-Attempts", "99"}, 400, "from 1 to 20"},
		{"bad branch name", "POST", messages, ok, []string{"X-Tract-Branch", "a..b"}, 400, "X-Tract-Branch"},
	}
	for _, c := range cases {
		req, err := http.NewRequest(c.method, "http://"+addr+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok-9")
		if c.path == messages {
			req.Header.Set("anthropic-version", "2023-06-01")
		}
		for i := 0; i+1 < len(c.header); i += 2 {
			if c.header[i] == "x-api-key" {
				req.Header.Del("Authorization")
			}
			req.Header.Set(c.header[i], c.header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, c.name)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, c.status, resp.StatusCode, "%s: %s", c.name, body)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), c.name)
		assert.Contains(t, string(body), c.want, c.name)
		assert.Empty(t, resp.Header.Get("X-Tract-Commit"), c.name)
		// The wire's error shape, which the SDKs read.
		var doc struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &doc), "%s: %s", c.name, body)
		assert.NotEmpty(t, doc.Error.Type, c.name)
		assert.True(t, strings.HasPrefix(doc.Error.Message, "proxy: "), "%s: %s", c.name, body)
		if c.path == messages {
			assert.Equal(t, "error", doc.Type, "%s: Anthropic's shape: %s", c.name, body)
		}
	}
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, b.wait(), exitOK)
	assert.Empty(t, srv.Requests(), "the upstream heard of none")
	assert.NoFileExists(t, filepath.Join(s.dir, "pwned"))
	s.requireUnchanged(before)
}

func TestServe_AddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	s := newSandbox(t)
	s.initRepo()
	r := s.tract("serve", "--addr", ln.Addr().String())
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "address already in use")
}

// A validated request through the binary: the client sees the accepted
// answer alone, log --all the failed attempt; --validate gives the
// default, and a bad one stops the server from starting.
func TestServe_ValidatedRequestEndToEnd(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Here you go: {\"n\": 1"), llmtest.Answer(`{"n": 1}`), llmtest.Answer("no"), llmtest.Answer("nope"))
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-u")
	s.initRepo()
	r := s.tract("serve", "--addr", freeAddr(t), "--validate", "jsno")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "jsno")

	b, addr := startServe(t, s, "--validate", "json", "--max-attempts", "2")
	resp, body := postChat(t, addr, `{"model":"m","messages":[{"role":"user","content":"One as JSON."}]}`, "X-Tract-Task", "t-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `{\"n\": 1}`)
	assert.NotContains(t, body, "Here you go")
	assert.Equal(t, "2", resp.Header.Get("X-Tract-Attempts"))
	branch := resp.Header.Get("X-Tract-Branch")

	resp, body = postChat(t, addr, `{"model":"m","messages":[{"role":"user","content":"Again."}]}`)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, body)
	assert.Contains(t, body, "no answer passed validation in 2 attempts")
	inspect := resp.Header.Get("X-Tract-Commit")
	require.NotEmpty(t, inspect)

	resp, body = postChat(t, addr, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "X-Tract-Validate", "cmd:true")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, b.wait(), exitOK)
	assert.Contains(t, s.ok("log", "--oneline", branch).Stdout, `{"n": 1}`)
	assert.NotContains(t, s.ok("log", "--oneline", branch).Stdout, "Here you go")
	assert.Contains(t, s.ok("log", "--all", "--oneline").Stdout, "Here you go")
	assert.Contains(t, s.ok("show", inspect).Stdout, "nope")
	s.fsckOK()
}
