package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

func TestNewCmdServe_Flags(t *testing.T) {
	def := func(o ServeOptions) ServeOptions {
		if o.MaxAttempts == 0 {
			o.MaxAttempts = retry.DefaultMaxAttempts
		}
		if o.CmdTimeout == 0 {
			o.CmdTimeout = retry.DefaultCmdTimeout
		}
		return o
	}
	checkParse(t, newCmdServe, nil, def(ServeOptions{Addr: defaultServeAddr}), "")
	checkParse(t, newCmdServe, []string{"--addr", "0.0.0.0:9000", "--token", "t", "--timeout", "30s"},
		def(ServeOptions{Addr: "0.0.0.0:9000", Token: "t", Timeout: "30s"}), "")
	checkParse(t, newCmdServe, []string{"-V", "json", "--validate", "maxlen:9", "--max-attempts", "5", "--cmd-timeout", "2s"},
		ServeOptions{Addr: defaultServeAddr, Validate: []string{"json", "maxlen:9"}, MaxAttempts: 5, CmdTimeout: 2 * time.Second}, "")
	checkParse(t, newCmdServe, []string{"--max-attempts", "0"}, ServeOptions{}, "--max-attempts must be at least 1")
	checkParse(t, newCmdServe, []string{"--cmd-timeout", "5"}, ServeOptions{}, "has no unit")
	checkParse(t, newCmdServe, []string{"extra"}, ServeOptions{}, "no arguments")
}

// serveFactory returns a Factory with env whose repository is a new
// file, and the buffer its standard error goes to.
func serveFactory(t *testing.T, env map[string]string) (*Factory, *lockedBuffer) {
	t.Helper()
	f, _, _ := testFactory(t, env)
	errOut := &lockedBuffer{}
	f.IO.ErrOut = errOut
	f.DBFlag = filepath.Join(t.TempDir(), "tract.db")
	repo, err := tract.Init(f.DBFlag)
	require.NoError(t, err)
	require.NoError(t, repo.Close())
	return f, errOut
}

// serveInBackground runs serveRun with opts until the test ends and
// returns the address it listens on.
func serveInBackground(t *testing.T, opts *ServeOptions) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	opts.Addr, opts.Ready = "127.0.0.1:0", func(a string) { ready <- a }
	go func() { done <- serveRun(ctx, opts) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-done)
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		require.NoError(t, err)
		t.FailNow()
	}
	return ""
}

// --validate validates the requests that name no validator.
func TestServeRun_DefaultValidation(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("prose"), llmtest.Answer(`{"ok": true}`))
	f, _ := serveFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-u"})

	addr := serveInBackground(t, &ServeOptions{Factory: f, Validate: []string{"json"}, MaxAttempts: 2})
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"JSON."}]}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `{\"ok\": true}`)
	assert.NotContains(t, string(body), "prose")
	assert.Equal(t, "2", resp.Header.Get("X-Tract-Attempts"))
	assert.Contains(t, f.IO.ErrOut.(*lockedBuffer).String(), "validating every request without X-Tract-Validate with json, in at most 2 attempts")
}

func TestServeRun_BadDefaultValidatorIsAUsageError(t *testing.T) {
	f, _ := serveFactory(t, map[string]string{"OPENAI_API_KEY": "sk-u"})
	err := serveRun(context.Background(), &ServeOptions{Factory: f, Addr: "127.0.0.1:0", Validate: []string{"jsno"}, MaxAttempts: 3})
	require.ErrorContains(t, err, "--validate")
	require.ErrorContains(t, err, "jsno")
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestServeOptions_Check(t *testing.T) {
	cases := []struct {
		addr, token, env string
		want             string // the token; "" with wantErr
		wantErr          string
	}{
		{addr: "127.0.0.1:7878"},
		{addr: "localhost:0"},
		{addr: "[::1]:7878"},
		{addr: "127.0.0.1:7878", token: "t", want: "t"},
		{addr: "0.0.0.0:7878", wantErr: "not a loopback address: give a token (--token TOKEN, or TRACT_SERVE_TOKEN)"},
		{addr: "192.168.1.2:80", env: "from-env", want: "from-env"},
		{addr: "0.0.0.0:80", token: "flag", env: "env", want: "flag"},
		{addr: "7878", wantErr: "want HOST:PORT"},
		{addr: "127.0.0.1:port", wantErr: `"port" is not a port`},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			f, _, _ := testFactory(t, map[string]string{envServeToken: c.env})
			got, err := (&ServeOptions{Factory: f, Addr: c.addr, Token: c.token}).check()
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				assert.Equal(t, exitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// A stopping server lets the call in flight finish and record itself.
func TestServeRun_StopsAfterTheCallInFlight(t *testing.T) {
	srv := llmtest.NewServer(t)
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: "late answer", Hold: hold})
	f, errOut := serveFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-u"})

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{Factory: f, Addr: "127.0.0.1:0", Ready: func(a string) { ready <- a }})
	}()
	addr := <-ready
	answered := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(b)
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	stop() // Ctrl-C, with the call in flight
	require.Eventually(t, func() bool { return strings.Contains(errOut.String(), "stopping") }, 5*time.Second, time.Millisecond)
	close(hold)
	assert.Contains(t, <-answered, "late answer")
	require.NoError(t, <-done)
	assert.Contains(t, errOut.String(), "tract serve: stopped")

	repo, err := tract.Open(f.DBFlag)
	require.NoError(t, err)
	defer repo.Close()
	h, err := repo.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, h.Commits, 2)
	assert.Equal(t, "late answer", h.Commits[0].Text)
}

// A call still in flight when the grace is over is cancelled and recorded
// as cancelled by the shutdown.
func TestServeRun_CancelsACallPastTheGrace(t *testing.T) {
	srv := llmtest.NewServer(t)
	hold := make(chan struct{})
	defer close(hold)
	srv.Reply(llmtest.Reply{Content: "never", Hold: hold})
	f, _ := serveFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-u"})

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{Factory: f, Addr: "127.0.0.1:0", Grace: 10 * time.Millisecond,
			Ready: func(a string) { ready <- a }})
	}()
	addr := <-ready
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	stop()
	require.NoError(t, <-done)
	<-answered

	repo, err := tract.Open(f.DBFlag)
	require.NoError(t, err)
	defer repo.Close()
	h, err := repo.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, h.Commits, 2)
	assert.Equal(t, "model call failed: cancelled: the server shut down", h.Commits[0].Text)
}
