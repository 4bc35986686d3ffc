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

// Environment variables read by NewOpenAIFromEnv: those the official
// OpenAI SDKs read.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// OpenAI is a Client for any server speaking the OpenAI chat-completions
// protocol (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter, …). It is
// safe for concurrent use; its settings are fixed at construction.
type OpenAI struct {
	settings
	endpoint string // the base URL's path + "/chat/completions", its query kept
	models   string // the base URL's path + "/models", its query kept
}

var _ Client = (*OpenAI)(nil)

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
// (OPENAI_API_KEY and OPENAI_BASE_URL, read through getenv, e.g.
// os.Getenv), then from opts, which override it. It reads no other
// variable: the model comes from WithModel, the backoff from WithBackoff.
func NewOpenAIFromEnv(getenv func(string) string, opts ...Option) (*OpenAI, error) {
	return NewOpenAI(append(envOptions(getenv, EnvAPIKey, EnvBaseURL), opts...)...)
}

// envOptions returns the options the environment gives: the key and the
// base URL from the variables named.
func envOptions(getenv func(string) string, keyEnv, baseEnv string) []Option {
	return []Option{WithAPIKey(getenv(keyEnv)), WithBaseURL(getenv(baseEnv))}
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
// more without it (see Response.Structured). req.Tools go as "tools" and
// req.ToolChoice as "tool_choice" (not sent for auto), once
// Request.CheckTools accepts them (else the error wraps its
// *ToolDefError); the answer's tool_calls come back in Response.ToolCalls.
// The error, if any, is one of the typed errors of this package, or wraps
// ctx.Err() when the context ended.
func (c *OpenAI) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.complete(ctx, req, c.encode, c.attempt)
}

// encode builds the JSON body of req; schemaSent says whether it carries
// req.Schema.
func (c *OpenAI) encode(req Request) (body []byte, schemaSent bool, err error) {
	wire := c.wire(req)
	b, err := encodeBody(&wire)
	return b, req.Schema != nil, err
}

// wire returns the request body of req, to be encoded.
func (c *OpenAI) wire(req Request) chatRequest {
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
	wire.Tools, wire.ToolChoice = openAITools(req.Tools, req.ToolChoice)
	return wire
}

// openAITools maps a Request's tools and tool choice (checked by
// CheckTools) onto the "tools" and "tool_choice" members; with no tools,
// neither is sent.
func openAITools(tools []ToolDef, choice ToolChoice) ([]openAITool, any) {
	if len(tools) == 0 {
		return nil, nil
	}
	out := make([]openAITool, len(tools))
	for i, d := range tools {
		out[i] = openAITool{Type: "function", Function: openAIFunction{
			Name: d.Name, Description: d.Description, Parameters: d.parameters(),
		}}
	}
	switch choice.Mode {
	case ToolChoiceNone, ToolChoiceRequired:
		return out, string(choice.Mode)
	case ToolChoiceTool:
		c := openAIToolChoice{Type: "function"}
		c.Function.Name = choice.Name
		return out, c
	}
	return out, nil
}

// encodeRequest encodes the body of a request to either provider with
// encoding/json, without HTML escaping: OpenAI's messages go out as they
// were written ("<" stays "<"), as Compile's JSON prints them
// (Anthropic's messages escape it: their MarshalJSON does). encodeBody
// writes the same bytes faster; this is its reference, and gives the
// error of a request it cannot write.
func encodeRequest(wire any) ([]byte, error) {
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
	hresp.Body = watchBody(ctx, hresp.Body)
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return nil, false, c.statusError(hresp)
	}
	reached(req, hresp)
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
