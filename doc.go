// Package tract keeps LLM conversations the way git keeps code: every
// message is an immutable, content-addressed commit in a DAG stored in one
// bbolt file, and answers are generated under validation.
//
// An agent uses it in this order: open the repository (OpenOrInit), put
// context in (System, User, Commit, Import), ask the model for a validated
// answer (Chat with Validate; the accepted answer stays on the branch, the
// failed attempts beside it), read what happened (ChatResult.History,
// Log, LogAll, Reflog, Show and the typed Provenance and AttemptRecord),
// send the context to a model of its own (Compile), and keep it short
// (CompressRange). Many agents and people may share one repository at
// once (OnBranch, ConflictError).
//
// # Repository
//
// OpenOrInit opens a repository file, creating it (mode 0600) on first
// use; Init only creates and Open only opens. FindRepository looks for
// .tract/tract.db like git looks for .git. A Tract
// is safe for concurrent use by goroutines, and other processes (and other
// handles) may use the same file at the same time: see Sharing a repository.
//
// Every method that changes the repository is one write transaction: the
// commit, the branch move and the reflog entries are written together or not
// at all.
//
// # History
//
// Commit (and its sugar System, User, Assistant, Note) appends to the current
// branch; committing on a detached HEAD fails with ErrDetachedHead;
// CommitMany appends many in one transaction; Import and ImportSeq load a
// conversation of any length in bounded memory (ReadMessages reads the
// OpenAI format as a stream). Log walks first parents from HEAD; LogAll
// returns every commit, the orphans grouped into side chains by the commit
// they forked from, each with the reflog entry that orphaned it;
// Outline.Topo orders every commit for drawing as columns, and WriteGraph
// writes the history as a Graphviz or Mermaid graph. Reset
// moves the branch: Soft keeps what it leaves behind as orphans, Hard
// erases it. GC removes orphans whose reflog entries have expired. Compile
// turns the first-parent chain into the messages a model is sent. Status
// answers "where am I, how big is the context" in constant time, from
// counters kept beside each commit.
//
// What enters is bounded (see Limits, set with WithLimits): 16 MiB of
// text per commit, 1 MiB of caller-given metadata, and for ReadMessages
// 4 × 16 MiB + 1 MiB per line and 4 GiB in all. Input over a limit is a
// *TooLargeError and nothing of it is written. Text must be valid UTF-8,
// whether it comes as a string or as JSON (where ReadMessages also
// refuses the lone surrogate escapes encoding/json would turn into
// U+FFFD).
//
// For histories too long to hold, LogSeq and CompileSeq are Log and Compile
// as sequences, and Outline is LogAll as hashes with the texts read as
// they are wanted: their memory grows with the number of commits a walk
// must remember, not with the size of the texts.
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
// Each failed attempt records a FailureRecord (its failure type, a one-line
// error, the details, a "cmd:" validator's command, exit status and output
// tail, a validator's suggested fix), read back with
// CommitInfo.FailureRecord; Task records a task id on every commit of the
// turn. Failures retrying cannot fix stop the turn at once with an
// *EscalationError: the server refusing the key (401, 403) or the request
// (400, context length), or a validator reporting the answer blocked
// (retry.Verdict.Blocked; a "cmd:" command's exit status 77) or, after an
// xml retry context, the model answering "BLOCKED: reason".
//
// Feedback sets what a retry is told: the plain steering text, or an xml
// <retry_context> listing every earlier failure (retry.RetryContext).
// RetryContextStrategy sets what it sees: the failed answers and feedback
// (ContextConversation), or only the feedback, committed before a copy of
// the task message on a chain from the restore point (ContextFresh).
// Analyze records an Analyzer's root-cause guess and fix in each failure
// record.
//
// When a round of attempts ends without an accepted answer (exhausted, or
// an *EscalationError), the OnEscalation hook decides: retry (a fresh
// round; attempt numbers count on), fix (a round whose feedback starts
// with the person's instruction), skip (a *SkippedError) or abort (an
// *AbortedError); a note records each answer (CommitInfo.EscalationRecord),
// and a turn runs at most MaxRounds rounds. OnEvent reports the turn's
// events (attempt, feedback_injected, escalated, user_response, resolved)
// as they happen; Tract.Events regenerates the same events from the
// commits, and Tract.Stats sums up every task in the repository, orphans
// included.
//
// A turn that ends without an answer leaves the branch ending in its user
// message (and its error commit): a new user message would follow it
// directly. LastTurn reads the shape of a branch's last turn, PendingTurn
// reports such an unanswered message (OnPendingTurn has Chat report it
// before it sends), and RetryLast answers it again without committing it
// twice. OnAttemptDelta streams each attempt's
// answer with its attempt number, so a terminal can show the attempts apart.
//
// The ChatResult (returned with the error too) lists every attempt with its
// answer, verdict, usage and commit. Every accepted answer records its
// Provenance (attempts, diagnoses, restore point, usage, model), read back
// with CommitInfo.Provenance; each answer's AttemptRecord says how it fared.
// The metadata keys tract writes are listed once, with MetaProvenance.
// Validators come from package retry (JSON, Schema, Command, Judge, or any
// function through retry.ValidatorFunc); pipelines whose stages send work
// back upstream are retry.NewPipeline.
//
// # Sharing a repository
//
// The file is locked only while one of a handle's transactions runs (and for
// a 1ms idle grace after it, so that a burst of transactions shares one
// open): never across a model call, a validator, a pipeline stage or a
// callback. An idle handle holds nothing. Reads take a shared lock, writes an
// exclusive one; a busy file is waited for, in the order the waiters came,
// up to WithLockTimeout (default 5s), and then the call fails with a
// *LockedError. A file this process may only read opens and reads; writes to
// it fail with a *ReadOnlyError.
//
// Appending (Commit and its sugar, Import, the user message of Chat) reads
// the branch's tip inside its transaction, so concurrent appenders on one
// branch serialise and none is lost. Every step that builds on an earlier
// read — each step of a validated turn after the user message, the final
// transaction of CompressRange — moves the branch by compare-and-swap: if the
// branch moved meanwhile, it is not moved and the call returns a
// *ConflictError (errors.Is(err, ErrConflict)) naming the ref, where it was
// expected and where it was found. What the step had made is stored anyway,
// off the branch, and recorded in the reflog named refs.Stranded (action
// "conflict"): LogAll lists it, GC keeps it until the entry expires, and
// ConflictError.Kept names it. A conflict ends a turn; nothing is written on
// the branch after it.
//
// A validated turn is a short transaction per step (user message; each
// answer with its verdict; each steering message; the purify reset and
// clean answer together), so another process sees the turn as it happens.
//
// OnBranch returns a view that acts on one branch instead of HEAD, so that
// agents extend their own branches without moving the shared HEAD.
//
// GC, Fsck and Compact hold the lock for their whole run (each is one
// transaction, or one locked session for Fsck and Compact); a hard Reset
// and GC hold it while they delete and again while they overwrite the
// freed pages (see Erasure).
// An import larger than one batch sorts its input outside any transaction
// and writes it as a pack, a batch per transaction (see ImportSeq). The
// walks that print a whole history (LogSeq, CompileSeq, Outline's Infos)
// read a page of commits per short read transaction and hold nothing while
// the caller writes.
// Copy is the exception: it reads its source in one read transaction, so
// that what it copies is one state of the repository, and writers of the
// source wait for it (up to their lock timeout).
//
// # Erasure
//
// A hard Reset and GC erase: when they return, no byte of the text they
// deleted (commits, blobs, reflog messages) is left anywhere in the
// repository file, freed pages included. The deleting transaction records
// a pending erasure in the file itself; if the process dies before the
// freed pages are overwritten, the next open of the repository, by any
// process and for any command, completes the erasure before it does
// anything else. If overwriting fails after the deletion committed, the
// operation returns its result with an *ErasureError. What the file cannot
// control stays out of reach: copies kept by the file system
// (copy-on-write file systems, snapshots, data journaling), blocks an SSD
// remaps for wear levelling, backups, and a repository file this user may
// only read (a pending erasure there waits for a process that can write).
//
// # Caveats
//
//   - Transactions do not nest across handles either: a transaction of one
//     handle that waits for another handle's transaction on the same file,
//     in the same goroutine, waits until the lock timeout.
//   - The fair queue uses Linux open-file-description locks. On other
//     systems bbolt's own lock, polled every 50ms, is the only one.
//   - Durable commits cost two fdatasync calls each (bbolt's protocol); use
//     CommitMany or Import to write many commits in one transaction.
//   - ORIG_HEAD names a commit but does not keep it reachable.
package tract
