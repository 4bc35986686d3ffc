package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrNoClient says that an operation needing a model had no Client: the
// one sentinel of every package that calls models (tract.ErrNoClient and
// compress.ErrNoClient are this error).
var ErrNoClient = errors.New("no model client configured")

// ConfigError reports a setting a client cannot work without, or a value
// it cannot use. Its message names the environment variable that
// supplies the setting, when the client reads one (the provider's API key
// and base URL); a program that takes the model or the provider from
// elsewhere words its own message from Setting.
type ConfigError struct {
	// Setting names what is missing or wrong: "API key", "base URL",
	// "model" or "provider".
	Setting string
	msg     string
}

// Error returns the ConfigError message.
func (e *ConfigError) Error() string { return e.msg }

// APIError carries what every failed call to a model server has in common.
// Each typed error below embeds one and unwraps to it, so
//
//	var apiErr *llm.APIError
//	if errors.As(err, &apiErr) { … apiErr.Attempts … }
//
// works for all of them. A bare *APIError is returned for a request the
// server rejected for another reason (400 without a context-length code, 404
// for an unknown model or a wrong base URL, …); it is never retried.
type APIError struct {
	// StatusCode is the HTTP status of the last attempt; 0 when no response
	// arrived. For an error event inside an Anthropic stream (which came
	// with a 200) it is the status the event's type stands for: 529 for
	// overloaded_error, 500 for api_error, 400 for invalid_request_error, ….
	StatusCode int
	// Type and Code are the server's error.type and error.code, when it sent them.
	Type string
	Code string
	// Message is the server's error message (or a sanitized snippet of its
	// body), with the API key redacted.
	Message string
	// Attempts is the number of HTTP requests made for the call, retries included.
	Attempts int
	// BaseURL is the base URL of the client that made the call, with
	// credentials redacted and a query shown as "?…".
	BaseURL string
	// Setup, when set, says the failure shows the client's setup to be
	// wrong (its base URL, key or model), not a passing trouble of the
	// server: the same request fails again until the setup changes.
	Setup SetupProblem

	retryable  bool          // a transient failure another attempt may fix
	retryAfter time.Duration // the server's Retry-After; valid when hasRetry
	hasRetry   bool          // the server sent a usable Retry-After
}

// Error returns the APIError message.
func (e *APIError) Error() string { return e.format("request failed") }

// format renders "what (HTTP n) after k attempts: message".
func (e *APIError) format(what string) string {
	var b strings.Builder
	b.WriteString(what)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// SetupProblem names what a failed call shows to be wrong in a client's
// setup (APIError.Setup). Every typed error of this package unwraps to
// its *APIError, so
//
//	var apiErr *llm.APIError
//	if errors.As(err, &apiErr) && apiErr.Setup != "" { … fix the setup … }
//
// tells a wrong setup from a server in trouble, whatever the error's type.
type SetupProblem string

// The setup problems a failed call can show.
const (
	// SetupUnreachable: no server answered at the base URL on any attempt
	// of the call: the connection was refused, or the host name does not
	// resolve (a *TransportError).
	SetupUnreachable SetupProblem = "unreachable"
	// SetupAuth: the server refused the key (401, 403; an *AuthError).
	SetupAuth SetupProblem = "auth"
	// SetupEndpoint: the server has nothing at the endpoint (a 404 that
	// names no model, or a 405): a base URL with a wrong or missing path.
	SetupEndpoint SetupProblem = "endpoint"
	// SetupNotAPI: the server answered with an HTML page instead of the
	// API's JSON (a *BadResponseError): the base URL points at a web site
	// or a proxy's page.
	SetupNotAPI SetupProblem = "not-api"
	// SetupModel: the server does not know the model (OpenAI's code
	// model_not_found, or a 404 or 400 whose message says the model is not
	// found, does not exist or is not valid).
	SetupModel SetupProblem = "model"
)

// AuthError reports a 401 or 403: a missing, wrong or unauthorised API key.
// It is never retried.
type AuthError struct {
	APIError
	keyEnv string // the variable that holds the key; "" is OPENAI_API_KEY
}

// Error returns the AuthError message.
func (e *AuthError) Error() string {
	env := e.keyEnv
	if env == "" {
		env = EnvAPIKey
	}
	return e.format("authentication failed") + " (check " + env + ")"
}

// Unwrap returns the error the AuthError wraps.
func (e *AuthError) Unwrap() error { return &e.APIError }

// RateLimitError reports a 429 that persisted through every retry, or a 429
// for an exhausted quota (code "insufficient_quota"), which is not retried.
type RateLimitError struct {
	APIError
	// RetryAfter is the wait the server asked for in its last answer
	// (Retry-After or retry-after-ms), uncapped; 0 when it named none.
	RetryAfter time.Duration
}

// Error returns the RateLimitError message.
func (e *RateLimitError) Error() string {
	s := e.format("rate limited by the model server")
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (server asks to retry after %s)", e.RetryAfter)
	}
	return s
}

// Unwrap returns the error the RateLimitError wraps.
func (e *RateLimitError) Unwrap() error { return &e.APIError }

// ContextLengthError reports a request whose messages exceed the model's
// context window. It is never retried: the same request would fail again.
type ContextLengthError struct{ APIError }

// Error returns the ContextLengthError message.
func (e *ContextLengthError) Error() string { return e.format("context length exceeded") }

// Unwrap returns the error the ContextLengthError wraps.
func (e *ContextLengthError) Unwrap() error { return &e.APIError }

// ServerError reports a 5xx answer: after every retry for 500, 502, 503 and
// 504, at once for the other 5xx codes (501 Not Implemented, …).
type ServerError struct{ APIError }

// Error returns the ServerError message.
func (e *ServerError) Error() string { return e.format("model server error") }

// Unwrap returns the error the ServerError wraps.
func (e *ServerError) Unwrap() error { return &e.APIError }

// BadResponseError reports an answer that is not a chat completion: an HTML
// page, an empty body, JSON that does not parse (truncated), no choices, or
// a stream that ended before its end. It is not retried.
type BadResponseError struct {
	APIError
	// Reason says what was wrong, e.g. "invalid JSON: unexpected end of JSON input".
	Reason string
	// Snippet is the start of the offending body (or the last stream line),
	// sanitized: control characters replaced, at most snippetMax characters,
	// API key redacted.
	Snippet string
}

// Error returns the BadResponseError message.
func (e *BadResponseError) Error() string {
	s := e.format("bad response from the model server") + ": " + e.Reason
	if e.Snippet != "" {
		s += fmt.Sprintf(" (body: %q)", e.Snippet)
	}
	return s
}

// Unwrap returns the error the BadResponseError wraps.
func (e *BadResponseError) Unwrap() error { return &e.APIError }

// TransportError reports a call that got no HTTP answer: the host is
// unreachable, the connection was refused or reset, or the body stopped
// mid-way. Err is the underlying error (a *url.Error whose URL has the API
// key redacted); errors.Is sees through it, e.g. to syscall.ECONNREFUSED.
type TransportError struct {
	APIError
	Err error
}

// Error returns the TransportError message.
func (e *TransportError) Error() string {
	return e.format("connection to the model server failed")
}

// Unwrap returns the error the TransportError wraps.
func (e *TransportError) Unwrap() []error { return []error{&e.APIError, e.Err} }

// baseOf returns the APIError inside one of this package's typed errors.
func baseOf(err error) *APIError {
	switch e := err.(type) {
	case *APIError:
		return e
	case *AuthError:
		return &e.APIError
	case *RateLimitError:
		return &e.APIError
	case *ContextLengthError:
		return &e.APIError
	case *ServerError:
		return &e.APIError
	case *BadResponseError:
		return &e.APIError
	case *TransportError:
		return &e.APIError
	case *TimeoutError:
		return &e.APIError
	}
	return nil
}

const snippetMax = 120 // characters of a body kept in an error

// snippet returns the start of body as a short single-line string with the
// secrets redacted: invalid UTF-8 and control characters become spaces,
// runs of spaces collapse, and a cut body ends in "…".
func snippet(body []byte, r *redactor) string {
	// Redact before cutting, so a cut cannot leave half a key behind.
	s := r.redact(string(body))
	var b strings.Builder
	n := 0
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			r = ' '
		}
		if r == ' ' {
			if space || n == 0 {
				continue
			}
			space = true
		} else {
			space = false
		}
		if n == snippetMax {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimRight(b.String(), " ")
}
