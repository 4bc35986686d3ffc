// Package llmtest is package scriptserver for tests: a scripted model
// served over HTTP on the loopback interface, in the OpenAI and Anthropic
// wire formats, that is closed when the test ends and fails the test when
// part of its script went unused.
//
//	srv := llmtest.NewServer(t) // closed and verified when the test ends
//	srv.Reply(llmtest.Answer("not JSON"))
//	srv.When("failed validation", llmtest.Answer(`{"ok":true}`))
//	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("m"))
//
// Server, Reply and Request are scriptserver's types, and the reply
// helpers (Answer, Error, RateLimited, …) build the same replies:
// package scriptserver documents how a request is answered, the replies
// and the Anthropic format. NewServer runs Verify when the test ends,
// unless the test failed already or WithoutVerify was given; New gives a
// server stopped with Close.
//
// The package does not import testing (NewServer takes the small TB
// interface that *testing.T satisfies). A program that serves a script
// outside tests, such as 'tract demo', uses scriptserver itself.
package llmtest
