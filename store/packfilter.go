package store

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/tractdag/tract/dag"
)

// Pack filters. A published pack may hold, under "filter" beside "info",
// a filter of the keys of its blobs and commits buckets: a split-block
// Bloom filter, so that a lookup of a key a pack does not hold (every new
// object's "is it stored already?", every new commit's counters) skips
// the pack without searching its B+trees. A filter never leaves a key out;
// it may let a key in that the pack does not hold (about one in a hundred
// such lookups), which then searches the pack as if it had no filter.
//
// The value is one version byte (1) followed by blocks of 64 bytes, each
// eight 64-bit little-endian words. A key is filtered by its first 16
// bytes, which for every key the buckets hold are the first bytes of a
// BLAKE3 hash, uniform already: a counters key (the commit's hash and a
// suffix) shares its commit's bits. The first 8 bytes choose the block;
// the next 8 give 6 bits for each of its words, the bit set in that word.
//
// A pack gets its filter as it is written: from its entries (WritePack,
// a journal checkpoint or a batch) or from the keys a merge copies into
// it. A pack filled over several transactions and published by
// PublishPack (an import, a copy) has none: its size is not known until
// it is published, and reading its keys back then would bring every page
// of it into memory, which an import of any size must not need. Such a
// pack is one large layer, searched once per lookup; it gets a filter
// when a merge takes it in. A pack without one (those, and packs
// published before filters, or whose filter does not decode) is searched
// for every key; Fsck reports a filter that does not decode or leaves out
// a key. Deleting objects from a pack leaves its filter as it was: it
// lets in keys the pack no longer holds, never the other way round.
var keyPackFilter = []byte("filter")

const (
	filterVersion = 1
	filterBlock   = 64
	// filterBitsPerEntry sizes a filter: a pack's entries are mostly a
	// commit, its counters (the same bits) and its text, so about 12 bits
	// per distinct hash, which lets in about one key in two hundred that
	// the pack does not hold.
	filterBitsPerEntry = 8
	// filterKeyBytes is how much of a key the filter reads; a shorter
	// key is never filtered out.
	filterKeyBytes = 16
)

// packFilter is a pack's filter as stored (see keyPackFilter).
type packFilter []byte

// newPackFilter returns an empty filter sized for n entries.
func newPackFilter(n int64) packFilter {
	blocks := max((n*filterBitsPerEntry+filterBlock*8-1)/(filterBlock*8), 1)
	f := make(packFilter, 1+blocks*filterBlock)
	f[0] = filterVersion
	return f
}

// decodePackFilter checks v, the value stored under keyPackFilter, and
// returns it as a filter.
func decodePackFilter(v []byte) (packFilter, error) {
	switch {
	case len(v) == 0:
		return nil, fmt.Errorf("pack filter is empty: %w", dag.ErrBadEncoding)
	case v[0] != filterVersion:
		return nil, fmt.Errorf("pack filter of version %d: %w", v[0], dag.ErrBadEncoding)
	case (len(v)-1)%filterBlock != 0 || len(v) == 1:
		return nil, fmt.Errorf("pack filter of %d bytes, not whole blocks: %w", len(v), dag.ErrBadEncoding)
	}
	return packFilter(v), nil
}

// block returns the block key falls in and the word of bits it sets
// there, 6 bits per word; ok is false for a key too short to filter.
func (f packFilter) block(key []byte) (b []byte, sel uint64, ok bool) {
	if len(key) < filterKeyBytes {
		return nil, 0, false
	}
	blocks := uint64(len(f)-1) / filterBlock
	i, _ := bits.Mul64(binary.LittleEndian.Uint64(key), blocks)
	at := 1 + i*filterBlock
	return f[at : at+filterBlock], binary.LittleEndian.Uint64(key[8:]), true
}

// add records key.
func (f packFilter) add(key []byte) {
	b, sel, ok := f.block(key)
	if !ok {
		return
	}
	for w := 0; w < filterBlock/8; w++ {
		word := binary.LittleEndian.Uint64(b[w*8:])
		binary.LittleEndian.PutUint64(b[w*8:], word|1<<(sel>>(6*w)&63))
	}
}

// mayHave reports whether key may have been added: false only when it
// was not. A nil filter may have any key.
func (f packFilter) mayHave(key []byte) bool {
	if f == nil {
		return true
	}
	b, sel, ok := f.block(key)
	if !ok {
		return true
	}
	for w := 0; w < filterBlock/8; w++ {
		if binary.LittleEndian.Uint64(b[w*8:])&(1<<(sel>>(6*w)&63)) == 0 {
			return false
		}
	}
	return true
}
