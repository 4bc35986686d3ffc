// Package store keeps a repository's blobs, commits, refs and reflogs behind
// small interfaces, with two implementations: [Bolt], one bbolt file (the
// only storage engine of the default build), and [Memory], for tests and
// throwaway repositories. Package storetest holds the conformance suite both
// pass and that any further backend must pass.
//
// # Transactions
//
// All access goes through closures, as in bbolt: [Store.View] runs a
// read-only [Tx], [Store.Update] a read-write one that commits when the
// closure returns nil and rolls back everything it wrote when the closure
// returns an error. One user-visible operation (commit + ref move + reflog
// entry) is one Update, so it happens completely or not at all. Views run
// concurrently; Updates run one at a time; a View never sees part of an
// Update.
//
// Methods that find nothing return an error wrapping [ErrNotFound], which
// itself wraps refs.ErrNotFound, so errors.Is works with either. Writes in a
// View, and Updates on a store opened read-only, fail with [ErrReadOnly].
// [ResolveRef] follows symbolic refs, [Resolver] adapts a Tx for
// refs.Resolve, and [Getter] for the walks of package dag.
//
// # The bbolt file, schema 1
//
// Five top-level buckets; every value's byte format is documented where it
// is encoded:
//
//	meta     "magic"  → "tract"
//	         "schema" → SchemaVersion as an unsigned varint
//	blobs    32-byte hash → content (the hash is dag.Sum of the content)
//	commits  32-byte hash → dag.Encode of the commit (hash = dag.Sum of it)
//	refs     full ref name → refs.Ref.Encode ("ref: TARGET" or 32 hash bytes)
//	reflogs  full ref name → nested bucket:
//	             8-byte big-endian sequence number → refs.Entry.Encode
//
// Keys are bytes, so commits sort by hash and a hash prefix is a key range
// (CommitsWithPrefix seeks to it). A new file holds the meta keys, the empty
// buckets and HEAD → "ref: refs/heads/main". [OpenBolt] refuses a file
// without the magic ([ErrNotRepository]) and one whose schema is newer than
// [SchemaVersion] ([ErrNewerSchema], asking to upgrade tract). Schema 1 is
// the first, so there is nothing older to migrate yet.
//
// The file is created with mode 0600 (its directory 0700) and locked while
// open: exclusively for read-write, shared with [BoltOptions.ReadOnly].
// Another opener waits up to [BoltOptions.LockTimeout] and then gets a
// [*LockedError]. The lock is bbolt's flock, which belongs to the open file,
// so two opens inside one process exclude each other too.
//
// # Damaged files
//
// bbolt reads pages through a memory map and trusts them: a damaged page can
// make it panic, and a truncated file makes reads fault. OpenBolt, View,
// Update and [Fsck] run bbolt with runtime/debug.SetPanicOnFault and
// recover: a damaged file gives [ErrNotRepository] from OpenBolt, [ErrCorrupt]
// from a transaction, and problems from Fsck, never a crash. Only panics
// raised inside bbolt, and memory faults, are treated so; a panic from the
// caller's closure propagates unchanged.
//
// Fsck re-hashes every blob and commit, decodes every commit, ref and reflog
// entry, and checks that parents, blobs and ref targets exist. For a bbolt
// file it first checks the file's length and walks every page it can reach;
// only when that walk succeeds does it run bbolt's own page check (double
// frees, leaked pages, key order), because bbolt runs that check in a
// goroutine of its own where a fault could not be recovered.
//
// # Caveats
//
//   - Byte slices returned by a Tx are copies the caller may keep and
//     change. The data passed to ForEachBlob and ForEachCommit callbacks is
//     only valid during the call and must not be changed.
//   - A Tx must not be used after its closure returns or from another
//     goroutine. Transactions do not nest: an Update inside an Update (or
//     inside a View) of the same store deadlocks, as in bbolt.
//   - Store methods do not check what they store refers to: PutCommit
//     accepts missing parents and blobs, SetRef a missing commit. Callers
//     that build on user input check; Fsck finds what slipped through.
//   - [BoltOptions.NoSync] skips fsync; a crash can then lose committed
//     transactions. It is for tests.
//   - Fsck on a store opened read-only skips bbolt's page check: its free
//     list is not loaded, and loading it would happen in bbolt's goroutine.
//   - When bbolt panics half-way through opening a file, OpenBolt releases
//     the lock and closes the file, but bbolt's memory map of it stays until
//     the process exits.
//   - A Memory store lives and dies with the process; Close only makes
//     later transactions fail.
package store
