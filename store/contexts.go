package store

import "github.com/tractdag/tract/dag"

// ContextTx is implemented by transactions that keep compiled-context
// records (the bbolt store's): what a first-parent chain's commits
// compile to, kept beside the commits as a cache, so that a process can
// read a long chain's messages from a few records instead of from every
// commit and text (see package internal/compiled, which encodes them).
// Like counters, a record is a pure function of commits, which are
// immutable: it never goes stale, and it goes when its commit does
// (DeleteCommits deletes it). A record holds texts, so deleting one
// erases it as deleting a blob does. Stores without them work as before,
// compiling from the commits.
type ContextTx interface {
	// Context returns the record stored under commit h, nil when there
	// is none; the bytes are the caller's.
	Context(h dag.Hash) ([]byte, error)
	// HasContexts says, for each of hs, whether it has a record: one
	// call for a page of a walk (one round trip on a database).
	HasContexts(hs []dag.Hash) ([]bool, error)
	// PutContext stores rec under commit h, and removes the records of
	// replaced, whose messages rec holds (so their texts stay in the
	// file, and removing them erases nothing). The store may keep rec:
	// the caller must not change it afterwards.
	PutContext(h dag.Hash, rec []byte, replaced []dag.Hash) error
	// DeleteContext removes the record of commit h, erasing its texts;
	// removing a missing one is not an error.
	DeleteContext(h dag.Hash) error
}

// ContextChainReader is implemented by transactions that read a chain of
// records in one call (the PostgreSQL store's: one recursive query
// instead of a round trip per record). A record's bytes 1 to 32 name the
// commit of the record before it on its chain (all zeros: none), which
// is what the chain follows.
type ContextChainReader interface {
	// ContextChain returns the record of h and the records before it,
	// newest first, at most n of them, with their commits; none when h
	// has no record.
	ContextChain(h dag.Hash, n int) (hs []dag.Hash, recs [][]byte, err error)
}
