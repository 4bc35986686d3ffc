// Package repl is the command layer of tract's interactive chat: a Session
// takes the lines a person types and writes its replies to a writer, with
// no knowledge of the terminal, so the same type serves 'tract chat
// --interactive', a real terminal and tests.
//
//	s := repl.New(repl.Config{Tract: t, Client: clientFor, Out: os.Stdout})
//	err := s.Run(ctx, os.Stdin, os.Stderr) // or s.Handle(ctx, line) per line
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
// In retry mode each message is an attempt on a side chain off the branch as
// it stood before its last interaction; in secret mode messages go straight
// to the model and nothing is written. A message cancelled while it is
// answered leaves nothing of its turn on the branch. Each error a Session
// returns wraps one of the sentinels ([ErrExit], [ErrPendingError], …).
//
// What the last interaction is, retry and secret modes, errors and
// cancellation are documented in docs/repl.md.
//
// # Caveats
//
// A Session is not safe for concurrent use: one person types into it. The
// repository may be changed by other processes meanwhile; every move the
// Session makes after reading the branch is a compare-and-swap.
package repl
