// Package refs names commits: branches, HEAD and ORIG_HEAD, the reflog that
// records every ref move, and the revision syntax users type.
//
// It is plumbing like package dag. It defines the values and their stored
// byte forms; package store keeps them, and the root package decides when
// refs move.
//
// A [Ref] has a full name ("HEAD", "ORIG_HEAD", "refs/heads/main") and either
// a commit hash or, when symbolic, the full name of another ref: an attached
// HEAD points at "refs/heads/<branch>", a detached one holds a hash.
// [ValidateBranchName] applies git's rules to branch names; [BranchRef] and
// [BranchName] convert between short and full names. Every ref move appends
// an [Entry] (old hash, new hash, time, action, message) to the ref's reflog.
// [Ref.Encode] and [Entry.Encode] give the stored forms, and [DecodeRef] and
// [DecodeEntry] read them back strictly.
//
// [ParseRevision] splits an expression such as "main~2^2" or "HEAD@{1}" into
// a base and steps without looking anything up; [Resolve] (or
// [ResolveRevision] for a parsed one) finds the commit through a [Resolver],
// which a store transaction provides ([ReflogResolver] for REF@{N},
// [ChainResolver] for long first-parent steps):
//
//	h, err := refs.Resolve(resolver, "main~2")
//
// Names win over hashes; an abbreviation of 4 or more hex digits that
// matches several commits is an [*AmbiguousError], and a name or step that
// matches nothing is [ErrUnknownRevision], with a message that quotes the
// revision as written and names the commit a failed step started from.
//
// The byte forms of refs and reflog entries and the full revision syntax
// are documented in docs/refs.md.
//
// # Caveats
//
//   - A direct ref's value is 32 raw bytes, told apart from a symbolic one
//     by its "ref: " prefix; a hash whose first five bytes spell "ref: " (a
//     chance of 2^-40) would be read as symbolic.
//   - Entry times outside the years 1678–2262 (the zero time.Time too) do
//     not round-trip: stamp entries with a real clock.
//   - ValidateBranchName checks short branch names, not full ref names.
package refs
