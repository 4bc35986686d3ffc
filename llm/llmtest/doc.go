// Package llmtest serves the OpenAI chat-completions wire format from a
// script, over real HTTP on the loopback interface, so that an agent built
// on tract (or tract itself) can be tested offline against the real
// llm.OpenAI client: retries, streaming and error handling included. The
// same script answers the Anthropic Messages format (give llm.Anthropic
// [Server.AnthropicURL]) and serves a model list.
//
//	srv := llmtest.NewServer(t) // closed and verified when the test ends
//	srv.Reply(llmtest.Answer("not JSON"))
//	srv.When("failed validation", llmtest.Answer(`{"ok":true}`))
//	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("m"))
//
// A request is answered by the first matching rule ([Server.When]: the last
// message contains a text), else the next queued reply ([Server.Reply]),
// else the fallback ([Server.Otherwise]). Replies cover answers (streamed
// when asked), rate limits, server and auth errors, HTML, truncated bodies
// and streams, hang-ups, Anthropic's overload and mid-stream errors. Every
// request is recorded ([Server.Requests]) with its headers' keys masked.
//
// [Server.Verify] reports unscripted requests, replies never consumed and
// rules never matched; [NewServer] runs it when the test ends unless the
// test failed already or [WithoutVerify] was given. [New] gives a server for
// use outside tests, stopped with Close. The package does not import
// testing ([TB] is the small interface *testing.T satisfies), so a program
// can serve a script without linking the test framework in.
//
// Every reply, what is recorded and how the Anthropic format and model
// lists are served are documented in docs/llm.md; the package Example
// scripts a rate limit, an invalid answer and a steered retry.
package llmtest
