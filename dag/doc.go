// Package dag defines tract's immutable objects, the hashes that name them,
// the canonical byte encoding of a commit, and walks over the commit graph.
//
// It is plumbing: it knows nothing about refs, storage or models. Walks take
// a [Getter] so they run over a bbolt transaction or an in-memory map alike.
//
// A blob is a commit's text, named by [Sum] of its bytes. A [Commit] records
// its parents (the first is the one Log and Compile follow), a [Kind], a
// [Role], the blob's hash, optional metadata and a time; its name is Sum of
// its encoding ([Encode], [Commit.Hash]), so every field is part of its
// identity. Sum (BLAKE3-256) is the only function that computes hashes. A
// [Hash] prints as 64 lowercase hex characters ([Hash.String]) or 8
// ([Hash.Short]); [ParseHash] reads either case, and [IsHexPrefix] tells
// whether a string could be a hash abbreviated to [MinPrefixLen] or more.
//
//	c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum(text), Time: now}
//	b, err := dag.Encode(c) // the canonical bytes; dag.Sum(b) names the commit
//	back, err := dag.Decode(b)
//
// Encode and [Decode] are strict: Encode refuses an invalid kind or role,
// metadata that is not canonical ([CanonicalMeta]) and a time it cannot
// represent rather than fixing them, and Decode accepts only the one
// encoding of a commit. Metadata under [ShapeKey] keeps an OpenAI message
// that is more than a role and a text (parts, tool calls) so that Compile
// can give it back.
//
// [WalkFirstParent] follows first parents from a tip; a [Graph] holds the
// shape of a whole repository compactly for reachability, orphan chains,
// time order, descendants and the order to draw it in columns
// ([Graph.DrawOrder]), which [Lanes] lays out a row at a time.
//
// The byte format, canonical metadata, message shapes and what the walks
// promise are documented in docs/encoding.md.
//
// # Caveats
//
//   - Times are stored as Unix nanoseconds in UTC: the location is not part
//     of the hash, and times before 1678 or after 2262 (the zero time.Time
//     too) cannot be encoded.
//   - Hashes name content, not authorship: two commits with the same fields
//     and the same clock reading are the same commit.
//   - A change that alters an encoding (or how llm.Message.Text renders a
//     shaped message) changes commits' names: it needs a new version tag,
//     not refreshed golden files.
package dag
