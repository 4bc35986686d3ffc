package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract/api"
	"github.com/tractdag/tract/internal/httpauth"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/serve"
	"github.com/tractdag/tract/web"
)

// The defaults of 'tract serve'.
const (
	defaultServeAddr = "127.0.0.1:7878"
	// envServeToken names the variable that gives the token when --token
	// does not.
	envServeToken = "TRACT_SERVE_TOKEN"
	// shutdownGrace is how long a stopping server lets calls in flight
	// finish before it cancels them.
	shutdownGrace = 30 * time.Second
)

// ServeOptions are the inputs of 'tract serve'.
type ServeOptions struct {
	Factory *Factory
	// Addr is --addr: HOST:PORT.
	Addr string
	// Token is --token ("" when not given: TRACT_SERVE_TOKEN).
	Token string
	// Timeout is --timeout ("" when not given).
	Timeout string
	// Validate is --validate: the validators of a request that names
	// none of its own (X-Tract-Validate).
	Validate []string
	// MaxAttempts is --max-attempts: the attempts of a validated request
	// that does not say (X-Tract-Max-Attempts).
	MaxAttempts int
	// CmdTimeout bounds one run of a "cmd:" validator (--cmd-timeout).
	CmdTimeout time.Duration
	// Ready, when set, is called with the address the server listens on
	// (tests, whose --addr asks for port 0).
	Ready func(addr string)
	// Grace is how long a stopping server lets the calls in flight
	// finish (0: shutdownGrace).
	Grace time.Duration
	// MCPReadOnly is --mcp-read-only: /mcp offers only the reading tools.
	MCPReadOnly bool
}

func newCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{Factory: f}
	var cmdTimeout string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Record an agent's model calls, on the model's own wire",
		Long: `Serve the repository to agents and browsers on one listener: a proxy that
records each model call as commits (a conversation resent with more
messages extends its branch, one that diverges forks), the repository as
JSON, an MCP server and a web view. A request with X-Tract-Validate: SPEC
(or every request, with --validate) is answered by a validated turn: the
accepted answer alone, or a 422 naming the diagnoses. An address other
than loopback needs a token (--token, TRACT_SERVE_TOKEN) on every route.
Ctrl-C or SIGTERM stops once the calls in flight are done.

Routes:
  /v1/   OpenAI's chat completions and Anthropic's messages, forwarded to
         OPENAI_BASE_URL / ANTHROPIC_BASE_URL ('tract help proxy')
  /api/  the shapes of --json a page at a time, live events at /api/live
         ('tract help api')
  /mcp   the tools of 'tract mcp' over HTTP ('tract help mcp-server')
  /      the web view: the history as a graph with the failed attempts
         beside the branch, diffs, statistics, escalations, live`,
		Example: `  tract serve
  OPENAI_BASE_URL=http://127.0.0.1:7878/v1 python agent.py
  ANTHROPIC_BASE_URL=http://127.0.0.1:7878 node agent.js
  TRACT_SERVE_TOKEN=secret tract serve --addr 0.0.0.0:7878
  tract serve --validate json --max-attempts 4`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.MaxAttempts < 1 {
				return usageErrorf("--max-attempts must be at least 1, got %d", opts.MaxAttempts)
			}
			var err error
			if opts.CmdTimeout, err = parseCmdTimeout(cmdTimeout); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Addr, "addr", defaultServeAddr, "listen on `HOST:PORT`")
	fl.StringVar(&opts.Token, "token", "", "require this bearer `TOKEN` (default $TRACT_SERVE_TOKEN)")
	fl.StringVar(&opts.Timeout, "timeout", "", "wait at most `DURATION` for the upstream's next byte")
	fl.StringArrayVarP(&opts.Validate, "validate", "V", nil,
		"check the answer of each request without X-Tract-Validate with `SPEC` (repeatable): "+f.validators().Usages())
	fl.IntVar(&opts.MaxAttempts, "max-attempts", retry.DefaultMaxAttempts, "make at most `N` attempts per validated request")
	addCmdTimeoutFlag(cmd, &cmdTimeout)
	fl.BoolVar(&opts.MCPReadOnly, "mcp-read-only", false, "offer only the reading tools on the MCP server at /mcp")
	return cmd
}

// check validates the address and the token, and returns the token.
func (opts *ServeOptions) check() (string, error) {
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return "", usageErrorf("--addr %q: want HOST:PORT, such as %s", opts.Addr, defaultServeAddr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", usageErrorf("--addr %q: %q is not a port", opts.Addr, port)
	}
	token := opts.Token
	if token == "" {
		token = strings.TrimSpace(opts.Factory.Getenv(envServeToken))
	}
	if token == "" && !isLoopback(host) {
		return "", usageErrorf("--addr %s is not a loopback address: give a token (--token TOKEN, or %s) that every request must carry",
			opts.Addr, envServeToken)
	}
	return token, nil
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	f := opts.Factory
	token, err := opts.check()
	if err != nil {
		return err
	}
	timeout, err := f.timeout(opts.Timeout)
	if err != nil {
		return err
	}
	// The calls in flight record themselves after Ctrl-C: the
	// repository's waits are bounded by their own timeouts, not by ctx.
	f.Context = context.WithoutCancel(ctx)
	repo, err := f.Open()
	if err != nil {
		return err
	}
	defer repo.Close()
	// A busy server keeps the file open between its calls instead of
	// opening it again for each; a command run meanwhile still gets it
	// within about a millisecond.
	defer repo.Linger()()
	openAIKey, anthropicKey := strings.TrimSpace(f.Getenv(llm.EnvAPIKey)), strings.TrimSpace(f.Getenv(llm.EnvAnthropicAPIKey))
	errOut := &syncWriter{w: f.IO.ErrOut} // the calls report from their goroutines
	wd, err := f.Getwd()
	if err != nil {
		return err
	}
	specOpts := []retry.SpecOption{retry.WithBaseDir(wd)}
	if opts.CmdTimeout > 0 {
		specOpts = append(specOpts, retry.WithCmdTimeout(opts.CmdTimeout))
	}
	h, err := serve.New(ctx, repo,
		serve.WithValidators(f.validators(), specOpts...),
		serve.WithDefaultValidation(opts.Validate, opts.MaxAttempts),
		serve.WithOpenAI(f.Getenv(llm.EnvBaseURL), openAIKey),
		serve.WithAnthropic(f.Getenv(llm.EnvAnthropicBaseURL), anthropicKey),
		serve.WithToken(token), serve.WithTimeout(timeout),
		serve.WithOnRecordError(func(err error) {
			fmt.Fprintf(errOut, "tract serve: %s\n", redactKeys(f, err.Error()))
		}))
	var baseErr *serve.BaseURLError
	var specErr *retry.SpecError
	if errors.As(err, &specErr) {
		return &usageError{fmt.Errorf("--validate: %w", specErr)}
	}
	if errors.As(err, &baseErr) {
		return &envError{err: err, Name: baseErr.Env, Example: "http://localhost:11434/v1"}
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	base, stopCalls := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopCalls(nil)
	// One listener, one route prefix per room: the proxy at /v1/, the
	// JSON API at /api/. The guard checks every route: the token when
	// there is one, else the Host (DNS rebinding); and state-changing
	// requests' origin (CSRF).
	guard := httpauth.New(token, httpauth.WithLoginHint("--token or "+envServeToken+" of tract serve"))
	mux := http.NewServeMux()
	mux.Handle("/v1/", guard.Wrap(h, httpauth.HeadersOnly(), httpauth.WithErrorWriter(func(w http.ResponseWriter, r *http.Request, e *httpauth.Error) {
		serve.WriteError(w, r, e.Status, "proxy: "+e.Message)
	})))
	apiServer := api.New(repo)
	defer apiServer.Close()
	mux.Handle("/api/", guard.Wrap(apiServer, httpauth.RequireJSON()))
	mux.Handle(httpauth.LoginPath, guard.Login())
	mux.Handle(httpauth.LogoutPath, guard.Logout())
	mcpH, closeMCP := mcpHandler(repo, guard, opts.MCPReadOnly)
	mux.Handle("/mcp", mcpH)
	// The web view at /: the page and its assets (it reads /api/); a
	// browser without the token is sent to the login form.
	mux.Handle("/", guard.Wrap(web.Handler(), httpauth.RedirectToLogin()))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	// Shutdown waits for handlers to return: the live streams must end.
	srv.RegisterOnShutdown(apiServer.Close)
	srv.RegisterOnShutdown(closeMCP) // and so must an MCP client's stream of events
	addr := ln.Addr().String()
	fmt.Fprintf(errOut, "tract serve: recording into %s\n", repo.Path())
	if token != "" {
		for _, k := range []struct{ key, env string }{{openAIKey, llm.EnvAPIKey}, {anthropicKey, llm.EnvAnthropicAPIKey}} {
			if k.key == "" {
				fmt.Fprintf(errOut, "tract serve: no %s: with a token, clients' own keys are not passed on, so calls go upstream without a key\n", k.env)
			}
		}
	}
	if len(opts.Validate) > 0 {
		fmt.Fprintf(errOut, "tract serve: validating every request without %s with %s, in at most %d attempts\n",
			serve.HeaderValidate, strings.Join(opts.Validate, ", "), opts.MaxAttempts)
	}
	fmt.Fprintf(errOut, "tract serve: listening on http://%s (OPENAI_BASE_URL=http://%s/v1, ANTHROPIC_BASE_URL=http://%s)\n", addr, addr, addr)
	fmt.Fprintf(errOut, "tract serve: the web view is at http://%s/\n", addr)
	if opts.Ready != nil {
		opts.Ready(addr)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	wait := opts.Grace
	if wait <= 0 {
		wait = shutdownGrace
	}
	fmt.Fprintf(errOut, "tract serve: stopping; waiting up to %s for the calls in flight\n", wait)
	grace, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		// The grace is over: cancel the calls, which record themselves
		// as cancelled, and wait for them.
		stopCalls(serve.ErrShutdown)
		last, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(last); err != nil {
			srv.Close()
		}
	}
	fmt.Fprintln(errOut, "tract serve: stopped")
	return nil
}

// syncWriter is a writer many goroutines write lines to.
type syncWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
