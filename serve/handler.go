package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/httpauth"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
)

// Headers the proxy reads and writes.
const (
	// HeaderBranch names the branch a request's conversation is recorded
	// on (see the package documentation); a response carries the branch
	// it went to.
	HeaderBranch = "X-Tract-Branch"
	// HeaderCommit is the commit that ends a request's record: the
	// answer, or the error commit. A stream passed through is recorded
	// when it ends, after its headers went: its response declares
	// HeaderBranch and HeaderCommit as trailers (sent after the body) and
	// names them in a comment line at the end of the event stream too
	// (see streamComment).
	HeaderCommit = "X-Tract-Commit"
)

// streamTrailers is the Trailer header of a stream passed through: the
// record's branch and commit, known once the stream ended.
const streamTrailers = HeaderBranch + ", " + HeaderCommit

// ErrShutdown is the cause a server gives the contexts of the calls it
// cancels when it shuts down (http.Server.BaseContext): such a call is
// recorded as cancelled by the shutdown rather than by its client.
var ErrShutdown = errors.New("the server shut down")

// writeTimeout bounds each write of a response: a client that takes no
// piece of an answer for this long is cut off.
const writeTimeout = time.Minute

// DefaultTimeout is how long the upstream may take to start answering,
// and then between two pieces of a streamed answer, unless WithTimeout
// says otherwise.
const DefaultTimeout = 2 * time.Minute

// Option configures a Handler.
type Option func(*config)

type config struct {
	openAI, anthropic upstreamConfig
	token             string
	maxBody           int64
	client            *http.Client
	timeout           time.Duration
	now               func() time.Time
	onRecordError     func(error)
	parser            *retry.SpecParser
	specOpts          []retry.SpecOption
	defaultSpecs      []string
	defaultAttempts   int
	headerCommands    bool
}

type upstreamConfig struct {
	base string
	key  string
}

// WithOpenAI sets the upstream of the OpenAI wire (POST
// /v1/chat/completions, GET /v1/models): its base URL, as OPENAI_BASE_URL
// takes it ("" for llm.DefaultBaseURL), and its API key ("": pass-through,
// the client's own Authorization header goes to the upstream).
func WithOpenAI(baseURL, key string) Option {
	return func(c *config) { c.openAI = upstreamConfig{baseURL, key} }
}

// WithAnthropic sets the upstream of the Anthropic wire (POST
// /v1/messages): its base URL, as ANTHROPIC_BASE_URL takes it ("" for
// llm.DefaultAnthropicBaseURL), and its API key ("": pass-through, the
// client's own x-api-key or Authorization header goes to the upstream).
func WithAnthropic(baseURL, key string) Option {
	return func(c *config) { c.anthropic = upstreamConfig{baseURL, key} }
}

// WithToken makes every route require "Authorization: Bearer token" (or
// "x-api-key: token", as the Anthropic SDKs send their key). The
// client's credentials are then the token, never forwarded: the
// upstream keys must come from WithOpenAI and WithAnthropic (a client's
// x-api-key is not forwarded either).
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithMaxBodySize bounds a request's body, in bytes (default: the
// repository's limit on a line of an import, tract.Limits.LineSize).
func WithMaxBodySize(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithHTTPClient sets the client the upstream calls go through.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.client = hc } }

// WithTimeout sets how long the upstream may take to start answering and
// then between two pieces of a streamed answer (default DefaultTimeout;
// 0: no bound).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithOnRecordError sets the function told of a call that could not be
// recorded (the repository refused the write, say). The client gets its
// answer all the same: the upstream call was made. fn may be called from
// many goroutines at once.
func WithOnRecordError(fn func(err error)) Option { return func(c *config) { c.onRecordError = fn } }

// RecordError is a call the Handler could not record.
type RecordError struct {
	// Route is the request's path.
	Route string
	Err   error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record a call to %s: %v", e.Route, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// WithClock sets the clock of the durations the proxy records (tests).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Handler is the recording proxy: an http.Handler that forwards model
// calls to their upstream and records each as commits (see the package
// documentation). It is safe for concurrent use.
type Handler struct {
	t                 *tract.Tract
	openAI, anthropic upstream
	token             string
	maxBody           int64
	client            *http.Client
	timeout           time.Duration
	now               func() time.Time
	onRecordError     func(error)
	idx               *index
	// seen remembers the messages of the conversations it decoded.
	seen *seen
	// parser and specOpts parse validator specs; defaultSpecs and
	// defaultAttempts validate a request that names none;
	// headerCommands lets a request name "cmd:" validators.
	parser          *retry.SpecParser
	specOpts        []retry.SpecOption
	defaultSpecs    []string
	defaultAttempts int
	headerCommands  bool
}

// upstream is one wire's server.
type upstream struct {
	base *url.URL
	key  string
}

// New returns the Handler that records into t. It reads every branch of
// t once, to index the conversations they hold; ctx bounds that read.
func New(ctx context.Context, t *tract.Tract, opts ...Option) (*Handler, error) {
	cfg := config{timeout: DefaultTimeout, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	h := &Handler{t: t, token: cfg.token, maxBody: cfg.maxBody, client: cfg.client, timeout: cfg.timeout, now: cfg.now,
		onRecordError: cfg.onRecordError, idx: newIndex(), seen: newSeen(),
		parser: cfg.parser, specOpts: cfg.specOpts, defaultSpecs: cfg.defaultSpecs, defaultAttempts: cfg.defaultAttempts,
		headerCommands: cfg.headerCommands}
	if h.parser == nil {
		h.parser = retry.NewSpecParser(retry.Kinds()...)
	}
	if err := h.checkDefaults(h.defaultSpecs, h.defaultAttempts); err != nil {
		return nil, err
	}
	var err error
	if h.openAI, err = newUpstream(cfg.openAI, llm.DefaultBaseURL, llm.EnvBaseURL); err != nil {
		return nil, err
	}
	if h.anthropic, err = newUpstream(cfg.anthropic, llm.DefaultAnthropicBaseURL, llm.EnvAnthropicBaseURL); err != nil {
		return nil, err
	}
	if h.maxBody <= 0 {
		h.maxBody = t.Limits().WithDefaults().LineSize
	}
	if h.client == nil {
		h.client = newUpstreamClient()
	}
	if h.timeout < 0 {
		return nil, fmt.Errorf("serve: timeout %s: want 0 or more", h.timeout)
	}
	if err := h.idx.load(ctx, t); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return h, nil
}

// maxIdlePerHost is how many idle connections to one upstream the
// Handler's own client keeps: as many as the calls that run at once in a
// busy agent fleet, so that a call rarely waits to dial one (Go's default
// keeps 2, and a proxy of 100 concurrent conversations would then dial
// for nearly every call).
const maxIdlePerHost = 256

// newUpstreamClient returns the client of the upstream calls when
// WithHTTPClient gives none: Go's default transport (proxy settings from
// the environment, HTTP/2, its timeouts) keeping more idle connections.
func newUpstreamClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2*maxIdlePerHost, maxIdlePerHost
	return &http.Client{Transport: tr}
}

// BaseURLError is a base URL an upstream cannot have.
type BaseURLError struct {
	// Env is the variable that usually sets it.
	Env string
	// URL is the base URL, credentials redacted.
	URL string
	Err error
}

func (e *BaseURLError) Error() string {
	return fmt.Sprintf("serve: upstream base URL %q (%s): %v", e.URL, e.Env, e.Err)
}

func (e *BaseURLError) Unwrap() error { return e.Err }

func newUpstream(c upstreamConfig, def, env string) (upstream, error) {
	base := strings.TrimSpace(c.base)
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		err = errors.New("want an http:// or https:// URL with a host")
	}
	if err != nil {
		return upstream{}, &BaseURLError{Env: env, URL: llm.RedactURLs(base), Err: errors.New(llm.RedactURLs(err.Error()))}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return upstream{base: u, key: c.key}, nil
}

// endpoint returns the URL of route under the upstream, with the query of
// the base URL and then of the request.
func (u upstream) endpoint(route, rawQuery string) string {
	e := *u.base
	e.Path += route
	q := e.RawQuery
	if rawQuery != "" {
		if q != "" {
			q += "&"
		}
		q += rawQuery
	}
	e.RawQuery = q
	return e.String()
}

// ServeHTTP routes a request: POST /v1/chat/completions and GET
// /v1/models (OpenAI wire), POST /v1/messages (Anthropic wire).
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := wireOf(r)
	if h.token != "" && !h.authorized(r) {
		rw.Header().Set("WWW-Authenticate", `Bearer realm="tract"`)
		writeError(rw, w, http.StatusUnauthorized, "proxy: this server requires its token: send Authorization: Bearer TOKEN (or x-api-key: TOKEN)")
		return
	}
	route, method := "", ""
	switch r.URL.Path {
	case "/v1/chat/completions", "/v1/messages":
		route, method = r.URL.Path, http.MethodPost
	case "/v1/models":
		route, method = r.URL.Path, http.MethodGet
	default:
		writeError(rw, w, http.StatusNotFound, fmt.Sprintf("proxy: no route %s %s (routes: POST /v1/chat/completions, POST /v1/messages, GET /v1/models)",
			r.Method, r.URL.Path))
		return
	}
	if r.Method != method {
		rw.Header().Set("Allow", method)
		writeError(rw, w, http.StatusMethodNotAllowed, fmt.Sprintf("proxy: %s takes %s, not %s", route, method, r.Method))
		return
	}
	if route == "/v1/models" {
		h.models(rw, r, w)
		return
	}
	h.proxy(rw, r, w)
}

// authorized reports whether r carries the server's token: as
// "Authorization: Bearer TOKEN", or as "x-api-key: TOKEN", where the
// Anthropic SDKs put the API key they are given (the check every route
// of tract serve shares).
func (h *Handler) authorized(r *http.Request) bool { return httpauth.Authorized(r, h.token) }

// upstreamOf returns the upstream of a wire.
func (h *Handler) upstreamOf(w wire) upstream {
	if w == wireAnthropic {
		return h.anthropic
	}
	return h.openAI
}

// newUpstreamRequest builds the request to the upstream: r's headers but
// for the hop-by-hop ones, tract's own and the client's credentials,
// which the upstream key replaces (or, in pass-through mode, which go on
// as they came).
func (h *Handler) newUpstreamRequest(ctx context.Context, r *http.Request, w wire, route string, body []byte) (*http.Request, string, error) {
	up := h.upstreamOf(w)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, up.endpoint(route, r.URL.RawQuery), rd)
	if err != nil {
		return nil, "", err
	}
	for k, vs := range r.Header {
		if dropRequestHeader(k) {
			continue
		}
		req.Header[k] = append([]string(nil), vs...)
	}
	key := up.key
	switch {
	case key != "" && w == wireAnthropic:
		req.Header.Set("x-api-key", key)
	case key != "":
		req.Header.Set("Authorization", "Bearer "+key)
	case h.token == "":
		// Pass-through: the client's own key.
		if a := r.Header.Get("Authorization"); a != "" {
			req.Header.Set("Authorization", a)
			key, _ = strings.CutPrefix(a, "Bearer ")
		}
		if k := r.Header.Get("x-api-key"); k != "" {
			req.Header.Set("x-api-key", k)
			key = k
		}
	}
	if w == wireAnthropic && req.Header.Get("anthropic-version") == "" {
		req.Header.Set("anthropic-version", llm.AnthropicVersion)
	}
	return req, strings.TrimSpace(key), nil
}

// dropRequestHeader reports the request headers that do not go upstream.
func dropRequestHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "X-Api-Key", "Host", "Content-Length", "Accept-Encoding", "Cookie",
		"Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade":
		return true
	}
	return strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Tract-")
}

// copyResponseHeader copies the upstream's response headers to the
// client's, but for those that no longer hold (the body's length and
// encoding: the transport decoded it) and cookies.
func copyResponseHeader(dst, src http.Header) {
	for k, vs := range src {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Content-Encoding", "Set-Cookie", "Connection", "Keep-Alive",
			"Transfer-Encoding", "Trailer", "Upgrade", "Proxy-Authenticate":
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// models passes GET /v1/models through to the wire's upstream.
func (h *Handler) models(rw http.ResponseWriter, r *http.Request, w wire) {
	route := "/models"
	if w == wireAnthropic {
		route = "/v1/models"
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	req, key, err := h.newUpstreamRequest(ctx, r, w, route, nil)
	if err != nil {
		writeError(rw, w, http.StatusInternalServerError, "proxy: "+err.Error())
		return
	}
	stop := h.bound(cancel)
	resp, err := h.client.Do(req)
	stop()
	if err != nil {
		status, msg := h.transportFailure(ctx, err, key)
		writeError(rw, w, status, msg)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, h.maxBody))
	if err != nil {
		writeError(rw, w, http.StatusBadGateway, "proxy: reading the upstream's answer: "+redact(err.Error(), key))
		return
	}
	copyResponseHeader(rw.Header(), resp.Header)
	rw.WriteHeader(resp.StatusCode)
	write(rw, redactBody(body, key, resp.StatusCode))
}

// errTimeout ends an upstream call that took longer than the timeout.
var errTimeout = errors.New("timeout")

// bound cancels a call with errTimeout when the timeout passes before
// the returned function is called; 0 bounds nothing.
func (h *Handler) bound(cancel context.CancelCauseFunc) (stop func()) {
	if h.timeout <= 0 {
		return func() {}
	}
	t := time.AfterFunc(h.timeout, func() { cancel(errTimeout) })
	return func() { t.Stop() }
}

// transportFailure returns the status and message of an upstream call
// that got no answer.
func (h *Handler) transportFailure(ctx context.Context, err error, key string) (int, string) {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return http.StatusGatewayTimeout, fmt.Sprintf("proxy: the upstream sent nothing for %s", h.timeout)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return http.StatusBadGateway, "proxy: the upstream cannot be reached: " + redact(op.Err.Error(), key)
	}
	return http.StatusBadGateway, "proxy: the upstream call failed: " + redact(err.Error(), key)
}

// redact returns s without the key and credentials in URLs.
func redact(s, key string) string {
	if key != "" {
		s = llm.RedactKey(s, key)
	}
	return llm.RedactURLs(s)
}

// redactBody returns an upstream's body without the key, when the body
// is an error's (a 401 may repeat the key it was sent).
func redactBody(body []byte, key string, status int) []byte {
	if status < 300 || key == "" {
		return body
	}
	return []byte(llm.RedactKey(string(body), key))
}

// proxy forwards a model call and records it.
func (h *Handler) proxy(rw http.ResponseWriter, r *http.Request, w wire) {
	started := h.now()
	named := strings.TrimSpace(r.Header.Get(HeaderBranch))
	if named != "" {
		if err := refs.ValidateBranchName(named); err != nil {
			writeError(rw, w, http.StatusBadRequest, "proxy: "+HeaderBranch+": "+err.Error())
			return
		}
	}
	v, err := h.validationOf(r)
	if err != nil {
		writeError(rw, w, http.StatusBadRequest, "proxy: "+err.Error())
		return
	}
	body, err := readBody(rw, r, h.maxBody)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(rw, w, http.StatusRequestEntityTooLarge, fmt.Sprintf("proxy: the request body is larger than %d bytes", h.maxBody))
			return
		}
		return // the client went away
	}
	parse := parseOpenAI
	if w == wireAnthropic {
		parse = parseAnthropic
	}
	req, err := parse(body)
	var ps []prefix
	if err == nil {
		ps, err = h.conversation(req)
	}
	if err != nil {
		status := http.StatusBadRequest
		var tooLarge *tract.TooLargeError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(rw, w, status, "proxy: "+err.Error())
		return
	}
	if v != nil {
		h.validated(rw, r, w, named, req, ps, v)
		return
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	route := "/chat/completions"
	if w == wireAnthropic {
		route = "/v1/messages"
	}
	up, key, err := h.newUpstreamRequest(ctx, r, w, route, body)
	if err != nil {
		writeError(rw, w, http.StatusInternalServerError, "proxy: "+err.Error())
		return
	}
	out := outcome{model: req.Model}
	// save records the call; a client gone does not stop it: what it
	// records is whole.
	save := func() (recorded, error) {
		out.elapsed = h.now().Sub(started)
		rec, err := h.record(context.WithoutCancel(r.Context()), w, named, req, ps, &out)
		if err != nil && h.onRecordError != nil {
			h.onRecordError(&RecordError{Route: r.URL.Path, Err: err})
		}
		return rec, err
	}
	stop := h.bound(cancel)
	resp, err := h.client.Do(up)
	stop()
	if err != nil {
		if r.Context().Err() != nil {
			out.failure = cancelled(r.Context())
			save()
			return
		}
		status, msg := h.transportFailure(ctx, err, key)
		out.failure = strings.TrimPrefix(msg, "proxy: ")
		if rec, rerr := save(); rerr == nil {
			setRecorded(rw, rec)
		}
		writeError(rw, w, status, msg)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		stop := h.bound(cancel)
		defer stop()
		h.upstreamFailed(rw, resp, key, &out, save)
		return
	}
	if req.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		h.stream(ctx, cancel, rw, r, w, resp, key, &out, save)
		return
	}
	stop = h.bound(cancel)
	data, err := io.ReadAll(io.LimitReader(resp.Body, h.maxBody+1))
	stop()
	if err != nil || int64(len(data)) > h.maxBody {
		msg := "proxy: reading the upstream's answer: "
		status := http.StatusBadGateway
		switch {
		case r.Context().Err() != nil:
			msg = cancelled(r.Context())
		case errors.Is(context.Cause(ctx), errTimeout):
			status, msg = http.StatusGatewayTimeout, fmt.Sprintf("proxy: the upstream's answer stopped for %s", h.timeout)
		case err != nil:
			msg += redact(err.Error(), key)
		default:
			msg += fmt.Sprintf("it is larger than %d bytes", h.maxBody)
		}
		out.failure = strings.TrimPrefix(msg, "proxy: ")
		if rec, rerr := save(); rerr == nil {
			setRecorded(rw, rec)
		}
		writeError(rw, w, status, msg)
		return
	}
	if w == wireAnthropic {
		out.answer, err = parseAnthropicAnswer(data)
	} else {
		out.answer, err = parseOpenAIAnswer(data)
	}
	if err != nil {
		out.failure = err.Error()
	}
	saveAndReply(rw, resp, data, save)
}

// readBody reads a request's body, at most limit bytes (a
// *http.MaxBytesError beyond), into one buffer of the size the request
// announces when it does (the server reads no more than that).
func readBody(rw http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(rw, r.Body, limit)
	if r.ContentLength <= 0 || r.ContentLength > limit {
		return io.ReadAll(body)
	}
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// cancelled is the failure of a call whose context ctx ended.
func cancelled(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrShutdown) {
		return "cancelled: " + ErrShutdown.Error()
	}
	return "cancelled: the client disconnected"
}

// write writes a whole response body, bounded by writeTimeout.
func write(rw http.ResponseWriter, data []byte) {
	http.NewResponseController(rw).SetWriteDeadline(time.Now().Add(writeTimeout))
	rw.Write(data)
}

// setRecorded names the record's branch and commit in the response.
func setRecorded(rw http.ResponseWriter, rec recorded) {
	rw.Header().Set(HeaderBranch, rec.Branch)
	rw.Header().Set(HeaderCommit, rec.Commit.String())
}

// upstreamFailed passes an upstream's error answer on (its key redacted)
// and records it.
func (h *Handler) upstreamFailed(rw http.ResponseWriter, resp *http.Response, key string, out *outcome, save func() (recorded, error)) {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	data = redactBody(data, key, resp.StatusCode)
	what := strings.TrimSpace(upstreamMessage(data))
	if what == "" {
		what = http.StatusText(resp.StatusCode)
	}
	out.failure = fmt.Sprintf("the upstream answered %d: %s", resp.StatusCode, redact(what, key))
	saveAndReply(rw, resp, data, save)
}

// saveAndReply records the call with save, then passes the upstream's
// answer data on with its status and headers, and the record's branch
// and commit when it was recorded.
func saveAndReply(rw http.ResponseWriter, resp *http.Response, data []byte, save func() (recorded, error)) {
	rec, err := save()
	copyResponseHeader(rw.Header(), resp.Header)
	if err == nil {
		setRecorded(rw, rec)
	}
	rw.WriteHeader(resp.StatusCode)
	write(rw, data)
}

// eventSink takes the data of each server-sent event of a stream.
type eventSink interface {
	event(data []byte)
	result() (*answer, error)
}

// stream passes a streamed answer through as it arrives, and records it
// when it is complete.
func (h *Handler) stream(ctx context.Context, cancel context.CancelCauseFunc, rw http.ResponseWriter, r *http.Request, w wire, resp *http.Response, key string, out *outcome, save func() (recorded, error)) {
	var sink eventSink = &openAIStream{}
	if w == wireAnthropic {
		sink = &anthropicStream{}
	}
	copyResponseHeader(rw.Header(), resp.Header)
	rw.Header().Set("Trailer", streamTrailers)
	rw.WriteHeader(resp.StatusCode)
	flusher, _ := rw.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	rc := http.NewResponseController(rw)
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var readErr error
	var clientGone bool
	// endsLine is whether what the client got so far ends a line.
	endsLine := true
	for {
		stop := h.bound(cancel)
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: gather it whole.
			full := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		stop()
		if len(line) > 0 {
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				sink.event(bytes.TrimSpace(data))
			}
			if !clientGone {
				rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				if _, werr := rw.Write(line); werr != nil {
					clientGone = true
				} else if flusher != nil {
					flusher.Flush()
				}
				endsLine = line[len(line)-1] == '\n'
			}
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if clientGone || r.Context().Err() != nil {
			clientGone = true
			break
		}
	}
	a, err := sink.result()
	switch {
	case err == nil:
		out.answer = a
	case clientGone || r.Context().Err() != nil:
		out.failure = cancelled(r.Context())
	case errors.Is(context.Cause(ctx), errTimeout):
		out.failure = fmt.Sprintf("the upstream sent nothing for %s", h.timeout)
	case readErr != nil && errors.Is(err, errIncomplete):
		out.failure = "the upstream's stream broke off: " + redact(readErr.Error(), key)
	default:
		out.failure = err.Error()
	}
	rec, err := save()
	if err != nil || clientGone || r.Context().Err() != nil {
		return
	}
	setRecorded(rw, rec)
	end := streamComment(rec)
	if !endsLine {
		end = append([]byte("\n"), end...)
	}
	rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	rw.Write(end)
}

// streamComment is the end of an event stream that names the record's
// branch and commit: comment lines, which a client's event parser skips
// (the SDKs do), then the blank line that ends an event.
func streamComment(rec recorded) []byte {
	return []byte(": " + HeaderBranch + ": " + rec.Branch + "\n: " + HeaderCommit + ": " + rec.Commit.String() + "\n\n")
}
