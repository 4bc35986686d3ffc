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
)

func TestNewCmdServe_Flags(t *testing.T) {
	checkParse(t, newCmdServe, nil, ServeOptions{Addr: defaultServeAddr}, "")
	checkParse(t, newCmdServe, []string{"--addr", "0.0.0.0:9000", "--token", "t", "--timeout", "30s"},
		ServeOptions{Addr: "0.0.0.0:9000", Token: "t", Timeout: "30s"}, "")
	checkParse(t, newCmdServe, []string{"extra"}, ServeOptions{}, "no arguments")
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
	f, _, _ := testFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-u"})
	errOut := &lockedBuffer{}
	f.IO.ErrOut = errOut
	f.DBFlag = filepath.Join(t.TempDir(), "tract.db")
	repo, err := tract.Init(f.DBFlag)
	require.NoError(t, err)
	require.NoError(t, repo.Close())

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

	repo, err = tract.Open(f.DBFlag)
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
	f, _, _ := testFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-u"})
	errOut := &lockedBuffer{}
	f.IO.ErrOut = errOut
	f.DBFlag = filepath.Join(t.TempDir(), "tract.db")
	repo, err := tract.Init(f.DBFlag)
	require.NoError(t, err)
	require.NoError(t, repo.Close())

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

	repo, err = tract.Open(f.DBFlag)
	require.NoError(t, err)
	defer repo.Close()
	h, err := repo.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, h.Commits, 2)
	assert.Equal(t, "model call failed: cancelled: the server shut down", h.Commits[0].Text)
}
