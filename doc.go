// Package tract keeps LLM conversations the way git keeps code: every
// message is an immutable, content-addressed commit in a DAG stored in one
// bbolt file, and answers are generated under validation.
//
// # Repository
//
// Init creates a repository file (mode 0600) and Open opens one;
// FindRepository looks for .tract/tract.db like git looks for .git. A Tract
// is safe for concurrent use by the goroutines of one process; bbolt's file
// lock keeps other processes out while it is open (Open waits up to
// WithLockTimeout and then returns a *LockedError).
//
// Every method that changes the repository is one write transaction: the
// commit, the branch move and the reflog entries are written together or not
// at all.
//
// # History
//
// Commit (and its sugar System, User, Assistant, Note) appends to the current
// branch; committing on a detached HEAD fails with ErrDetachedHead. Log walks
// first parents from HEAD; LogAll returns every commit, the orphans grouped
// into side chains by the commit they forked from, each with the reflog entry
// that orphaned it. Reset moves the branch: Soft keeps what it leaves behind
// as orphans, Hard erases it. GC removes orphans whose reflog entries have
// expired. Compile turns the first-parent chain into the messages a model is
// sent.
//
// # Validated generation
//
// Chat commits a user message and asks the model (an llm.Client given with
// WithClient or UseClient); Generate answers the current context. With
// Validate, each answer is committed with its verdict; a rejected answer is
// followed by a steering commit (DefaultRetryPrompt) and another attempt. A
// success after retries is purified: the branch is reset to the restore point
// (the user message) and only the accepted answer is re-committed, with its
// provenance in the metadata. The failed attempts stay in the store as an
// orphan chain that LogAll shows with the action "purify". When every attempt
// fails, the error wraps *retry.ExhaustedError and, with purify, the branch
// ends in the user message and an error commit. A model failure after the
// client's own retries commits an error commit and returns the client's typed
// error.
//
// # Caveats
//
//   - bbolt holds an exclusive file lock for as long as a Tract is open, so a
//     long chat in one process makes other processes wait (and time out).
//   - Durable commits cost two fdatasync calls each (bbolt's protocol); use
//     Import to write many commits in one transaction.
//   - ORIG_HEAD names a commit but does not keep it reachable.
package tract
