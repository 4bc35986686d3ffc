// Package llm talks to chat models. It defines the [Client] interface tract
// calls (Complete: a [Request] of messages in, a [Response] with the answer
// and its token [Usage] out), two implementations over net/http — [OpenAI]
// for the OpenAI-compatible protocol (OpenAI, Ollama, vLLM, the llama.cpp
// server, OpenRouter, …) and [Anthropic] for Anthropic's Messages API — and
// [Scripted], an in-process Client for tests. The subpackage llmtest serves
// both wire formats from a script over HTTP, for tests that should exercise
// the real clients.
//
//	client, err := llm.NewOpenAI(llm.WithBaseURL("http://localhost:11434/v1"), llm.WithModel("llama3"))
//	resp, err := client.Complete(ctx, llm.Request{
//		Messages: []llm.Message{{Role: "user", Content: "hi"}},
//	})
//	fmt.Println(resp.Content)
//
// [NewFromEnv] builds the client of a named provider (else "anthropic" for
// a model named "claude-…", else "openai": [ChooseProvider]);
// [NewOpenAIFromEnv] and [NewAnthropicFromEnv] read their provider's
// variables (OPENAI_API_KEY and OPENAI_BASE_URL, ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL) through the getenv function they are given, and
// options win. The model ([WithModel]) and the backoff ([WithBackoff]) are
// options only: the package reads no other variable. Missing settings are
// reported together as [*ConfigError] values.
//
// A [Message] is an OpenAI chat message, parts and tool calls included. A
// Request with OnDelta set is streamed; one with a [Schema] asks for
// structured output (Response.Structured says what became of it); one
// with Tools ([ToolDef], checked by [Request.CheckTools]) offers tools,
// whose calls come back in Response.ToolCalls. Every failure of a call
// that was sent is a typed error that unwraps to an [*APIError]:
// [*AuthError], [*RateLimitError], [*ContextLengthError], [*ServerError],
// [*BadResponseError], [*TransportError] or [*TimeoutError]; when the
// context ends the error wraps ctx.Err() instead. APIError.Setup names a
// failure that shows the client's setup to be wrong (no server at the base
// URL, a refused key, no endpoint, an HTML page, an unknown model), which
// the same request would meet again. Transient failures (429, 5xx, no
// answer) are retried with full-jitter backoff ([WithMaxRetries],
// [WithBackoff]), apart from tract's validation attempts; a refused
// connection to a server never reached is retried once. Every call is
// bounded: no byte for 2 minutes ([WithIdleTimeout]) or 10 minutes in all
// ([WithCallTimeout]) ends it with a [*TimeoutError]. See the Example functions for calls,
// streaming and scripted tests.
//
// Settings, the Anthropic mapping, structured output, tools, the message
// shapes, the error classification, what is retried and the test servers
// are documented in docs/llm.md.
//
// # Caveats
//
//   - The API key, and credentials in the base URL, are redacted from every
//     error: as they are, percent-encoded, quoted or in base64 (a key a
//     server echoes otherwise transformed is out of reach); those written
//     in a URL, at any length (RedactURLs; see docs/llm.md).
//   - A streamed call is not retried once part of the answer went to
//     OnDelta; the text received so far is lost unless OnDelta kept it.
//   - The bounds end a call that is slow as well as one that hangs: a
//     local model that takes minutes to load needs a longer
//     WithIdleTimeout (or 0, and a context to bound it).
//   - An empty answer is a valid Response; whether it is usable is the
//     caller's (or a validator's) business.
package llm
