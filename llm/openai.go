package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of the OpenAI client.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultMaxRetries = 4
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 20 * time.Second
	// MaxRetryAfter caps the wait a server may ask for with Retry-After.
	MaxRetryAfter = 60 * time.Second
	// DefaultUserAgent is sent unless WithUserAgent says otherwise.
	DefaultUserAgent = "tract-llm"
)

// Environment variables read by NewOpenAIFromEnv.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvModel   = "TRACT_MODEL"
	// EnvBackoff sets the backoff between retries of transient failures:
	// "BASE" or "BASE,MAX" as Go durations ("250ms,5s"), as WithBackoff.
	// Tests set it to a millisecond so a 500 storm does not sleep.
	EnvBackoff = "TRACT_BACKOFF"
)

// OpenAI is a Client for any server speaking the OpenAI chat-completions
// protocol (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter, …). It is
// safe for concurrent use; its settings are fixed at construction.
type OpenAI struct {
	apiKey     string
	baseURL    string // as configured until NewOpenAI normalises it (see baseEndpoint)
	endpoint   string // the base URL's path + "/chat/completions", its query kept
	redactor   *redactor
	model      string
	userAgent  string
	httpClient *http.Client
	maxRetries int
	backoff    time.Duration
	maxBackoff time.Duration
	sleep      func(ctx context.Context, d time.Duration) error
	jitter     func(ceiling time.Duration) time.Duration
	now        func() time.Time
	onRetry    func(RetryEvent)
}

var _ Client = (*OpenAI)(nil)

// RetryEvent describes a failed attempt that the client is about to retry.
type RetryEvent struct {
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Err is that attempt's error, one of this package's typed errors.
	Err error
	// Wait is how long the client sleeps before the next attempt.
	Wait time.Duration
}

// An Option configures NewOpenAI. String options given an empty string leave
// the setting unchanged, so an unset command-line flag can be passed as is:
// NewOpenAIFromEnv(os.Getenv, WithModel(modelFlag)).
type Option func(*OpenAI)

// WithAPIKey sets the API key sent as "Authorization: Bearer KEY".
// Surrounding white space is dropped.
func WithAPIKey(key string) Option {
	return func(c *OpenAI) {
		if k := strings.TrimSpace(key); k != "" {
			c.apiKey = k
		}
	}
}

// WithBaseURL sets the server's base URL, the part before
// "/chat/completions" (for Ollama: http://localhost:11434/v1). A trailing
// slash is tolerated. A query string is kept as written and sent with every
// request: https://host/openai/deployments/x?api-version=2024-02-01 calls
// https://host/openai/deployments/x/chat/completions?api-version=2024-02-01.
// A fragment ("#…"), which no request would carry, is a configuration
// error.
func WithBaseURL(base string) Option {
	return func(c *OpenAI) {
		if b := strings.TrimSpace(base); b != "" {
			c.baseURL = b
		}
	}
}

// WithModel sets the model used by requests that name none.
func WithModel(model string) Option {
	return func(c *OpenAI) {
		if m := strings.TrimSpace(model); m != "" {
			c.model = m
		}
	}
}

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). Give it
// no overall Timeout if you stream: that timeout would cut long answers.
// Bound calls with the context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *OpenAI) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *OpenAI) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// WithMaxRetries sets how many times a transient failure is retried, so a
// call makes at most n+1 requests (default DefaultMaxRetries). 0 disables
// transport retries.
func WithMaxRetries(n int) Option {
	return func(c *OpenAI) { c.maxRetries = max(n, 0) }
}

// WithBackoff sets the exponential backoff between retries: before retry n
// the client waits a random duration in [0, min(maxWait, base·2^(n-1))]
// ("full jitter"), unless the server sent Retry-After.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *OpenAI) {
		if base > 0 {
			c.backoff = base
		}
		if maxWait > 0 {
			c.maxBackoff = maxWait
		}
	}
}

// WithSleep replaces the function that waits between retries (tests pass
// one that records the duration and returns at once). It must return
// ctx.Err() if the context ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *OpenAI) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithJitter replaces the random source of the backoff: jitter(ceiling)
// returns the wait, in [0, ceiling]. Tests pass an identity function.
func WithJitter(jitter func(ceiling time.Duration) time.Duration) Option {
	return func(c *OpenAI) {
		if jitter != nil {
			c.jitter = jitter
		}
	}
}

// WithClock replaces time.Now, used to turn a Retry-After date into a wait.
func WithClock(now func() time.Time) Option {
	return func(c *OpenAI) {
		if now != nil {
			c.now = now
		}
	}
}

// WithOnRetry registers a function called before each retry, e.g. to print
// "rate limited, retrying in 2s" on stderr. It runs on the calling goroutine.
func WithOnRetry(f func(RetryEvent)) Option {
	return func(c *OpenAI) { c.onRetry = f }
}

// NewOpenAI returns a client configured by opts. It fails with a
// *ConfigError when no model is set, or when no API key is set while the
// base URL is OpenAI's own; a local server (any other base URL) may need no
// key, and then no Authorization header is sent. Both problems are reported
// at once, joined.
func NewOpenAI(opts ...Option) (*OpenAI, error) {
	c := &OpenAI{
		baseURL:    DefaultBaseURL,
		userAgent:  DefaultUserAgent,
		httpClient: http.DefaultClient,
		maxRetries: DefaultMaxRetries,
		backoff:    DefaultBackoff,
		maxBackoff: DefaultMaxBackoff,
		sleep:      sleepCtx,
		jitter:     fullJitter,
		now:        time.Now,
	}
	for _, opt := range opts {
		opt(c)
	}
	var errs []error
	u, err := url.Parse(c.baseURL)
	if err != nil {
		u = nil
	}
	c.redactor = newRedactor(c.apiKey, u)
	switch {
	case u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		errs = append(errs, &ConfigError{Setting: "base URL", msg: fmt.Sprintf(
			"invalid base URL %q: want http(s)://host[:port]/path, e.g. http://localhost:11434/v1; check %s",
			c.redactor.redact(withoutQuery(c.baseURL)), EnvBaseURL)})
	case strings.Contains(c.baseURL, "#"):
		errs = append(errs, &ConfigError{Setting: "base URL", msg: fmt.Sprintf(
			"base URL %q has a fragment (\"#…\"), which no request carries: remove it, or write a # that belongs to a query value as %%23; check %s",
			c.redactor.redact(withoutQuery(c.baseURL)), EnvBaseURL)})
	default:
		c.baseURL, c.endpoint = baseEndpoint(u)
	}
	if c.apiKey == "" && c.baseURL == DefaultBaseURL {
		errs = append(errs, &ConfigError{Setting: "API key", msg: "no API key: set " + EnvAPIKey +
			" (or " + EnvBaseURL + " for a local server that needs none)"})
	}
	if c.model == "" {
		errs = append(errs, &ConfigError{Setting: "model", msg: "no model: set " + EnvModel + " (or WithModel)"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// baseEndpoint returns the base URL u without trailing slashes on its path,
// and the chat-completions endpoint under it: the path and
// "/chat/completions" joined by exactly one slash. Both keep u's query, and
// the percent-encoding of its path and query, as written.
func baseEndpoint(u *url.URL) (base, endpoint string) {
	b := *u
	setEscapedPath(&b, strings.TrimRight(u.EscapedPath(), "/"))
	e := b
	setEscapedPath(&e, b.EscapedPath()+"/chat/completions")
	return b.String(), e.String()
}

// setEscapedPath sets u's path from its percent-encoded form p (made from
// an EscapedPath, so valid), which EscapedPath then returns as is.
func setEscapedPath(u *url.URL, p string) {
	u.Path, _ = url.PathUnescape(p)
	u.RawPath = p
}

// withoutQuery returns raw up to its query or fragment, which may hold
// credentials an error must not print, with "?…" or "#…" in its place.
func withoutQuery(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i] + raw[i:i+1] + "…"
	}
	return raw
}

// NewOpenAIFromEnv is NewOpenAI configured from the environment first
// (OPENAI_API_KEY, OPENAI_BASE_URL, TRACT_MODEL, read through getenv, e.g.
// os.Getenv), then from opts, which override it.
func NewOpenAIFromEnv(getenv func(string) string, opts ...Option) (*OpenAI, error) {
	env := []Option{
		WithAPIKey(getenv(EnvAPIKey)),
		WithBaseURL(getenv(EnvBaseURL)),
		WithModel(getenv(EnvModel)),
	}
	if s := getenv(EnvBackoff); s != "" {
		base, maxWait, err := parseBackoff(s)
		if err != nil {
			return nil, &ConfigError{Setting: "backoff", msg: fmt.Sprintf(
				"%s=%q is not a backoff: give a duration, or two separated by a comma (base and maximum), e.g. 250ms,5s", EnvBackoff, s)}
		}
		env = append(env, WithBackoff(base, maxWait))
	}
	return NewOpenAI(append(env, opts...)...)
}

// parseBackoff reads "BASE" or "BASE,MAX"; without MAX the maximum is
// DefaultMaxBackoff, or BASE when that is larger.
func parseBackoff(s string) (base, maxWait time.Duration, err error) {
	b, m, two := strings.Cut(s, ",")
	if base, err = time.ParseDuration(strings.TrimSpace(b)); err != nil || base <= 0 {
		return 0, 0, fmt.Errorf("bad base %q", b)
	}
	maxWait = max(DefaultMaxBackoff, base)
	if two {
		if maxWait, err = time.ParseDuration(strings.TrimSpace(m)); err != nil || maxWait < base {
			return 0, 0, fmt.Errorf("bad maximum %q", m)
		}
	}
	return base, maxWait, nil
}

// Model returns the model used by requests that name none.
func (c *OpenAI) Model() string { return c.model }

// Provider returns "openai": the client speaks the OpenAI wire format
// (to OpenAI or any compatible server).
func (c *OpenAI) Provider() string { return "openai" }

// DefaultModel returns the model used by requests that name none (Model).
func (c *OpenAI) DefaultModel() string { return c.model }

// BaseURL returns the server's base URL, without trailing slash on its
// path, and with its query, if it has one.
func (c *OpenAI) BaseURL() string { return c.baseURL }

// Complete sends req and returns the answer, streaming it through
// req.OnDelta when that is set. Transient failures (429, 500, 502, 503, 504,
// 408, connection refused or reset) are retried up to the configured bound
// with backoff, honouring Retry-After; a streamed call is not retried once
// part of the answer was delivered. The error, if any, is one of the typed
// errors of this package, or wraps ctx.Err() when the context ended.
func (c *OpenAI) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("chat completion: request has no messages")
	}
	body, err := c.encode(req)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		resp, delivered, err := c.attempt(ctx, body, req.OnDelta)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("chat completion: %w", ctx.Err())
		}
		base := baseOf(err)
		if base == nil { // not ours; should not happen
			return nil, err
		}
		base.Attempts = attempt
		if !base.retryable || delivered || attempt > c.maxRetries {
			return nil, err
		}
		wait := c.wait(attempt, base)
		if c.onRetry != nil {
			c.onRetry(RetryEvent{Attempt: attempt, Err: err, Wait: wait})
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("chat completion: %w", err)
		}
	}
}

// wait returns the pause before the retry that follows failed attempt n.
func (c *OpenAI) wait(n int, base *APIError) time.Duration {
	if base.hasRetry {
		return min(base.retryAfter, MaxRetryAfter)
	}
	ceiling := c.maxBackoff
	if n-1 < 32 {
		ceiling = min(c.backoff<<(n-1), c.maxBackoff)
	}
	if ceiling <= 0 { // overflow
		ceiling = c.maxBackoff
	}
	return c.jitter(ceiling)
}

// encode builds the JSON body of req.
func (c *OpenAI) encode(req Request) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	wire := chatRequest{
		Model:       model,
		Messages:    req.Messages,
		Temperature: req.Temperature,
		Stream:      req.OnDelta != nil,
	}
	if wire.Stream {
		wire.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	// Without HTML escaping: the messages go out as they were written
	// ("<" stays "<"), as Compile's JSON prints them.
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(wire); err != nil {
		return nil, fmt.Errorf("chat completion: encode request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// attempt makes one HTTP request. delivered reports whether any part of the
// answer reached onDelta, after which the call must not be retried.
func (c *OpenAI) attempt(ctx context.Context, body []byte, onDelta func(string)) (resp *Response, delivered bool, err error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, false, c.transportError(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if onDelta != nil {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	hreq.Header.Set("User-Agent", c.userAgent)
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	hresp, err := c.httpClient.Do(hreq)
	if err != nil {
		return nil, false, c.transportError(err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return nil, false, c.statusError(hresp)
	}
	if onDelta != nil && isEventStream(hresp.Header.Get("Content-Type")) {
		return c.readStream(hresp, onDelta)
	}
	// A non-streamed answer, or a server that ignored "stream": true and
	// answered with one JSON document: hand its text over as one delta.
	resp, err = c.readJSON(hresp)
	if err != nil {
		return nil, false, err
	}
	if onDelta != nil && resp.Content != "" {
		onDelta(resp.Content)
		delivered = true
	}
	return resp, delivered, nil
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fullJitter returns a uniformly random duration in [0, ceiling].
func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}
