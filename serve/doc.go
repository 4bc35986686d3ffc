// Package serve is tract's recording proxy: an http.Handler that speaks a
// model's own wire — the OpenAI chat-completions API (POST
// /v1/chat/completions, GET /v1/models) and Anthropic's Messages API
// (POST /v1/messages) — forwards every call to its upstream, and records
// each call in a repository as commits: the request's messages, then the
// answer with its model and usage (or an error commit when the call
// failed). `tract serve` runs it.
//
// A client resends the whole conversation on every call, so the Handler
// records only what is new: a request whose messages extend a branch is
// appended to it, and one that leaves a recorded conversation somewhere
// in its middle forks a branch there. The matching costs O(messages in
// the request) map lookups, whatever the size of the repository: each
// conversation prefix is identified by a chained hash of its messages,
// and an index from those hashes to commits is read from the branches
// when the Handler starts and kept up to date by its own writes (a
// message the client resends byte for byte is known by the hash of its
// bytes, and not decoded again). Every write is one transaction whose
// ref move is a compare-and-swap; no transaction or lock is held across
// an upstream call. docs/proxy.md
// gives the rules, the headers (X-Tract-Branch, X-Tract-Commit) and
// trailers, and the security model.
//
// A request with X-Tract-Validate (or any request, with
// WithDefaultValidation) is answered by tract's validated turn instead
// of being passed through: its messages are recorded, the turn runs on
// their branch (tract.Tract.Generate: steering, retries, purify), and
// the client gets the accepted answer alone in its wire's shape, or a
// StatusExhausted error naming the diagnoses.
//
// A program that serves the Handler for long should call
// tract.Tract.Linger for as long as it serves (`tract serve` does): the
// repository's file then stays open between calls instead of being
// opened again for each, and another process still gets it within about
// a millisecond when it asks.
//
// # Caveats
//
//   - The index is the Handler's: a second process writing the same
//     conversations is noticed when a write meets the branch it moved
//     (the Handler then reads that branch again), not before, so two
//     servers on one repository may store a message twice, never lose one.
//   - A stream passed through is recorded when it ends, after its
//     headers went: its branch and commit come as HTTP trailers
//     (declared in the Trailer header) and as comment lines at the end
//     of the event stream, which clients that read headers alone (fetch,
//     the SDKs) do not see. The end of the stream waits for the record.
//   - Anthropic content blocks other than text, images, tool_use and
//     tool_result (thinking, documents, …) reach the upstream but are not
//     recorded.
package serve
