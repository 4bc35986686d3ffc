// Package refs names commits: branches, HEAD and ORIG_HEAD, the reflog that
// records every ref move, and the revision syntax users type.
//
// It is plumbing like package dag. It defines the values and their stored
// byte forms; package store keeps them, and the root package decides when
// refs move.
//
// # Refs
//
// A [Ref] has a full name ("HEAD", "ORIG_HEAD", "refs/heads/main") and either
// a commit hash or, when symbolic, the full name of another ref: an attached
// HEAD is symbolic and points at "refs/heads/<branch>"; a detached HEAD holds
// a hash. Branch names follow git's rules ([ValidateBranchName]); the error
// wraps [ErrInvalidName] and says which rule was broken.
//
// The stored value of a ref ([Ref.Encode], [DecodeRef]) is either
//
//	"ref: " + target       symbolic, e.g. "ref: refs/heads/main"
//	32 bytes               the commit hash, raw
//
// The ref's name is the storage key and is not part of the value.
//
// # Reflog entries
//
// Every ref move appends an [Entry] (old hash, new hash, time, action,
// message) to that ref's reflog. [Entry.Encode] documents the format byte for
// byte:
//
//	0x01                 version tag
//	32 bytes             old hash (zero for a new ref)
//	32 bytes             new hash (zero for a deleted ref)
//	8 bytes              time, Unix nanoseconds, big-endian int64
//	uvarint len, bytes   action ("commit", "purify", …)
//	uvarint len, bytes   message
//
// A store keeps entries under increasing sequence numbers, so a reflog reads
// oldest first. [DecodeEntry] rejects another version tag, truncated fields,
// non-minimal varints and trailing bytes.
//
// # Revisions
//
// [ParseRevision] splits an expression into a base and ancestry steps
// without looking anything up; [Resolve] (or [ResolveRevision] for a parsed
// one) then finds the commit through a [Resolver]:
//
//	HEAD, ORIG_HEAD        the special refs
//	main, feature/x        a branch (refs/heads/… is implied)
//	refs/heads/main        a full ref name
//	1a2b, 1a2b3c4d…        a full hash or a unique abbreviation of ≥ 4 hex digits
//	HEAD@{1}, main@{2}     where a ref pointed N moves ago: the New of its
//	                       reflog entry N, newest first (needs a [ReflogResolver])
//	REV~N                  the Nth first-parent ancestor ("~" alone is ~1)
//	REV^N                  the Nth parent ("^" alone is ^1, "^0" is REV itself)
//
// Steps combine left to right: "main~2^2" is the second parent of main's
// grandparent. Names win over hashes: a branch called "cafe" hides the
// abbreviation "cafe". An abbreviation that matches several commits is an
// [*AmbiguousError] listing (up to ten of) them; a name that matches nothing,
// or a step past a root commit or past a commit's parents, is
// [ErrUnknownRevision], with a hint when a hex name is too short to be an
// abbreviation. Messages quote a revision as it was written ("HEAD^^", not
// "HEAD^1^1"), and a step that fails names the commit it started from and
// how many parents that commit has:
//
//	unknown revision "HEAD^^^": commit 1a2b3c4d (HEAD^) has no parent
//	unknown revision "main^3": commit 5e6f7a8b (main) has 2 parents
//
// REF@{N} reads REF as the base name is read (HEAD, ORIG_HEAD, a full ref
// name, else a branch; STRANDED is the reflog of results conflicts kept
// off their branches). Only a count is understood inside the braces, not
// a date or @{-N} ([ReflogPositionError]); a position past the reflog, or
// an entry that left the ref at no commit (a deleted or unborn branch), is
// [ErrUnknownRevision].
//
// An empty expression is [ErrBadRevision] ("the revision is empty").
//
// # Caveats
//
//   - A direct ref's value is 32 raw bytes, told apart from a symbolic one by
//     its "ref: " prefix. A hash whose first five bytes spell "ref: " (a
//     chance of 2^-40) would be read as symbolic.
//   - Entry.Encode, like dag.Encode, stores times as Unix nanoseconds; a
//     time outside the years 1678–2262 (such as the zero time.Time) does not
//     round-trip. Stamp entries with a real clock.
//   - ValidateBranchName checks short branch names, not full ref names.
package refs
