package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// This file holds the settings every client of this package shares and
// the options that set them.

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
	idleTimeout   time.Duration // WithIdleTimeout; 0: no bound
	callTimeout   time.Duration // WithCallTimeout; 0: no bound
}

// defaultSettings returns the settings before any Option, for a server
// whose default base URL is base.
func defaultSettings(base, keyEnv string) settings {
	return settings{
		baseURL:     base,
		keyEnv:      keyEnv,
		userAgent:   DefaultUserAgent,
		httpClient:  http.DefaultClient,
		maxRetries:  DefaultMaxRetries,
		backoff:     DefaultBackoff,
		maxBackoff:  DefaultMaxBackoff,
		sleep:       sleepCtx,
		jitter:      fullJitter,
		now:         time.Now,
		idleTimeout: DefaultIdleTimeout,
		callTimeout: DefaultCallTimeout,
	}
}

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

// WithAPIKey sets the API key, sent by OpenAI as "Authorization: Bearer
// KEY", by Anthropic as "x-api-key: KEY". Surrounding white space is
// dropped.
func WithAPIKey(key string) Option {
	return func(c *settings) {
		if k := strings.TrimSpace(key); k != "" {
			c.apiKey = k
		}
	}
}

// WithBaseURL sets the server's base URL, the part before
// "/chat/completions" (for Ollama: http://localhost:11434/v1); for
// Anthropic the part before "/v1/messages". A trailing
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
// Bound calls with WithIdleTimeout and WithCallTimeout, or the context,
// instead.
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
		errs = append(errs, &ConfigError{Setting: "model", msg: "no model given"})
	}
	return u, errs
}
