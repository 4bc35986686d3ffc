package mcpserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tractdag/tract"
)

// Name is the server's name in the MCP handshake.
const Name = "tract"

// Limits of the listing tools: a call that gives no limit gets
// DefaultLimit commits (log, search), and none gets more than MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// SessionTimeout is how long NewHandler keeps an HTTP session no request
// has used before it closes it.
const SessionTimeout = 30 * time.Minute

// Option configures New, Register, NewHandler and Run.
type Option func(*config)

type config struct {
	readOnly bool
	version  string
}

// ReadOnly leaves out the tools that write (branch, reset, note,
// answer_escalation): a client lists, and may call, only the reading
// ones. Open the repository with tract.WithReadOnly too, so that the
// store itself refuses writes.
func ReadOnly() Option { return func(c *config) { c.readOnly = true } }

// WithVersion sets the version the server reports in the handshake
// (default "devel").
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

func newConfig(opts []Option) config {
	c := config{version: "devel"}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// instructions is what the server tells a client, and through it the
// model, about itself in the handshake.
const instructions = `tract keeps this conversation history as a git-like DAG of commits. ` +
	`log shows a branch (all: true adds the orphaned chains beside it: failed attempts a retry purified away, chains left by a reset), ` +
	`show one commit with its metadata and failure record, compile what the model is sent, search finds words anywhere. ` +
	`branch forks at a revision, reset (soft) moves a branch back to a restore point keeping what it leaves as orphans, ` +
	`note records a note the model is not sent; pass expect (the tip you read) to reset and note so that they fail with a conflict, ` +
	`not overwrite, when another writer moved the branch. escalations lists the turns waiting for an answer; answer_escalation gives one.`

// New returns an MCP server offering t as tools and resources (see the
// package documentation). The server shares t with its caller, which
// closes it after the server is done.
func New(t *tract.Tract, opts ...Option) *mcp.Server {
	c := newConfig(opts)
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "tract: conversation history as a DAG", Version: c.version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	register(s, t, c)
	return s
}

// Register adds tract's tools and resources for t to s, a server of the
// caller's that may offer tools of its own.
func Register(s *mcp.Server, t *tract.Tract, opts ...Option) {
	register(s, t, newConfig(opts))
}

func register(s *mcp.Server, t *tract.Tract, c config) {
	r := &repo{t: t}
	addReadTools(s, r)
	if !c.readOnly {
		addWriteTools(s, r)
	}
	addResources(s, r)
}

// repo is the repository the tools and resources of one server work on.
type repo struct {
	t *tract.Tract
}

// on returns t, or t's view of branch when branch is set.
func (r *repo) on(branch string) *tract.Tract {
	if branch == "" {
		return r.t
	}
	return r.t.OnBranch(branch)
}

// Run serves one session over a stream, as `tract mcp` does over its
// standard input and output: newline-delimited JSON-RPC read from in and
// written to out. It returns when the client closes in (nil) or ctx is
// cancelled (ctx's error).
func Run(ctx context.Context, t *tract.Tract, in io.Reader, out io.Writer, opts ...Option) error {
	s := New(t, opts...)
	err := s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// nopWriteCloser is a writer whose Close does nothing: the caller owns out.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Handler is the streamable HTTP handler of a server New builds.
type Handler struct {
	s *mcp.Server
	h http.Handler
}

// NewHandler returns the streamable HTTP handler of the server New
// builds, one server for every session. It answers at whatever path it
// is mounted (tract serve: /mcp). It refuses cross-origin browser
// requests (http.CrossOriginProtection), and, on a loopback listener, a
// Host that is not loopback (DNS rebinding); authentication is the
// caller's (see the package documentation).
func NewHandler(t *tract.Tract, opts ...Option) *Handler {
	s := New(t, opts...)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{SessionTimeout: SessionTimeout})
	return &Handler{s: s, h: http.NewCrossOriginProtection().Handler(h)}
}

// ServeHTTP answers one request of a session.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// Close ends every open session, as a server that shuts down calls it
// (http.Server.RegisterOnShutdown): a client's stream of server events
// would otherwise hold its connection open until the shutdown gives up.
func (h *Handler) Close() {
	for ss := range h.s.Sessions() {
		ss.Close()
	}
}
