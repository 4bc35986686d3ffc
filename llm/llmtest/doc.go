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
// temperature and stream flags, and its headers with the Authorization
// value masked; WithAPIKey makes the server check the key itself.
package llmtest
