package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	settings
	endpoint string // the base URL's path + "/chat/completions", its query kept
	models   string // the base URL's path + "/models", its query kept
}

// settings are what every client of this package is configured with (by
// Option), and the transport they share: the retry loop, the backoff and
// the redaction of the key in errors.
type settings struct {
	apiKey        string
	baseURL       string // as configured until the constructor normalises it
	model         string
	modelOptional bool // ModelOptional: no model is no configuration error
	maxTokens     int  // WithMaxTokens; 0: the provider's default
	redactor      *redactor
	keyEnv        string // the variable that holds the key, named by *AuthError
	userAgent     string
	httpClient    *http.Client
	maxRetries    int
	backoff       time.Duration
	maxBackoff    time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
	jitter        func(ceiling time.Duration) time.Duration
	now           func() time.Time
	onRetry       func(RetryEvent)
}

// defaultSettings returns the settings before any Option, for a server
// whose default base URL is base.
func defaultSettings(base, keyEnv string) settings {
	return settings{
		baseURL:    base,
		keyEnv:     keyEnv,
		userAgent:  DefaultUserAgent,
		httpClient: http.DefaultClient,
		maxRetries: DefaultMaxRetries,
		backoff:    DefaultBackoff,
		maxBackoff: DefaultMaxBackoff,
		sleep:      sleepCtx,
		jitter:     fullJitter,
		now:        time.Now,
	}
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

// An Option configures a client (NewOpenAI, NewAnthropic, NewFromEnv).
// String options given an empty string leave the setting unchanged, so an
// unset command-line flag can be passed as is:
// NewOpenAIFromEnv(os.Getenv, WithModel(modelFlag)).
type Option func(*settings)

// WithAPIKey sets the API key sent as "Authorization: Bearer KEY".
// Surrounding white space is dropped.
func WithAPIKey(key string) Option {
	return func(c *settings) {
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
	return func(c *settings) {
		if b := strings.TrimSpace(base); b != "" {
			c.baseURL = b
		}
	}
}

// WithModel sets the model used by requests that name none.
func WithModel(model string) Option {
	return func(c *settings) {
		if m := strings.TrimSpace(model); m != "" {
			c.model = m
		}
	}
}

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). Give it
// no overall Timeout if you stream: that timeout would cut long answers.
// Bound calls with the context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *settings) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *settings) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// WithMaxRetries sets how many times a transient failure is retried, so a
// call makes at most n+1 requests (default DefaultMaxRetries). 0 disables
// transport retries.
func WithMaxRetries(n int) Option {
	return func(c *settings) { c.maxRetries = max(n, 0) }
}

// WithBackoff sets the exponential backoff between retries: before retry n
// the client waits a random duration in [0, min(maxWait, base·2^(n-1))]
// ("full jitter"), unless the server sent Retry-After.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *settings) {
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
	return func(c *settings) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithJitter replaces the random source of the backoff: jitter(ceiling)
// returns the wait, in [0, ceiling]. Tests pass an identity function.
func WithJitter(jitter func(ceiling time.Duration) time.Duration) Option {
	return func(c *settings) {
		if jitter != nil {
			c.jitter = jitter
		}
	}
}

// WithClock replaces time.Now, used to turn a Retry-After date into a wait.
func WithClock(now func() time.Time) Option {
	return func(c *settings) {
		if now != nil {
			c.now = now
		}
	}
}

// WithOnRetry registers a function called before each retry, e.g. to print
// "rate limited, retrying in 2s" on stderr. It runs on the calling goroutine.
func WithOnRetry(f func(RetryEvent)) Option {
	return func(c *settings) { c.onRetry = f }
}

// WithMaxTokens sets the most tokens an answer may have, sent as
// max_tokens with every request. The OpenAI client sends none without it
// (the server's default applies); the Anthropic client, whose API requires
// the field, sends DefaultAnthropicMaxTokens. n <= 0 leaves the setting
// unchanged.
func WithMaxTokens(n int) Option {
	return func(c *settings) {
		if n > 0 {
			c.maxTokens = n
		}
	}
}

// ModelOptional lets the constructor succeed without a model, for a client
// that only lists the server's models (ListModels): a Request that names
// no model is then sent without one, and the server rejects it.
func ModelOptional() Option { return func(c *settings) { c.modelOptional = true } }

// NewOpenAI returns a client configured by opts. It fails with a
// *ConfigError when no model is set, or when no API key is set while the
// base URL is OpenAI's own; a local server (any other base URL) may need no
// key, and then no Authorization header is sent. Both problems are reported
// at once, joined.
func NewOpenAI(opts ...Option) (*OpenAI, error) {
	c := &OpenAI{settings: defaultSettings(DefaultBaseURL, EnvAPIKey)}
	for _, opt := range opts {
		opt(&c.settings)
	}
	u, errs := c.settings.check(EnvBaseURL, "http://localhost:11434/v1")
	if u != nil {
		c.baseURL, c.endpoint = baseEndpoint(u, "/chat/completions")
		_, c.models = baseEndpoint(u, "/models")
	}
	if c.apiKey == "" && c.baseURL == DefaultBaseURL {
		errs = append(errs, &ConfigError{Setting: "API key", msg: "no API key: set " + EnvAPIKey +
			" (or " + EnvBaseURL + " for a local server that needs none)"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// check builds the redactor and checks the base URL and the model. It
// returns the parsed base URL (nil when it is unusable) and the problems
// found; baseEnv names the variable that sets the base URL, example an
// example of one.
func (c *settings) check(baseEnv, example string) (*url.URL, []error) {
	var errs []error
	u, err := url.Parse(c.baseURL)
	if err != nil {
		u = nil
	}
	c.redactor = newRedactor(c.apiKey, u)
	switch {
	case u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		errs = append(errs, &ConfigError{Setting: "base URL", msg: fmt.Sprintf(
			"invalid base URL %q: want http(s)://host[:port]/path, e.g. %s; check %s",
			c.redactor.redact(withoutQuery(c.baseURL)), example, baseEnv)})
		u = nil
	case strings.Contains(c.baseURL, "#"):
		errs = append(errs, &ConfigError{Setting: "base URL", msg: fmt.Sprintf(
			"base URL %q has a fragment (\"#…\"), which no request carries: remove it, or write a # that belongs to a query value as %%23; check %s",
			c.redactor.redact(withoutQuery(c.baseURL)), baseEnv)})
		u = nil
	}
	if c.model == "" && !c.modelOptional {
		errs = append(errs, &ConfigError{Setting: "model", msg: "no model: set " + EnvModel + " (or WithModel)"})
	}
	return u, errs
}

// baseEndpoint returns the base URL u without trailing slashes on its path,
// and the endpoint under it: the path and route ("/chat/completions")
// joined by exactly one slash. Both keep u's query, and the
// percent-encoding of its path and query, as written.
func baseEndpoint(u *url.URL, route string) (base, endpoint string) {
	b := *u
	setEscapedPath(&b, strings.TrimRight(u.EscapedPath(), "/"))
	e := b
	setEscapedPath(&e, b.EscapedPath()+route)
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
	env, err := envOptions(getenv, EnvAPIKey, EnvBaseURL)
	if err != nil {
		return nil, err
	}
	return NewOpenAI(append(env, opts...)...)
}

// envOptions returns the options the environment gives: the key and base
// URL from the variables named, the model from TRACT_MODEL, the backoff
// from TRACT_BACKOFF.
func envOptions(getenv func(string) string, keyEnv, baseEnv string) ([]Option, error) {
	env := []Option{
		WithAPIKey(getenv(keyEnv)),
		WithBaseURL(getenv(baseEnv)),
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
	return env, nil
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
func (c *OpenAI) Provider() string { return ProviderOpenAI }

// DefaultModel returns the model used by requests that name none (Model).
func (c *OpenAI) DefaultModel() string { return c.model }

// BaseURL returns the server's base URL, without trailing slash on its
// path, and with its query, if it has one.
func (c *OpenAI) BaseURL() string { return c.baseURL }

// Complete sends req and returns the answer, streaming it through
// req.OnDelta when that is set. Transient failures (429, 500, 502, 503, 504,
// 529, 408, connection refused or reset) are retried up to the configured
// bound with backoff, honouring Retry-After; a streamed call is not retried
// once part of the answer was delivered. A req.Schema is sent as
// response_format (json_schema); a server that refuses it is asked once
// more without it (see Response.Structured). The error, if any, is one of
// the typed errors of this package, or wraps ctx.Err() when the context
// ended.
func (c *OpenAI) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.complete(ctx, req, c.encode, c.attempt)
}

// encode builds the JSON body of req; schemaSent says whether it carries
// req.Schema.
func (c *OpenAI) encode(req Request) (body []byte, schemaSent bool, err error) {
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
	if c.maxTokens > 0 {
		wire.MaxTokens = c.maxTokens
	}
	if req.Schema != nil {
		wire.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchemaFormat{
			Name: req.Schema.Name, Schema: req.Schema.Schema, Strict: req.Schema.Strict,
		}}
	}
	b, err := json.Marshal(wire)
	if err != nil {
		return nil, false, fmt.Errorf("chat completion: encode request: %w", err)
	}
	return b, req.Schema != nil, nil
}

// attempt makes one HTTP request. delivered reports whether any part of the
// answer reached onDelta, after which the call must not be retried.
func (c *OpenAI) attempt(ctx context.Context, body []byte, req Request) (resp *Response, delivered bool, err error) {
	onDelta := req.OnDelta
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
