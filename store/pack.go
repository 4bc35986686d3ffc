package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// PackKind says what a PackEntry holds.
type PackKind uint8

// The kinds of pack entries.
const (
	PackBlob     PackKind = 1 // a blob: Value is its content
	PackCommit   PackKind = 2 // a commit: Value is dag.Encode of it
	PackCounters PackKind = 3 // a commit's counters: Value is Counters.Encode
)

// PackEntry is one object of a pack, stored under its hash.
type PackEntry struct {
	Kind  PackKind
	Hash  dag.Hash
	Value []byte
}

// Compare orders entries as a pack stores them: blobs by hash, then
// commits by hash, each commit's counters right after it. AppendPack takes
// entries in this order.
func (e PackEntry) Compare(o PackEntry) int {
	if c := cmpInt(e.Kind == PackBlob, o.Kind == PackBlob); c != 0 {
		return -c // blobs first
	}
	if c := bytes.Compare(e.Hash[:], o.Hash[:]); c != 0 {
		return c
	}
	return int(e.Kind) - int(o.Kind)
}

// SortPackEntries sorts es in Compare order and keeps the first of the
// entries of each object, as AppendPack and WritePack take them; it
// returns the entries kept, es's own memory.
func SortPackEntries(es []PackEntry) []PackEntry { return sortUnique(es, PackEntry.Compare) }

// sortUnique sorts es by cmp and keeps the first of equal ones.
func sortUnique[E any](es []E, cmp func(a, b E) int) []E {
	slices.SortFunc(es, cmp)
	return slices.CompactFunc(es, func(a, b E) bool { return cmp(a, b) == 0 })
}

func cmpInt(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// PackInfo describes an unpublished pack.
type PackInfo struct {
	// ID names the pack in AppendPack, PublishPack and DropPack.
	ID uint64
	// Updated is when entries were last appended (or it was created).
	Updated time.Time
	// Entries is how many entries it holds.
	Entries int64
}

// PackTx is implemented by transactions of stores that take bulk writes as
// packs: a set of objects written over several transactions, in key order
// (so each transaction only appends, and its memory stays bounded by what
// it appends, however large the repository), invisible to every reader
// until one transaction publishes the whole pack. Import uses it for input
// larger than one transaction should hold. PublishPack must run in a later
// transaction than the pack's last write.
//
// A published pack's objects are read, listed and deleted like any other;
// they stay in the pack until Compact merges it into the main buckets. An
// unpublished pack that its writer abandoned (a process killed mid-import)
// is invisible and only takes space; GC drops it once it is old enough.
type PackTx interface {
	// CreatePack starts an unpublished pack, updated at now, and returns
	// its id.
	CreatePack(now time.Time) (uint64, error)
	// AppendPack adds entries to unpublished pack id, updated at now. The
	// entries must come in ascending Compare order, after every entry
	// appended before; the store keeps their slices until the transaction
	// ends. A missing pack (dropped by GC) is an error wrapping
	// ErrNotFound.
	AppendPack(id uint64, now time.Time, entries []PackEntry) error
	// PublishPack makes pack id's objects visible, in this transaction,
	// which must not be the one that created the pack or last appended to
	// it (ErrPackWrittenInTx): a store may move a pack as it was last
	// committed.
	PublishPack(id uint64) error
	// DropPack deletes unpublished pack id and what it holds; dropping a
	// missing one is not an error.
	DropPack(id uint64) error
	// UnpublishedPacks lists the packs not yet published, by id.
	UnpublishedPacks() ([]PackInfo, error)
	// PublishedPacks returns how many published packs the objects are
	// spread over, besides the main buckets.
	PublishedPacks() (int, error)
}

// encodePackInfo returns the stored form of an unpublished pack's info:
// its update time as Unix nanoseconds and its entry count, each 8 bytes
// big-endian.
func encodePackInfo(p PackInfo) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(p.Updated.UnixNano()))
	return binary.BigEndian.AppendUint64(b, uint64(p.Entries))
}

// decodePackInfo decodes what encodePackInfo wrote; anything else (another
// length, a negative entry count) is an error wrapping dag.ErrBadEncoding.
func decodePackInfo(id uint64, b []byte) (PackInfo, error) {
	if len(b) != 16 {
		return PackInfo{}, fmt.Errorf("pack %d: info of %d bytes: %w", id, len(b), dag.ErrBadEncoding)
	}
	entries := int64(binary.BigEndian.Uint64(b[8:]))
	if entries < 0 {
		return PackInfo{}, fmt.Errorf("pack %d: info with %d entries: %w", id, entries, dag.ErrBadEncoding)
	}
	return PackInfo{ID: id, Updated: time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC(), Entries: entries}, nil
}

// PackWriter is implemented by transactions of stores where a batch of new
// objects costs less as a pack of its own than inserted into the main
// buckets (bbolt: a batch of random hash keys dirties a page per object
// there, but fills fresh pages in order in a pack). The store keeps its
// packs few by merging them (see "Packs" in docs/storage.md).
type PackWriter interface {
	// WritePack stores entries, in ascending Compare order and each once,
	// as a published pack, in this transaction. The store keeps their
	// slices until the transaction ends.
	WritePack(now time.Time, entries []PackEntry) error
}

// PackStreamer is implemented by transactions of stores that take a pack
// of any size in one transaction (a database server, whose transaction
// holds what it writes on the server's disk, not in the client's memory):
// an import writes its objects once, straight where they are read, in
// the transaction that moves its branch, instead of as an unpublished
// pack over several transactions that a last one publishes by copying
// it. The transaction keeps it all or nothing: a writer killed midway
// leaves nothing behind.
//
// The word index's documents of the pack's commits come with it, in the
// order the index numbers them (by commit time, as an import makes its
// commits): the store reads no text back to index them.
type PackStreamer interface {
	// StreamPack stores entries, which come in ascending Compare order,
	// each once, in this transaction, as PublishPack stores a published
	// pack's: an object already stored is kept, and counters replace any
	// stored. docs holds the document of every commit of entries, each
	// once, by commit time; a commit indexed already keeps its document.
	// It reads entries, then docs, once each; their errors are returned.
	StreamPack(entries iter.Seq2[PackEntry, error], docs iter.Seq2[WordDoc, error]) error
}

// PackRefTx is implemented by transactions of stores where publishing
// many refs in one transaction costs memory in proportion (bbolt holds
// every page a transaction dirties until it commits): refs can be staged
// with an unpublished pack, a batch per transaction, and PublishPack then
// sets them all at once, in a transaction of a bounded size.
type PackRefTx interface {
	// StagePackRefs stages refs rs (each a ref to a commit) with
	// unpublished pack id, es[i] the one entry of rs[i]'s reflog. Nothing
	// reads them until PublishPack publishes the pack: then each is set,
	// as by SetRef and AppendReflog, in that transaction. DropPack drops
	// them with the pack. A ref staged twice is refused.
	StagePackRefs(id uint64, rs []refs.Ref, es []refs.Entry) error
}

// PackMerger is implemented by stores that merge packs in the background
// of their writers' work, a bounded batch per transaction (Bolt): callers
// that wrote packs call MergePacks after their own transaction, outside
// it.
type PackMerger interface {
	// MergePacks runs the merges of packs that are due. An error leaves
	// every object where it was; ctx stops it between transactions.
	MergePacks(ctx context.Context) error
}
