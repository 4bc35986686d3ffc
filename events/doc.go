// Package events derives what a validated turn did from its commits: the
// events of the retry log (Event: an attempt, feedback injected, an
// escalation, the user's response, the resolution) and the statistics of
// tasks (Stats).
//
// There is one derivation for both uses. A turn under way feeds each
// commit it writes, read back as a Step (StepOf), to a Live, which
// reports the events as they happen; Replay regenerates the same events,
// and the turns they belong to (Trace), from the steps of a repository's
// commits in any order, orphans included; Summarize sums the traces up.
// Every field of an event is derived from the commits (their times, their
// metadata: see package record), so the live stream and the regenerated
// one are equal.
package events
