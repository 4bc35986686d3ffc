// Package store keeps a repository's blobs, commits, refs and reflogs behind
// small interfaces, with two implementations: [Bolt], one bbolt file (the
// only storage engine of the default build), and [Memory], for tests and
// throwaway repositories. Package storetest holds the conformance suite both
// pass and that any further backend must pass; package store/postgres is the
// PostgreSQL backend.
//
// All access goes through closures, as in bbolt: [Store.View] runs a
// read-only [Tx], [Store.Update] a read-write one that commits when the
// closure returns nil and rolls back everything it wrote when it returns an
// error. One user-visible operation (commit + ref move + reflog entry) is one
// Update, so it happens completely or not at all.
//
//	s, err := store.OpenBolt(".tract/tract.db", store.BoltOptions{})
//	if err != nil { … }
//	defer s.Close()
//	err = s.View(ctx, func(tx store.Tx) error {
//		h, ok, err := store.ResolveRef(tx, "HEAD")
//		…
//	})
//
// Methods that find nothing return an error wrapping [ErrNotFound] (which
// wraps refs.ErrNotFound); writes in a View fail with [ErrReadOnly].
// [ResolveRef] follows symbolic refs, [Resolver] adapts a Tx for
// refs.Resolve, [Getter] for the walks of package dag, and [ReadBlobs],
// [ReadCommits], [ReadCounters] and [ReadChain] read many keys at once from
// a store whose every read is a round trip ([BatchReader], [ChainReader]).
//
// A Bolt holds its file open and locked only while transactions run, so many
// processes share one repository, queued in order (Linux). Bulk writes go
// through packs ([PackTx], [PackWriter]; [ChainImport] loads many separate
// chains, each on a new ref, the refs published with the pack as a refset
// where the store can, [PackRefTx]) and small ones through a journal, so
// a commit touches few pages of a large file. [Fsck] and [FsckFile] check a
// repository, [Salvage] copies what still verifies out of a damaged file, and
// [Bolt.Compact] rewrites the file. A damaged file gives [ErrCorrupt] or
// problems from Fsck, never a crash.
//
// A backend whose repositories are named by URLs registers a [Driver] for
// its scheme with [Register], as database/sql drivers do; [OpenURL] opens
// a URL through it. [Copy] copies one store's repository into another,
// empty one (a file into a database, say); [PutChain] writes a batch of
// new commits in key order.
//
// The transaction contract, the bbolt file's layout (schema [SchemaVersion]),
// packs and their filters, refsets, the journal, locking, damage handling and the
// full caveats are documented in docs/storage.md.
//
// # Caveats
//
//   - A Tx must not be used after its closure returns or from another
//     goroutine; transactions do not nest (an Update inside a View or an
//     Update of the same store deadlocks, as in bbolt).
//   - Byte slices returned by a Tx are the caller's; the data passed to
//     ForEachBlob and ForEachCommit callbacks is valid only during the call.
//   - Store methods do not check what they store refers to (PutCommit takes
//     missing parents, SetRef a missing commit); Fsck finds what slipped
//     through.
//   - [BoltOptions].NoSync skips fsync and is for tests.
package store
