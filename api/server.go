package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract"
)

// Page sizes of the paginated routes.
const (
	// DefaultLimit is a page's size when the request gives no limit.
	DefaultLimit = 100
	// MaxLimit is the largest limit a request may give.
	MaxLimit = 1000
)

// Defaults of the options.
const (
	// DefaultPollInterval is how often the live poller reads the refs.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultHeartbeat is how often an idle live stream gets a comment,
	// so that proxies in between keep it open.
	DefaultHeartbeat = 15 * time.Second
	// DefaultMaxBody bounds the body of a POST.
	DefaultMaxBody = 64 << 10
	// streamBuffer is how many events a live stream may fall behind by
	// before it is ended.
	streamBuffer = 64
	// writeTimeout bounds each write of a live stream.
	writeTimeout = 10 * time.Second
)

// Option configures a Server.
type Option func(*Server)

// WithPollInterval sets how often the live poller reads the refs
// (default DefaultPollInterval).
func WithPollInterval(d time.Duration) Option { return func(s *Server) { s.poll = d } }

// WithHeartbeat sets how often an idle live stream gets a comment line
// (default DefaultHeartbeat).
func WithHeartbeat(d time.Duration) Option { return func(s *Server) { s.heartbeat = d } }

// WithMaxBodySize bounds the body of a POST, in bytes (default
// DefaultMaxBody); a larger one is answered with 413.
func WithMaxBodySize(n int64) Option { return func(s *Server) { s.maxBody = n } }

// Server is the http.Handler of the routes under /api/. It is safe for
// concurrent use. Close it to end its live streams and its poller.
type Server struct {
	t         *tract.Tract
	mux       *http.ServeMux
	poll      time.Duration
	heartbeat time.Duration
	maxBody   int64
	hub       *hub
	outlines  outlineCache
	// ctx ends with Close: the live streams and the poller stop.
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

// New returns the Server of the repository t.
func New(t *tract.Tract, opts ...Option) *Server {
	s := &Server{t: t, poll: DefaultPollInterval, heartbeat: DefaultHeartbeat, maxBody: DefaultMaxBody}
	for _, o := range opts {
		o(s)
	}
	if s.poll <= 0 {
		s.poll = DefaultPollInterval
	}
	if s.heartbeat <= 0 {
		s.heartbeat = DefaultHeartbeat
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.hub = newHub(s)
	s.outlines.t = t
	m := http.NewServeMux()
	get := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		m.Handle(pattern, s.route(h, http.MethodGet, http.MethodHead))
	}
	get("/api/status", s.status)
	get("/api/branches", s.branches)
	get("/api/log", s.log)
	get("/api/graph", s.graph)
	get("/api/commits/{rev...}", s.show)
	get("/api/compile", s.compile)
	get("/api/diff", s.diff)
	get("/api/reflog", s.reflog)
	get("/api/events", s.events)
	get("/api/stats", s.stats)
	get("/api/export", s.export)
	get("/api/search", s.search)
	get("/api/escalations", s.escalations)
	get("/api/escalations/{id}", s.escalation)
	m.Handle("/api/escalations/{id}/answer", s.route(s.answer, http.MethodPost))
	get("/api/live", s.live)
	m.Handle("/api/", s.route(s.notFound))
	s.mux = m
	return s
}

// ServeHTTP answers a request under /api/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close ends the live streams and stops the poller. The other routes
// keep answering.
func (s *Server) Close() { s.once.Do(s.cancel) }

// route checks the method (methods empty: any), then runs h and
// answers with its error.
func (s *Server) route(h func(http.ResponseWriter, *http.Request) error, methods ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(methods) > 0 && !contains(methods, r.Method) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeError(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
				Message: r.URL.Path + " takes " + strings.Join(methods, " or ") + ", not " + r.Method})
			return
		}
		if err := h(w, r); err != nil {
			writeError(w, r, err)
		}
	})
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: "no route " + r.URL.Path + " (routes: /api/status, /api/branches, /api/log, /api/graph, /api/commits/REV, " +
			"/api/compile, /api/diff, /api/reflog, /api/events, /api/stats, /api/export, /api/search, /api/escalations, /api/live; see docs/api.md)"}
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the CLI prints it: "HEAD -> main"
	if err := enc.Encode(v); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	_, err := w.Write(buf.Bytes())
	return err
}

// limit reads the query parameter limit: DefaultLimit when absent.
func limit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, badRequest(CodeBadLimit, "limit %q: give a whole number from 1 to %d (default %d)", v, MaxLimit, DefaultLimit)
	}
	return n, nil
}

// flag reads a boolean query parameter: "", "0", "false" are false;
// "1", "true" (and the bare name) are true.
func flag(r *http.Request, name string) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return false, nil
	}
	switch v := q.Get(name); strings.ToLower(v) {
	case "", "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	default:
		return false, badRequest(CodeBadRequest, "%s=%q: give %s=1 or leave it out", name, v, name)
	}
}

// since reads the query parameter since: an RFC 3339 time, or an age
// such as 90m, 12h or 7d (zero when absent).
func since(r *http.Request, now time.Time) (time.Time, error) {
	v := r.URL.Query().Get("since")
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	} else if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, badRequest(CodeBadRequest, "since=%q: give an RFC 3339 time such as 2026-01-26T14:00:00Z, or an age such as 90m, 12h or 7d", v)
}
