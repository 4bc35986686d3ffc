// Package llmtest serves the OpenAI chat-completions wire format from a
// script, over real HTTP on the loopback interface, so that an agent built
// on tract (or tract itself) can be tested offline against the real
// llm.OpenAI client: retries, streaming and error handling included.
//
//	srv := llmtest.NewServer(t) // closed and verified when the test ends
//	srv.Reply(llmtest.Answer("not JSON"))
//	srv.When("failed validation", llmtest.Answer(`{"ok":true}`))
//	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("m"))
//
// A request is answered by the first matching rule (When: the last message
// contains a text), else the next queued reply (Reply), else the fallback
// (Otherwise). An unscripted request gets a 501 whose body says so, and
// Verify reports it, together with queued replies never consumed and rules
// never matched. NewServer runs Verify when the test ends, unless the test
// failed already or WithoutVerify was given; New gives a server for use
// outside tests, stopped with Close. The package does not import testing
// (NewServer and Verify take the small TB interface that *testing.T
// satisfies), so a program such as 'tract demo' can serve a script
// without linking the test framework in.
//
// Replies: Answer (streamed as one chunk per word when the request asks for
// a stream, with a usage chunk when stream_options.include_usage is set),
// RateLimited (429 with Retry-After), Error (any status with an OpenAI
// error document), Unauthorized (a 401 that echoes the key it got, to test
// redaction), ContextLengthExceeded, HTML, Truncated (half a JSON document,
// or a stream without its end), Hangup (connection closed without an
// answer), or a Reply literal with a raw Body, headers, Delay and
// ChunkDelay. Token usage is estimated at about four characters per token
// unless the reply sets it.
//
// Every request is recorded (Requests) with its decoded model, messages,
// temperature and stream flags, max_tokens and structured-output schema,
// and its headers with the Authorization and x-api-key values masked;
// WithAPIKey makes the server check the key itself.
//
// The same script answers the Anthropic Messages format on
// POST /v1/messages (give the client AnthropicURL): streamed as
// message_start, ping, one content block of text_delta events (or, when
// the request forces a tool and the answer is a JSON object, the tool's
// input as input_json_delta events), message_delta and message_stop;
// errors as Anthropic error documents. A request without
// anthropic-version or max_tokens, or whose roles do not alternate, gets
// the 400 Anthropic would send and is reported by Verify. Overloaded
// answers 529 overloaded_error; StreamError sends half an answer, then an
// error event (in the OpenAI format, a chunk with an error member).
//
// GET /v1/models serves the list Models sets, in the Anthropic format
// (paged by limit and after_id) when the request has an anthropic-version
// header, else in the OpenAI one.
package llmtest
