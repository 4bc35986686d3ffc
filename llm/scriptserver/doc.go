// Package scriptserver serves a scripted model over HTTP on the loopback
// interface, in the OpenAI chat-completions and the Anthropic Messages
// wire formats, so that a program runs offline against the real
// llm.OpenAI and llm.Anthropic clients: retries, streaming and error
// handling included. Package demo runs on it, and package llmtest wraps
// it for tests (a server closed and verified when the test ends).
//
//	srv, err := scriptserver.Start() // Close stops it
//	srv.Reply(scriptserver.Answer("not JSON"))
//	srv.When("failed validation", scriptserver.Answer(`{"ok":true}`))
//	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("m"))
//
// A request is answered by the first matching rule (When: the last message
// contains a text; for a request that ends in tool results, any of them:
// llm.MatchText), else the next queued reply (Reply), else the fallback
// (Otherwise). An unscripted request gets a 501 whose body says so (501, not
// 500, so that a client does not retry it); Verify reports it, together
// with queued replies never consumed and rules never matched.
//
// Replies: Answer (streamed as one chunk per word when the request asks for
// a stream, with a usage chunk when stream_options.include_usage is set),
// Calls (tool calls made in parallel, built with Call; see
// Reply.ToolCalls for their shape on each wire, streamed and not),
// RateLimited (429 with Retry-After), Error (any status with an OpenAI
// error document), Unauthorized (a 401 that echoes the key it got, to test
// redaction), ContextLengthExceeded, HTML, Truncated (half a JSON document,
// or a stream without its end), Hangup (connection closed without an
// answer), Overloaded (529), StreamError (half an answer, then an error
// event), or a Reply literal with a raw Body, headers, Delay and
// ChunkDelay. Token usage is estimated at about four characters per token
// unless the reply sets it.
//
// Every request is recorded (Requests) with its decoded model, messages,
// temperature and stream flags, max_tokens, structured-output schema,
// tools and tool choice,
// and its headers with the Authorization and x-api-key values masked;
// WithAPIKey makes the server check the key itself.
//
// POST /v1/messages (give the client AnthropicURL) answers in the
// Anthropic format from the same script: streamed as message_start, ping,
// one content block of text_delta events (or, when the request forces a
// tool and the answer is a JSON object, the tool's input as
// input_json_delta events), a tool_use block per tool call,
// message_delta and message_stop; errors as Anthropic error documents. A
// request without anthropic-version or max_tokens, whose roles do not
// alternate, or whose tool_use and tool_result blocks do not pair up
// (each call answered in the next message, results first in theirs),
// gets the 400 Anthropic would send and is reported by Verify. Its
// messages are recorded in the OpenAI shape: tool_use blocks as
// ToolCalls, tool_result blocks as messages of role "tool". GET /v1/models serves the list
// Models sets, in the Anthropic format (paged by limit and after_id) when
// the request has an anthropic-version header, else in the OpenAI one.
//
// The package does not import testing: Verify takes llm.TB, which
// *testing.T satisfies.
package scriptserver
