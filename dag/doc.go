// Package dag defines tract's immutable objects, the hashes that name them,
// the canonical byte encoding of a commit, and walks over the commit graph.
//
// It is plumbing: it knows nothing about refs, storage or models. Walks take
// a [Getter] so they run over a bbolt transaction or an in-memory map alike.
//
// # Objects and hashes
//
// A blob is a commit's text; its name is [Sum] of its bytes, so equal texts
// are stored once. A [Commit] records parents (in order, the first being the
// one Log and Compile follow), a [Kind], a [Role], the blob hash, optional
// metadata and a time. Its name is Sum of its canonical encoding, so every
// field is part of its identity. [Sum] (BLAKE3-256) is the only function that
// computes hashes.
//
// A [Hash] prints as 64 lowercase hex characters ([Hash.String]), 8 in short
// form ([Hash.Short]); [ParseHash] accepts either case. Users may abbreviate a
// hash to [MinPrefixLen] or more characters ([IsHexPrefix]); resolving an
// abbreviation is package refs' business.
//
// # Commit encoding, version 1
//
// [Encode] documents the format byte for byte. In short:
//
//	0x01                          version tag
//	uvarint n, n × 32 bytes       parents, in order
//	uvarint len, bytes            kind ("message", "steering", …)
//	uvarint len, bytes            role ("system", "user", …)
//	32 bytes                      blob hash
//	uvarint len, bytes            metadata, canonical JSON (len 0: none)
//	8 bytes                       time, Unix nanoseconds UTC, big-endian int64
//
// Varints are encoding/binary's unsigned varints in their shortest form.
// Canonical metadata ([CanonicalMeta]) is a JSON object with keys sorted
// bytewise at every level, no insignificant white space and no HTML escaping
// ("<" stays "<"); an empty object is stored as no metadata. Numbers keep the
// text they were written with ("1.0" stays "1.0"), so two writers that spell
// a number differently make different commits.
//
// The encoding is strict in both directions. Encode refuses an invalid kind or
// role, non-canonical metadata and a time it cannot represent, rather than
// fixing them. [Decode] refuses an unknown version, truncated input, trailing
// bytes, non-minimal varints and invalid kinds or roles, so one commit has
// exactly one encoding; [Commit.Verify] adds the metadata check that Decode
// skips for speed. The golden files under testdata/ pin encodings and hashes:
// a change that alters them changes every commit's name and needs a new
// version tag, not a refreshed golden file.
//
// # Message shapes
//
// Most commits are a role and a text: the blob is the text, and Compile
// sends it as the message's "content" string. An OpenAI message can be more:
// content as an array of parts (text, image_url, input_audio, file), an
// assistant's tool_calls (with content null when there is no text), a tool
// message's tool_call_id, a name, and members tract has no field for. Such
// a commit keeps
//
//   - in its blob, the message's readable text, what log, show, grep and
//     compression read: the content string, or each part on its own line
//     (a text part as its text, any other as a description such as
//     "[image: data:image/png…(12 KB)]"), then one line per tool call,
//     "→ tool call NAME(ARGUMENTS)" (llm.Message.Text makes it);
//   - in its metadata, under [ShapeKey] ("shape"), the message object
//     itself without "role", and without "content" when the content is
//     the blob's text as a string (no parts, no tool calls). Like all
//     metadata it is canonical JSON: keys sorted at every level, so the
//     same message always makes the same commit, whatever order its keys
//     came in.
//
// A message that is only a role and a string content has no shape, and
// its commit is exactly what it was before shapes existed. Compile rebuilds
// the message from the shape: the role from the commit, "content" from the
// shape when it has one, else the blob's text; the members it writes in
// the order llm.Message documents, and members it has no field for in
// canonical form. The shape is part of the commit's metadata, so the
// commit's hash covers it; it counts against the repository's message size
// limit (a data: URL can be large), not the metadata limit. The readable
// text is part of the commit too: a change to how llm.Message.Text renders
// parts or tool calls changes the commits that new imports make (not the
// messages Compile gives back), so it is a format change like any other.
//
// # Walks
//
// [WalkFirstParent] follows first parents from a tip (what Log shows). Over a
// whole repository, a [Graph] holds the shape of every commit compactly:
// [Graph.Reachable] marks what refs reach, [Graph.OrphanChains] groups the
// commits no ref reaches into side chains by the reachable commit they hang
// off (which is how log --all shows failed retry attempts),
// [Graph.NewestFirst] orders commits by time, children before parents on
// ties, and [Graph.Descendants] finds what a deletion would orphan.
//
// # Caveats
//
//   - Times are stored with nanosecond precision in UTC; the location of a
//     time.Time is not part of the hash, and Decode returns UTC times. Times
//     before 1678 or after 2262, and the zero time.Time, cannot be encoded.
//   - Hashes name content, not authorship: two commits with the same fields
//     and the same clock reading are the same commit. Tests rely on this with
//     an injected clock.
//   - Walks trust the Getter. A missing commit stops WalkFirstParent and
//     Graph.Reachable with an error; the other Graph walks treat a missing
//     parent as the end of a chain (Graph.Missing lists them).
//   - Commits are values; nothing in this package mutates a Commit after it
//     is built, and callers must not either once it has been hashed.
package dag
