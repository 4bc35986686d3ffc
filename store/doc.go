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
// [ReadBlobs], [ReadCommits], [ReadCounters] and [ReadChain] read many
// objects, or a first-parent chain, in one call of a transaction that is
// a [BatchReader] or a [ChainReader] (a store whose every read is a round
// trip to a server), and one key at a time otherwise: walks of many
// commits use them, so they cost a few round trips per page of commits on
// a database and the same key reads as before on a file.
//
// # The bbolt file, schema 4
//
// Five top-level buckets, two more once an import has used a pack, and
// one more once a write has used the journal; every value's byte format
// is documented where it is encoded:
//
//	meta     "magic"  → "tract"
//	         "schema" → SchemaVersion as an unsigned varint
//	blobs    32-byte hash → content (the hash is dag.Sum of the content)
//	commits  32-byte hash → dag.Encode of the commit (hash = dag.Sum of it)
//	         32-byte hash + 'c' → Counters.Encode of that commit (three
//	         uvarints: depth, messages, estimated tokens of its chain)
//	refs     full ref name → refs.Ref.Encode ("ref: TARGET" or 32 hash bytes)
//	reflogs  full ref name → nested bucket:
//	             8-byte big-endian sequence number → refs.Entry.Encode
//	staging  8-byte big-endian pack id → nested bucket (unpublished pack):
//	             "blobs", "commits" → nested buckets laid out as the
//	             top-level ones; "info" → update time (Unix ns) and entry
//	             count, 8 bytes big-endian each
//	packs    the same, for published packs (schema 3), most with
//	             "filter" → a filter of its keys (see below)
//	journal  8-byte big-endian sequence number → one write transaction's
//	         objects and reflog entries (schema 4, see below)
//
// Keys are bytes, so commits sort by hash and a hash prefix is a key range
// (CommitsWithPrefix seeks to it). A new file holds the meta keys, the empty
// buckets and HEAD → "ref: refs/heads/main". [OpenBolt] refuses a file
// without the magic ([ErrNotRepository]) and one whose schema is newer than
// [SchemaVersion] ([ErrNewerSchema], asking to upgrade tract).
//
// Schema 1 had no counters. A schema 1 file opens and reads as it is
// (missing counters are computed from the chain); its first write
// transaction records schema 2, together with that write. From then on an
// older tract refuses the file rather than writing or deleting commits
// without their counters.
//
// The counters entries ([Counters]) are an index outside the hashed
// content: a pure function of each commit's first-parent chain, so an entry
// is never stale. Each sits beside its commit in the commits bucket (its key
// sorts right after the commit's), so writing it dirties no page the commit
// did not. Entries are written in the transaction that makes a commit a
// branch tip (or keeps it off a branch), filled in along the chain from the
// nearest ancestor that has one, and deleted with their commits; [Fsck]
// recomputes every entry. ForEachCommit and CommitsWithPrefix pass over
// them.
//
// The file is created with mode 0600 (its directory 0700).
//
// # Packs
//
// bbolt keeps every page a write transaction touches in memory until it
// commits, and hash keys are random: a transaction that inserts n objects
// into a large repository touches about n pages, wherever they are. A bulk
// load in one transaction would hold everything; in many, each would
// rewrite pages all over the file. A pack ([PackTx]) avoids both: its
// writer sorts the objects first ([PackSorter], in runs on disk), then
// appends them in key order into buckets of their own, a bounded batch per
// transaction, so each transaction touches only the pages it adds and
// fills them. The pack sits in "staging", read by nothing, until one
// transaction moves it to "packs" (bbolt moves a bucket's root, not its
// pages) together with the branch move that makes its commits reachable.
// Lookups try the layer of their last hit, then the top-level buckets,
// then each published pack, largest first; listings merge them in key order, each key once; deletes reach
// every one. [Bolt.Compact] merges the packs into the top-level buckets.
//
// A batch of new objects written in one transaction (CommitMany of 64
// messages or more) is a pack too, written and published at once
// ([PackWriter]): it fills fresh pages in key order instead of dirtying a
// page of the top-level buckets per object, which makes such batches two
// to four times faster and the file smaller. It does not look for copies
// of its objects stored already (a copy is equal to it, so readers take
// either). Packs merge as they come, like the runs of a log-structured
// merge tree: eight published packs of one size tier (powers of eight
// entries) become one of the next. A merge of up to 65,536 entries runs
// in the transaction that wrote the last pack; a larger one
// ([Bolt.MergePacks], which the writer runs after its transaction) copies
// 65,536 entries per transaction into an unpublished pack marked
// "merging" (its ids), and its last transaction publishes it and drops
// the packs it merged. A transaction that deletes objects while packs are
// published drops every merge in progress, so a copy never brings back
// an object deleted (or erased) after it was made; the merge then gives
// up, as it does when another process merged those packs first. Packs
// over 4,194,304 entries are not merged; Compact merges everything.
//
// A pack written in one transaction (a batch, a journal checkpoint, a
// merge) holds a filter of its keys, a split-block Bloom filter of 8 bits
// per entry, so that a lookup of a key a pack does not hold (a new text's
// "is it stored already?", a new commit's counters) passes the pack by
// after reading one 64-byte block instead of searching its B+trees:
// without filters a single commit paid a search per pack. A filter never
// leaves out a key its pack holds (Fsck checks every one); deletes leave
// it as it was. A pack without one (an import's, published by
// PublishPack, or one published before filters) is searched for every
// key.
//
// # The journal
//
// A write transaction that adds a few objects does not put them into the
// blobs and commits buckets, where each would dirty a leaf and a branch
// page at a random place of a large tree: its objects, counters and
// reflog entries become one record appended to the journal bucket, so a
// commit writes about five pages instead of thirteen. Readers find the
// records' entries through an index that each session keeps and brings
// up to date at the start of each transaction (reading only the records
// appended since, or all of them after a checkpoint); lookups try the
// journal first, listings merge it, and a ref's reflog is its entries in
// the reflogs bucket followed by the journal's. Every 256 records (or
// 1 MiB) the transaction that appends one checkpoints the journal: its
// objects become a pack, its reflog entries go to the reflogs bucket, and
// its records are deleted. A transaction that deletes objects or rewrites
// a reflog, or that adds more than 64 KiB, checkpoints first and then
// writes to the buckets, as before the journal, so deletes and erasures
// never reach into a record. Compact merges the journal into the buckets;
// Fsck reports a record that does not decode, and Salvage reads the
// records as it reads the buckets. The first record marks the file
// schema 4: a tract that does not know the journal would not find what
// it holds.
//
// The transaction that publishes a file's first pack records schema 3:
// a tract that does not know packs would not find their objects. Until
// then a file stays at schema 2 and that tract can still use it. An
// unpublished pack whose writer died (an import or a merge) only takes
// space; GC drops it (see package tract).
//
// # Sharing the file
//
// A [Bolt] holds the file open and locked only while transactions need it:
// a transaction opens it (a "session") if this handle has not, and the
// session closes once no transaction has used it for
// [BoltOptions.IdleGrace] (default [DefaultIdleGrace], 1ms), so an idle
// handle holds no lock and many processes can share one repository.
// Transactions of one handle that overlap share the session. A session that
// only reads is opened read-only under a shared lock, which also works on a
// file this process may not write; a write needs an exclusive session (a
// file it may not write gives a [*ReadOnlyError]).
//
// Before bbolt opens the file (and takes its flock, which bbolt polls every
// 50ms), a session queues on two open-file-description record locks of the
// file itself (Linux): a "gate" byte and a "data" byte far past the end of
// the file. A waiter holds the gate while it waits for the data lock, so
// only one process waits for the data lock at a time and the lock passes in
// the order processes queued; readers share both, so a reader that arrives
// after a waiting writer queues behind it. A holder that sees the gate held
// (fcntl F_OFD_GETLK) hands the file over: to a queued reader as soon as its
// running transactions end, to a queued writer after a 2ms quantum (a
// handover costs a reopen). Waits happen in the kernel and are bounded by
// [BoltOptions.LockTimeout] ([*LockedError] after it). Record locks belong
// to the open file, so two handles of one process queue like two processes.
// After it gets the lock, a session checks that the path still names the
// file it locked, so a file renamed over the path is never written through
// a stale descriptor.
//
// [Bolt.Exclusive] and [Bolt.Shared] run work that spans several bbolt
// transactions in one session, alone in it for Exclusive (fsck, wiping
// free pages after an erasure: see erase.go). [Bolt.Compact] writes the repository into a new file and
// renames it over the old one while it holds the lock; the check above
// sends every waiter to the new file.
//
// # Damaged files
//
// bbolt reads pages through a memory map and trusts them: a damaged page can
// make it panic, and a truncated file makes reads fault. OpenBolt, View,
// Update and [Fsck] run bbolt with runtime/debug.SetPanicOnFault and
// recover: a damaged file gives [ErrCorrupt] from OpenBolt and from a
// transaction (from OpenBolt with [ErrNotRepository] too, as every file
// it cannot use), and problems from Fsck, never a crash. Only panics
// raised inside bbolt, and memory faults, are treated so; a panic from the
// caller's closure propagates unchanged.
//
// Fsck re-hashes every blob and commit, decodes every commit, ref and reflog
// entry, and checks that parents, blobs and ref targets exist. For a bbolt
// file it first checks the file's length and walks every page it can reach;
// only when that walk succeeds does it run bbolt's own page check (double
// frees, leaked pages, key order), because bbolt runs that check in a
// goroutine of its own where a fault could not be recovered. A file Fsck
// finds damaged is marked so and refuses writes ([DamagedError]) until
// Fsck finds it clean again. [FsckFile] checks a file bbolt cannot open
// at all, and [Salvage] copies what still verifies into a new repository:
// both read the file through rawfile.go, a reader of bbolt's page format
// that checks every offset before using it.
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
//   - Fsck on a store opened read-only (or on a file this process may not
//     write) skips bbolt's page check: a read-only session does not load the
//     free list, and loading it would happen in bbolt's goroutine. OpenBolt
//     checks a file under a shared lock, so a damaged free list shows at the
//     first write (which fails cleanly) or in Fsck.
//   - When bbolt panics half-way through opening a file, the session
//     releases both locks and closes the file, but bbolt's memory map of it
//     stays until the process exits.
//   - A wait for the lock that times out goes on in a background goroutine
//     (a blocked fcntl cannot be interrupted) and lets go of the lock as
//     soon as it is granted.
//   - On systems without open-file-description locks (not Linux), bbolt's
//     polled flock is the only lock: waiters are served in no order and see
//     the file up to 50ms late.
//   - A Memory store lives and dies with the process; Close only makes
//     later transactions fail.
package store
