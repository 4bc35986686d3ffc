// Package repl is the command layer of tract's interactive chat: a Session
// takes the lines a person types and writes its replies to a writer, with
// no knowledge of the terminal, so the same type serves 'tract chat
// --interactive', a real terminal and tests.
//
// A line that does not start with "/" is a message. In the normal mode it
// is a validated turn on the branch, as Tract.Chat runs it. The REPL's own
// commands are:
//
//	/retry            replace the last interaction: each message is an attempt
//	/apply [last|ID]  point the branch at an attempt (one compare-and-swap move)
//	/cancel           leave retry mode; the attempts stay in 'tract log --all'
//	/secret [on|off]  continue off the record: nothing is written anywhere
//	/rewind [last|ID] move the branch back before an interaction (asks yes)
//	/log [N], /show ID, /status, /model [NAME], /system [TEXT], /help, /exit
//
// # The last interaction
//
// The last interaction is the branch's trailing user message and answer,
// user message and error commit, or a standalone error commit (a failure
// before anything was sent), with any notes after it: the branch's last
// turn as tract.Tract.LastTurn reads it. /retry and /rewind act on it; any
// other tip (a lone note, a lone user message) leaves nothing to retry.
//
// # Retry mode
//
// /retry freezes the base: the branch up to, not including, the last
// interaction. Each message is then an attempt: a side chain off the base
// (see tract.SideChain) holding the message and its validated answer. The
// model sees the base and the new message only, never the interaction
// being replaced. Each attempt is named by its message's abbreviated hash.
// /apply moves the branch from where it stood at /retry to the attempt,
// so a branch another process moved meanwhile is refused, not overwritten.
//
// # Secret mode
//
// /secret on compiles the branch once, and each secret message is sent
// with that base, the secret turns so far and the message, straight to the
// model client: no commit, blob, reflog entry or file is written. A failed
// secret turn stops secret sends until /secret off, which forgets the
// secret turns.
//
// # Errors
//
// A turn whose model call fails ends the branch in user message + error
// commit (Tract.Chat records it); a failure before the send (no model
// configured) is a standalone error commit, its text redacted by
// Config.Redact. While the branch ends in an error, messages are refused:
// /retry replaces the error, /rewind drops it.
//
// # Cancellation
//
// A message whose context is cancelled while it is answered (Ctrl-C on a
// terminal) prints "[message cancelled]" and leaves nothing of its turn on
// the branch. Tract.Chat commits the message before it sends it, so the
// session moves the branch back to where the turn started: a
// compare-and-swap reset with the reflog action "cancel" (ActionCancel)
// that says which message was dropped (to the unborn branch, with
// Tract.ResetUnborn, when it was the branch's first commit); the turn's
// commits stay as orphans in 'tract log --all'. When another writer
// committed on top of the message it stays, and the error says so
// (ErrCancelledKept).
// A cancelled attempt is not listed; a cancelled secret message does not
// stop secret sends.
//
// # Caveats
//
// A Session is not safe for concurrent use: one person types into it. The
// repository may be changed by other processes meanwhile; every move the
// Session makes after reading the branch is a compare-and-swap.
package repl
