package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiGet sends a GET to tract serve's API; header holds name, value pairs.
func apiGet(t *testing.T, addr, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// tract serve answers /api/ with what --json prints, refuses a Host that
// is not loopback, streams a commit made by another process as a live
// event, and stops on SIGTERM with the stream open.
func TestServeAPI_EndToEnd(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.ok("commit", "--role", "user", "-m", "What is two and two?")
	s.ok("commit", "--role", "assistant", "-m", "Four.")
	s.ok("branch", "side", "HEAD~1")
	b, addr := startServe(t, s)

	for _, tc := range []struct{ path string }{{"/api/status"}, {"/api/log"}, {"/api/log?all=1"}, {"/api/branches"}, {"/api/commits/HEAD"}, {"/api/compile"}} {
		resp, body := apiGet(t, addr, tc.path)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", tc.path, body)
		u, err := url.Parse(tc.path)
		require.NoError(t, err)
		args := map[string][]string{
			"/api/status": {"status"}, "/api/log": {"log"}, "/api/branches": {"branch"},
			"/api/commits/HEAD": {"show", "HEAD"}, "/api/compile": {"compile"},
		}[u.Path]
		if u.Query().Get("all") == "1" {
			args = []string{"log", "--all"}
		}
		cli := s.ok(append(args, "--json")...)
		assert.JSONEq(t, cli.Stdout, body, "%s and tract %s --json", tc.path, strings.Join(args, " "))
	}

	resp, body := apiGet(t, addr, "/api/status", "Host", "attacker.example:7878")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, `"code":"forbidden_host"`)
	resp, body = apiGet(t, addr, "/api/commits/nosuch")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, body, `"code":"unknown_revision"`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/live", nil)
	require.NoError(t, err)
	live, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer live.Body.Close()
	require.Equal(t, "text/event-stream", live.Header.Get("Content-Type"))
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(live.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	require.Equal(t, "retry: 2000", <-lines)
	time.Sleep(400 * time.Millisecond) // the poller's first read of the refs
	commit := s.ok("commit", "--role", "user", "-m", "And three and three?", "--json")
	var made struct{ Hash string }
	require.NoError(t, json.Unmarshal([]byte(commit.Stdout), &made))
	found := false
	for deadline := time.After(10 * time.Second); !found; {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the stream ended before the commit's event")
			found = strings.HasPrefix(l, "data: ") && strings.Contains(l, `"ref":"refs/heads/main"`) && strings.Contains(l, made.Hash)
		case <-deadline:
			t.Fatal("no ref event for the commit in 10 s")
		}
	}

	// SIGTERM with the stream open: the server ends the stream and stops.
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	r := b.wait()
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stderr, "tract serve: stopped")
	for range lines {
	}
}

// With a token, every route of the API requires it: as a bearer token,
// or as the cookie the login form sets; a cross-origin POST is refused
// even with the cookie.
func TestServeAPI_Token(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.ok("commit", "--role", "user", "-m", "hello")
	s = s.withEnv("TRACT_SERVE_TOKEN", "tok-secret-42")
	b, addr := startServe(t, s)

	resp, body := apiGet(t, addr, "/api/status")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, `"code":"unauthorized"`)
	assert.NotContains(t, body, "tok-secret-42")
	resp, _ = apiGet(t, addr, "/api/status", "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, body = apiGet(t, addr, "/api/status", "Authorization", "Bearer tok-secret-42")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"branch":"main"`)
	resp, _ = apiGet(t, addr, "/api/status", "x-api-key", "tok-secret-42", "Host", "tract.example.org")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "with a token, any Host")

	resp, body = apiGet(t, addr, "/login?next=/api/status")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `name="token"`)
	form := url.Values{"token": {"tok-secret-42"}, "next": {"/api/status"}}
	login, err := noRedirect.PostForm("http://"+addr+"/login", form)
	require.NoError(t, err)
	login.Body.Close()
	require.Equal(t, http.StatusSeeOther, login.StatusCode)
	assert.Equal(t, "/api/status", login.Header.Get("Location"))
	require.Len(t, login.Cookies(), 1)
	cookie := login.Cookies()[0]
	assert.True(t, cookie.HttpOnly)
	assert.NotContains(t, cookie.Value, "tok-secret-42")
	resp, _ = apiGet(t, addr, "/api/status", "Cookie", cookie.Name+"="+cookie.Value)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/escalations/abc/answer", strings.NewReader(`{"action":"retry"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://attacker.example")
	req.AddCookie(cookie)
	post, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	post.Body.Close()
	assert.Equal(t, http.StatusForbidden, post.StatusCode)

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	r := b.wait()
	requireExit(t, r, exitOK)
	assert.NotContains(t, r.Stderr+r.Stdout, "tok-secret-42")
}

// The proxy shares the guard: a Host that is not loopback, and a
// cross-origin POST, are refused in the wire's own error shape, before
// the upstream hears of them.
func TestServe_GuardOnTheProxy(t *testing.T) {
	t.Parallel()
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", "OPENAI_API_KEY", "sk-u")
	s.initRepo()
	b, addr := startServe(t, s)
	resp, body := postChat(t, addr, `{"messages":[{"role":"user","content":"hi"}]}`, "Origin", "http://attacker.example")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, `"type":"invalid_request_error"`)
	assert.Contains(t, body, "attacker.example")
	resp, body = apiGet(t, addr, "/v1/models", "Host", "attacker.example", "anthropic-version", "2023-06-01")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, `"type":"error"`, "Anthropic's shape")
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, b.wait(), exitOK)
	assert.Empty(t, s.tract("log", "--all", "--oneline").Stdout, "nothing recorded")
}
