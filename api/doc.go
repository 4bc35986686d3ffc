// Package api serves a repository as JSON over HTTP: the routes under
// /api/ that 'tract serve' mounts beside its proxy, for the web view and
// for any program that would rather not parse the CLI's output.
//
// Every route answers with the shape the CLI's --json prints for the
// same question (docs/json.md): /api/status is 'tract status --json',
// /api/log is 'tract log --json', /api/commits/REV is 'tract show
// --json', and so on. The lists that grow with the history (log, log
// --all, the graph, reflog, events) come a page at a time: limit=N (100
// by default, at most 1000) and, on every page but the last, "next": a
// cursor to pass as cursor=… for the page that follows. A page reads its
// commits and no others; the shape of the whole repository that log
// --all and the graph are ordered by (tract.Outline) is read once and
// kept until a ref moves.
//
// GET /api/live is a stream of server-sent events: "ref" when any ref
// moves, whichever process moved it (a second process writing the same
// file or PostgreSQL repository included), and "escalation" when one is
// raised or answered. One poller per Server reads the refs (one short
// read transaction) and fans each change out to every stream; a stream
// that does not keep up is ended rather than allowed to hold the others
// back.
//
// Errors are {"error":{"message":…,"code":…}} with a 4xx or 5xx status.
// The routes, their parameters and the events are listed in docs/api.md.
//
// Caveats: package api checks no token and no origin; 'tract serve'
// puts it behind internal/httpauth's guard. Close ends the live streams,
// which an http.Server's Shutdown does not (register Close with
// RegisterOnShutdown).
package api
