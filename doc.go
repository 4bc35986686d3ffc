// Package tract keeps LLM conversations the way git keeps code: every
// message is an immutable, content-addressed commit in a DAG stored in one
// bbolt file (or a PostgreSQL database), and answers are generated under
// validation.
//
// This package is the porcelain: Open, Init and OpenOrInit return a
// *Tract, whose methods are the operations a program calls. The work is
// done by the packages below it (ARCHITECTURE.md maps them): dag, refs
// and store keep commits, refs and reflogs; turn runs a validated turn;
// record, events and ingest hold the metadata records, the events and
// statistics derived from them, and the readers of what comes in; export,
// compress and retry write training data, compress history and check
// answers. Most programs import only this package, llm and retry.
//
// An agent uses it in this order:
//
//	t, err := tract.OpenOrInit(".tract/tract.db", tract.WithClient(client))
//	t.System(ctx, "Answer in JSON.")
//	res, err := t.Chat(ctx, "List three colours.", tract.Validate(retry.JSON()))
//	msgs, err := t.Compile(ctx) // what the model sees next
//
// Chat commits the user message and asks the model; each answer is
// committed with its verdict, a rejected one is followed by a steering
// commit and another attempt, and a success after retries is purified:
// the branch keeps the accepted answer only, the failed attempts stay in
// the repository, listed by LogAll. ChatResult.History, Provenance,
// FailureRecord and AttemptRecord say what happened; Events and Stats
// read it back for every turn. Log, LogAll, Show, Reflog, Outline and
// WriteGraph read the history, and Search (and Log with LogGrep) find in
// it; Reset, GC, CompressRange, Import, Export
// and Copy change or move it.
//
// A Tract is safe for concurrent use by goroutines, and other processes
// may use the same repository at once: each method that changes it is one
// transaction (a validated turn, a short one per step), no lock is held
// across a model call or a callback, and a branch that moved under an
// operation is a *ConflictError, never a lost commit. OnBranch binds work
// to one branch instead of HEAD.
//
// What enters is bounded (Limits): text must be valid UTF-8, and input
// over a limit is a *TooLargeError with nothing written. A hard Reset and
// GC erase what they delete from the file, freed pages included.
//
// The contracts behind this overview (sharing a file, erasure, caveats)
// are in docs/tract.md, the metadata in docs/metadata.md, and the runnable
// examples on the Example functions.
package tract
