package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// Training a dictionary. A zstd dictionary is content that every frame
// compressed with it may copy from, and the statistics of the texts it
// was made from. Its content is drawn from the repository's texts, so it
// could keep a piece of a text after the text is erased; to keep erasure
// whole, the content is made only of byte strings that occur, whole, in
// at least trainMinTexts distinct texts of the sample (and a sixtieth
// of it, for a large sample): a string of one text, or of a few, never
// enters it. The statistics (symbol frequencies) hold no text.
const (
	// trainMinTexts is the fewest texts a dictionary is trained on, and
	// the fewest distinct texts of the sample each piece of its content
	// occurs in.
	trainMinTexts = 1000
	// trainSampleBytes bounds the sample, taken spread over the texts.
	trainSampleBytes = 256 << 10
	// trainShare is the least share of the sample each piece of content
	// occurs in (1/trainShare), when that is more than trainMinShared.
	trainShare = 64
	// trainMinShared is the fewest distinct texts each piece occurs in.
	trainMinShared = 8
	// dictContentBytes bounds the dictionary's content.
	dictContentBytes = 32 << 10
)

// trainSample picks the texts a dictionary is trained on: about
// trainSampleBytes of them, spread evenly over texts. Texts too short to
// be compressed are left out.
func trainSample(texts [][]byte) [][]byte {
	var total int
	var usable [][]byte
	for _, t := range texts {
		if len(t) >= minCompress {
			usable = append(usable, t)
			total += len(t)
		}
	}
	if total <= trainSampleBytes {
		return usable
	}
	step := float64(total) / trainSampleBytes
	var out [][]byte
	var next float64
	var at int
	for _, t := range usable {
		if float64(at) >= next {
			out = append(out, t)
			next += step * float64(len(t))
		}
		at += len(t)
	}
	return out
}

// gram is a candidate piece of a dictionary's content.
type gram struct {
	text  int32 // the sample text it was first seen in
	at    int32 // where in it
	last  int32 // the last text it was seen in
	count int32 // distinct texts it occurs in
}

// trainDict returns a zstd dictionary with id for texts like sample, or
// nil when the sample holds too little that is shared to be worth one.
func trainDict(sample [][]byte, id uint32) ([]byte, error) {
	if len(sample) < trainMinTexts/4 {
		return nil, nil
	}
	minShared := int32(max(trainMinShared, len(sample)/trainShare))
	seed := maphash.MakeSeed()
	type piece struct {
		text, at, size int
		count          int32
	}
	var chosen []piece
	// Pieces of 8, 16, 32 and 64 bytes, counted by the distinct texts
	// they occur in; a longer piece is counted only where its first half
	// is shared enough (it cannot occur more often than that).
	var shared map[uint64]bool
	for size := 8; size <= 64; size *= 2 {
		counts := map[uint64]gram{}
		for i, t := range sample {
			for at := 0; at+size <= len(t); at++ {
				if shared != nil && !shared[maphash.Bytes(seed, t[at:at+size/2])] {
					continue
				}
				k := maphash.Bytes(seed, t[at:at+size])
				g, ok := counts[k]
				switch {
				case !ok:
					counts[k] = gram{text: int32(i), at: int32(at), last: int32(i), count: 1}
				case g.last != int32(i):
					g.last, g.count = int32(i), g.count+1
					counts[k] = g
				}
			}
		}
		next := map[uint64]bool{}
		for k, g := range counts {
			if g.count >= minShared {
				next[k] = true
				chosen = append(chosen, piece{text: int(g.text), at: int(g.at), size: size, count: g.count})
			}
		}
		shared = next
		if len(next) == 0 {
			break
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	// The pieces that save the most (bytes not written, in every text
	// that has them) first, then drop what is inside a piece taken.
	slices.SortFunc(chosen, func(a, b piece) int { return int(b.count)*b.size - int(a.count)*a.size })
	var pieces [][]byte
	var content []byte
	for _, g := range chosen {
		p := sample[g.text][g.at : g.at+g.size]
		if bytes.Contains(content, p) {
			continue
		}
		if len(content)+len(p) > dictContentBytes {
			break
		}
		pieces = append(pieces, p)
		content = append(content, p...)
	}
	// Verify each piece exactly (the counts above go by hashes, which
	// may collide): it must occur in minShared distinct texts.
	type seen struct{ last, count int32 }
	exact := make(map[string]*seen, len(pieces))
	sizes := map[int]bool{}
	for _, p := range pieces {
		exact[string(p)] = &seen{last: -1}
		sizes[len(p)] = true
	}
	for i, t := range sample {
		for size := range sizes {
			for at := 0; at+size <= len(t); at++ {
				if e := exact[string(t[at:at+size])]; e != nil && e.last != int32(i) {
					e.last, e.count = int32(i), e.count+1
				}
			}
		}
	}
	keep := pieces[:0]
	for _, p := range pieces {
		if exact[string(p)].count >= minShared {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	// zstd reaches the end of the content with the shortest offsets: the
	// most useful pieces go last.
	content = content[:0]
	for i := len(keep) - 1; i >= 0; i-- {
		content = append(content, keep[i]...)
	}
	if len(content) < 8 {
		return nil, nil
	}
	d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: id, Contents: sample, History: content, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
	if err != nil {
		return nil, fmt.Errorf("train a dictionary: %w", err)
	}
	return d, nil
}

// storeDict writes dictionary d under the next id of tx's dicts bucket
// and makes it the one new texts are compressed with.
func storeDict(tx *bolt.Tx, d []byte, id uint32) error {
	b, err := tx.CreateBucketIfNotExists(bucketDicts)
	if err != nil {
		return err
	}
	key := binary.BigEndian.AppendUint32(nil, id)
	if err := b.Put(key, d); err != nil {
		return err
	}
	if err := tx.Bucket(bucketMeta).Put(keyDictSeq, key); err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyDict, key)
}

// nextDictID returns the id the next dictionary of tx's file gets: one
// the file never had, even before a compaction dropped its dictionaries,
// since a handle may keep the dictionaries it read by id.
func nextDictID(tx *bolt.Tx) uint32 {
	var id uint32
	if v := tx.Bucket(bucketMeta).Get(keyDictSeq); len(v) == 4 {
		id = binary.BigEndian.Uint32(v)
	}
	if b := tx.Bucket(bucketDicts); b != nil {
		if k, _ := b.Cursor().Last(); len(k) == 4 {
			id = max(id, binary.BigEndian.Uint32(k))
		}
	}
	return id + 1
}
