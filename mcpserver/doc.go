// Package mcpserver offers a tract repository to agents as a Model
// Context Protocol (MCP) server, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): an agent reads its own
// history (which attempts failed and why, what the model is sent), goes
// back to a restore point, forks to try another approach, leaves notes,
// and answers the escalations that wait in the repository. `tract mcp`
// runs it over stdio; `tract serve` mounts its streamable HTTP handler
// at /mcp.
//
// # Tools
//
// Every tool has an input and an output schema, and its structured
// result has the shape of the matching CLI command's --json output
// (docs/json.md); where the CLI prints an array, the tool's result is an
// object holding that array under a name (compile's "messages",
// branches' "branches", escalations' "escalations"), since MCP results
// are objects.
//
// Reading: log, show, compile, status, search, stats, branches,
// escalations. Writing: branch (create one at a revision), reset (soft
// only: the commits left behind stay as orphans; a hard reset, which
// erases, is never offered), note (commit a note, kind note, that the
// model is not sent) and answer_escalation. ReadOnly leaves the writing
// tools out.
//
// Every write is one transaction whose ref move is a compare-and-swap: a
// reset or note given "expect" (the tip the agent read) moves the branch
// only if it still stands there, and otherwise fails with the same
// conflict as the CLI (*tract.ConflictError); branch refuses a name that
// exists; of two answers to an escalation one wins. A failed call is a
// tool result with isError set and a message that says what was wrong
// and what to call next, never a protocol error.
//
// # Resources
//
// tract://commit/{rev} (a template: a full or abbreviated hash, or any
// revision) reads one commit as show does; tract://branch/{+name} a
// branch's history as log does; tract://branches lists the branches.
//
// # Caveats
//
//   - Each call runs its own short transactions and builds its whole
//     result before the SDK writes it: no transaction or lock is held
//     across the protocol's I/O. A long log or a large search is bounded
//     by its limit (at most MaxLimit), not streamed.
//   - Text is returned as stored, however long: a commit of megabytes is
//     a result of megabytes.
//   - The server carries no authentication of its own: over HTTP, put it
//     behind a check of the caller (tract serve's guard requires its
//     token on /mcp). The SDK's handler refuses a request whose Host is
//     not loopback on a loopback listener (DNS rebinding) and NewHandler
//     adds Go's cross-origin protection. A client's open stream of server
//     events holds its HTTP connection: a server shutting down calls
//     Handler.Close first.
package mcpserver
