package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Defaults of the Anthropic client.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// AnthropicVersion is the API version sent as the anthropic-version header.
	AnthropicVersion = "2023-06-01"
	// DefaultAnthropicMaxTokens is the max_tokens of a request when
	// WithMaxTokens sets none: the Messages API requires the field.
	DefaultAnthropicMaxTokens = 4096
)

// Environment variables read by NewAnthropicFromEnv: those the official
// Anthropic SDKs read.
const (
	EnvAnthropicAPIKey  = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// Anthropic is a Client for Anthropic's Messages API (POST
// {base}/v1/messages). It shares the OpenAI client's options, retries,
// errors and key redaction; see "The Anthropic client" in docs/llm.md for
// how it maps a Request onto the API. It is safe for concurrent use; its
// settings are fixed at construction.
type Anthropic struct {
	settings
	endpoint string // {base}/v1/messages, the base URL's query kept
	models   string // {base}/v1/models
}

var _ Client = (*Anthropic)(nil)

// NewAnthropic returns an Anthropic client configured by opts (the same
// options as NewOpenAI; WithBaseURL defaults to DefaultAnthropicBaseURL).
// It fails with a *ConfigError when no model is set, or when no API key is
// set while the base URL is Anthropic's own; both problems are reported
// at once, joined.
func NewAnthropic(opts ...Option) (*Anthropic, error) {
	c := &Anthropic{settings: defaultSettings(DefaultAnthropicBaseURL, EnvAnthropicAPIKey)}
	for _, opt := range opts {
		opt(&c.settings)
	}
	if c.maxTokens == 0 {
		c.maxTokens = DefaultAnthropicMaxTokens
	}
	u, errs := c.settings.check(EnvAnthropicBaseURL, DefaultAnthropicBaseURL)
	if u != nil {
		// The base URL is the server's root; one that already ends in
		// /v1 (as OpenAI-style base URLs do) is taken as is.
		prefix := "/v1"
		if strings.HasSuffix(strings.TrimRight(u.EscapedPath(), "/"), "/v1") {
			prefix = ""
		}
		c.baseURL, c.endpoint = baseEndpoint(u, prefix+"/messages")
		_, c.models = baseEndpoint(u, prefix+"/models")
	}
	if c.apiKey == "" && c.baseURL == DefaultAnthropicBaseURL {
		errs = append(errs, &ConfigError{Setting: "API key", msg: "no API key: set " + EnvAnthropicAPIKey +
			" (or " + EnvAnthropicBaseURL + " for a server that needs none)"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// NewAnthropicFromEnv is NewAnthropic configured from the environment
// first (ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, read through getenv,
// e.g. os.Getenv), then from opts, which override it. It reads no other
// variable: the model comes from WithModel, the backoff from WithBackoff.
func NewAnthropicFromEnv(getenv func(string) string, opts ...Option) (*Anthropic, error) {
	return NewAnthropic(append(envOptions(getenv, EnvAnthropicAPIKey, EnvAnthropicBaseURL), opts...)...)
}

// Provider returns "anthropic".
func (c *Anthropic) Provider() string { return ProviderAnthropic }

// DefaultModel returns the model used by requests that name none.
func (c *Anthropic) DefaultModel() string { return c.model }

// BaseURL returns the server's base URL, without trailing slash on its
// path, and with its query, if it has one.
func (c *Anthropic) BaseURL() string { return c.baseURL }

// MaxTokens returns the max_tokens sent with every request.
func (c *Anthropic) MaxTokens() int { return c.maxTokens }

// Complete sends req to the Messages API and returns the answer, streaming
// it through req.OnDelta when that is set. Retries, errors, the checks of
// req.Tools and the handling of a refused req.Schema are those of
// OpenAI.Complete; 529 (overloaded_error) is retried like a 503. The
// answer's tool_use blocks come back in Response.ToolCalls, except a call
// of the schema's tool, whose input is the answer's Content.
func (c *Anthropic) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.complete(ctx, req, c.encode, c.attempt)
}

// encode builds the JSON body of req: system messages joined into the
// top-level system field, the others merged so that roles alternate, the
// tools, and a schema of an object as a tool (see anthropicTools).
func (c *Anthropic) encode(req Request) (body []byte, schemaSent bool, err error) {
	wire, schemaSent, err := c.wire(req)
	if err != nil {
		return nil, false, err
	}
	b, err := encodeBody(&wire)
	return b, schemaSent, err
}

// wire returns the request body of req, to be encoded.
func (c *Anthropic) wire(req Request) (wire anthropicRequest, schemaSent bool, err error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	system, msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return wire, false, fmt.Errorf("anthropic: %w", err)
	}
	wire = anthropicRequest{
		Model:       model,
		MaxTokens:   c.maxTokens,
		System:      system,
		Messages:    msgs,
		Temperature: req.Temperature,
		Stream:      req.OnDelta != nil,
	}
	wire.Tools, wire.ToolChoice, schemaSent = anthropicTools(req)
	return wire, schemaSent, nil
}

// anthropicTools maps a Request's tools, tool choice and schema (checked
// by CheckTools) onto "tools" and "tool_choice": each ToolDef a tool whose
// input_schema is its parameters; ToolChoiceNone {"type": "none"},
// ToolChoiceRequired {"type": "any"}, ToolChoiceTool {"type": "tool",
// "name"}, auto not sent. A schema of an object is one more tool, whose
// input is the answer (schemaSent). Alone, it is forced; beside the
// caller's tools it cannot be, as only one tool can: with auto or
// ToolChoiceRequired the choice is "any" (the model calls one of the
// tools or answers through the schema's), with ToolChoiceNone the schema's
// tool is forced (the others stay listed but cannot be called), and with
// ToolChoiceTool the caller's tool stays forced (the schema's is listed,
// and that answer is not structured).
func anthropicTools(req Request) (tools []anthropicTool, choice *anthropicToolChoice, schemaSent bool) {
	for _, d := range req.Tools {
		tools = append(tools, anthropicTool{Name: d.Name, Description: d.Description, InputSchema: d.parameters()})
	}
	mode := req.ToolChoice.Mode
	switch {
	case mode == ToolChoiceNone && len(tools) > 0:
		choice = &anthropicToolChoice{Type: "none"}
	case mode == ToolChoiceRequired:
		choice = &anthropicToolChoice{Type: "any"}
	case mode == ToolChoiceTool:
		choice = &anthropicToolChoice{Type: "tool", Name: req.ToolChoice.Name}
	}
	s := req.Schema
	if s == nil || !isObjectSchema(s.Schema) {
		return tools, choice, false
	}
	tools = append(tools, anthropicTool{Name: s.Name, Description: schemaToolDescription, InputSchema: s.Schema})
	switch {
	case mode == ToolChoiceTool:
	case len(req.Tools) == 0 || mode == ToolChoiceNone:
		choice = &anthropicToolChoice{Type: "tool", Name: s.Name}
	default:
		choice = &anthropicToolChoice{Type: "any"}
	}
	return tools, choice, true
}

// schemaToolDescription describes the tool a schema is sent as.
const schemaToolDescription = "Give the answer as this tool's input."

// isObjectSchema reports whether a JSON Schema describes an object, the
// only kind a tool's input_schema may be.
func isObjectSchema(doc json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(doc, &s) == nil && s.Type == "object"
}

// header sets the headers of every request to the API.
func (c *Anthropic) header(h http.Header) {
	h.Set("anthropic-version", AnthropicVersion)
	h.Set("User-Agent", c.userAgent)
	if c.apiKey != "" {
		h.Set("x-api-key", c.apiKey)
	}
}

// attempt makes one HTTP request. delivered reports whether any part of the
// answer reached req.OnDelta, after which the call must not be retried.
func (c *Anthropic) attempt(ctx context.Context, body []byte, req Request) (resp *Response, delivered bool, err error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, false, c.transportError(err)
	}
	c.header(hreq.Header)
	hreq.Header.Set("Content-Type", "application/json")
	if req.OnDelta != nil {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
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
	tool := ""
	if req.Schema != nil {
		tool = req.Schema.Name
	}
	if req.OnDelta != nil && isEventStream(hresp.Header.Get("Content-Type")) {
		return c.readStream(hresp, tool, req.OnDelta)
	}
	resp, err = c.readJSON(hresp, tool)
	if err != nil {
		return nil, false, err
	}
	if req.OnDelta != nil && resp.Content != "" {
		req.OnDelta(resp.Content)
		delivered = true
	}
	return resp, delivered, nil
}
