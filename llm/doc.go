// Package llm talks to chat models. It defines the Client interface tract
// calls (Complete: a Request of messages in, a Response with the answer and
// its token Usage out), two implementations over net/http — OpenAI for the
// OpenAI-compatible protocol and Anthropic for Anthropic's Messages API —
// and Scripted, an in-process Client for tests. The subpackage llmtest
// serves both wire formats from a script over HTTP, for tests that should
// exercise the real clients.
//
// NewFromEnv builds the client of a provider: the one named (a --provider
// flag), else TRACT_PROVIDER, else "anthropic" for a model named
// "claude-…", else "openai" (ChooseProvider). Both clients implement
// Describer and ModelLister (ListModels: GET {base}/models, every page).
//
// # The OpenAI-compatible client
//
// OpenAI speaks the chat-completions protocol (POST {base}/chat/completions)
// that OpenAI, Ollama, vLLM, the llama.cpp server, OpenRouter and others
// implement. NewOpenAIFromEnv reads its settings through the getenv function
// it is given (os.Getenv in a program, a map in a test: no hidden global
// state), then applies options, which win:
//
//	OPENAI_API_KEY   the key, sent as "Authorization: Bearer KEY"
//	OPENAI_BASE_URL  default https://api.openai.com/v1; for Ollama
//	                 http://localhost:11434/v1 (a trailing slash is fine)
//	TRACT_MODEL      the model of requests that name none (tract's --model
//	                 flag, passed as WithModel, overrides it)
//	TRACT_BACKOFF    the backoff between retries, "BASE" or "BASE,MAX"
//	                 (default 500ms,20s), as WithBackoff
//
// A model is required. A key is required only with OpenAI's own base URL: a
// local server usually needs none, and then no Authorization header is
// sent. Missing settings are reported together, as *ConfigError values whose
// messages name what to set, e.g.
//
//	no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs none)
//	no model: set TRACT_MODEL or pass --model
//
// Options given an empty string leave a setting unchanged, so an unset flag
// can be passed through as is.
//
// A Request with OnDelta set is streamed: the client asks for server-sent
// events with usage in the last chunk (stream_options.include_usage), calls
// OnDelta with each piece of text, and returns the whole answer as well. A
// server that ignores the stream flag and answers with one JSON document is
// accepted; its text arrives as a single delta.
//
// # The Anthropic client
//
// Anthropic sends POST {base}/v1/messages with the headers x-api-key and
// anthropic-version: 2023-06-01. NewAnthropicFromEnv reads
//
//	ANTHROPIC_API_KEY   the key (required with Anthropic's own base URL)
//	ANTHROPIC_BASE_URL  default https://api.anthropic.com (a base URL that
//	                    already ends in /v1 is not given a second one)
//	TRACT_MODEL, TRACT_BACKOFF  as for OpenAI
//
// and takes the same options. max_tokens is always sent: WithMaxTokens,
// else DefaultAnthropicMaxTokens (4096). The messages are mapped as the API
// requires: system messages, wherever they are, are joined (by blank
// lines) into the top-level system field; consecutive messages of one role
// are merged into one, joined by a blank line; any role other than
// assistant is sent as the user's. The shapes beyond text become content
// blocks: text parts text blocks, image_url parts image blocks (base64
// from a data: URL, else by URL), PDF file parts documents, tool calls
// tool_use blocks, tool messages tool_result blocks; audio parts, files by
// id and other documents are refused before the send with an error
// wrapping ErrUnsupported, and names and Extra members are not sent. A streamed answer is read from the
// events message_start, content_block_start, content_block_delta
// (text_delta), content_block_stop, message_delta (stop reason, output
// tokens), message_stop and ping; an error event in the stream ends the
// call with the typed error its type stands for (overloaded_error: a
// *ServerError with status 529, retried when no text was delivered yet).
// Usage sums input_tokens and the cache tokens into PromptTokens and keeps
// the cache tokens apart too; FinishReason is Anthropic's stop_reason.
//
// # Structured output
//
// A Request with a Schema asks for an answer constrained to it: the
// OpenAI client sends response_format {"type": "json_schema",
// "json_schema": {"name", "schema", "strict"}}; the Anthropic client
// sends a tool whose input_schema is the schema and forces it with
// tool_choice {"type": "tool", "name": …}, and returns the tool's input
// (JSON text) as the answer. Anthropic's tools take only schemas of
// objects: another schema is not sent (Response.Structured is
// StructuredUnsupported). The forced tool was chosen over Anthropic's JSON
// output format because it works with every Claude model and needs no
// beta header. A server that refuses the schema (a 400 or 422 whose
// message names response_format, json_schema, a schema or a tool) is asked
// once more without it, and Response.Structured says StructuredRejected,
// with the refusal in StructuredError. The answer still needs validating:
// a server may ignore the schema.
//
// # Messages
//
// A Message is an OpenAI chat message. Message{Role: "user", Content: "hi"}
// is the common case; the other fields carry the rest of what OpenAI
// clients send: Parts (content as an array of text, image_url, input_audio
// and file parts), ToolCalls (an assistant's function calls; with no text
// its content is sent as null), ToolCallID (the call a tool message
// answers), Name, and Extra (any other member, sent as is). MarshalJSON
// writes the members in one documented order; UnmarshalJSON reads them in
// any, refusing a shape it cannot carry with a *FieldError that names the
// member ("content[1].type") and wraps ErrUnsupported. Text renders a
// message for people: the text, a short line per other part and per tool
// call.
//
// The client sends the messages of a Request exactly as MarshalJSON writes
// them (without HTML escaping), and returns an answer's tool calls in
// Response.ToolCalls, those of a stream assembled from their pieces.
// Answers are read leniently: members tract does not keep ("refusal",
// "annotations") are ignored.
//
// # Errors
//
// Every failure of a call is one of these, each usable with errors.As, and
// each unwrapping to an *APIError that carries the HTTP status, the
// server's error type, code and message, and the number of attempts made:
//
//	*AuthError           401 or 403: wrong, missing or unauthorised key
//	                     (its message names the key's variable)
//	*RateLimitError      429 after every retry (RetryAfter: what the server asked)
//	*ContextLengthError  the conversation exceeds the model's context window
//	*ServerError         5xx (500, 502, 503, 504 and Anthropic's 529
//	                     overloaded_error after every retry)
//	*BadResponseError    not a chat completion: HTML, empty body, invalid or
//	                     truncated JSON, no choices, a stream cut short;
//	                     Reason says what, Snippet shows the start of the body
//	*TransportError      no answer: refused, reset, unreachable; Err is the cause
//	*APIError            any other rejection (400, 404, …)
//
// When the context ends, the error wraps ctx.Err() instead (errors.Is with
// context.Canceled or context.DeadlineExceeded) and is none of the above.
// Messages state the attempt count when there was more than one: "model
// server error (HTTP 503) after 5 attempts: overloaded".
//
// # Transport retries
//
// Retries here are about delivery and are separate from tract's validation
// attempts: a call that succeeds after retries is one attempt to the
// validators. Retried: 429 (except code insufficient_quota), 500, 502, 503,
// 504, 529, 408, and failures with no HTTP answer (connection refused or reset,
// EOF, timeouts). Not retried: 401, 403, 400, 404, other 4xx, 501 and other
// 5xx, context-length errors, bad responses, a host name that does not
// resolve, certificate errors, and anything after the context ended.
//
// A call makes at most 1+WithMaxRetries requests (default 1+4). Before
// retry n it waits a random duration in [0, min(max, base·2^(n-1))] ("full
// jitter"; WithBackoff, default 500ms and 20s), or what the server asked for
// with retry-after-ms or Retry-After (seconds or an HTTP date), capped at
// MaxRetryAfter (60s). WithOnRetry reports each retry; WithSleep and
// WithJitter make the waits testable without waiting.
//
// # Caveats
//
//   - The API key is never logged or stored. It, and the credentials
//     written into the base URL (userinfo; query parameters whose names
//     contain key, token, secret, password, sig, auth or credential, when
//     their values have 8 characters or more), are replaced by
//     "[REDACTED]" wherever they would appear in an error: server messages
//     that echo them, body snippets, and the URL of a network error. Every
//     encoding these reach error text in is redacted: as is,
//     percent-encoded (any escaped characters, either case of hex digit,
//     a space as "+"), Go- and JSON-quoted, and base64 at any offset (a
//     Basic authorization header echoed back), where the few characters at
//     either end that mix in neighbouring bytes remain. A server that
//     echoes the key otherwise transformed (OpenAI masks the middle itself)
//     is outside its reach.
//   - A base URL's query is sent with every request, after the path:
//     https://host/openai/deployments/x?api-version=2024-02-01 calls
//     https://host/openai/deployments/x/chat/completions?api-version=2024-02-01,
//     query and percent-encoding as written. A base URL with a fragment
//     ("#…") is a *ConfigError: no request would carry it, and a "#"
//     inside a query value must be written %23.
//   - A streamed call is not retried once part of the answer went to
//     OnDelta: the caller may have shown it already. The error then reports
//     the broken stream, and the text received so far is lost to the
//     caller unless OnDelta kept it.
//   - Only the first choice is read (index 0); requests never ask for more.
//   - Stream lines are taken one event per "data:" line; OpenAI-compatible
//     servers do not split a chunk over several lines. A stream that ends
//     without "[DONE]" but with a finish_reason is accepted; one without
//     either is a *BadResponseError (truncated).
//   - Bodies, and the text of a streamed answer, are read up to 32 MiB
//     (more is a *BadResponseError); error bodies up to 1 MiB.
//   - No overall timeout is set: bound a call with its context. A
//     WithHTTPClient client with a Timeout would cut long streams.
//   - An empty answer is a valid Response; deciding that it is unusable is
//     the caller's (or a validator's) business.
//
// # Testing
//
// Scripted answers from a queue and from rules ("answer Y when the last
// message contains Z", checked first) without any HTTP, streams through
// OnDelta in a few pieces, records requests, and can return any error,
// including this package's typed ones. llmtest.NewServer does the same over
// HTTP in the OpenAI wire format (streamed and not), can serve 429 with
// Retry-After, 500, 401, HTML, truncated JSON and truncated streams, and
// fails the test at cleanup when a scripted reply was never used. It speaks
// the Anthropic format on /v1/messages (AnthropicURL), with Overloaded (529)
// and StreamError (an error event mid-stream) replies, and serves a model
// list (Models) on /v1/models in either format.
package llm
