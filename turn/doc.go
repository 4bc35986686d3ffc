// Package turn runs one validated turn: the model is asked, each answer is
// committed with its verdict, a rejected answer is followed by a steering
// message and another attempt, a success after retries is purified (the
// branch returns to the restore point and only the accepted answer is
// committed on it), and a round of attempts that ends without an accepted
// answer is escalated to a hook that answers retry, skip, abort or fix.
// With Tools, an attempt is a tool loop: each answer that calls tools is a
// tool step, its calls run and committed with their results, until an
// answer without calls, which the validators judge.
//
// Run drives the turn against a Repo: the repository and the branch it
// commits to, as package tract adapts them. Each step that writes is one
// short transaction that moves the branch only if it still stands where
// the turn left it; the model, the validators and the caller's callbacks
// run with no transaction held. Options (Validate, MaxAttempts, Purify,
// Feedback, OnEscalation, OnEvent, …) are checked by NewConfig before
// anything is written. The outcome is a Result (also with an error, so
// usage and diagnoses are not lost); what each commit records is package
// record's, and the events the turn reports live (OnEvent) are package
// events' derivation of those commits.
//
// Last and State describe the last turn a branch ends in (package tract's
// Turn, read by LastTurn).
//
// Most programs use this package through package tract: Chat, Generate
// and RetryLast, whose options are this package's.
package turn
