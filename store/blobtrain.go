package store

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/internal/fsst"
)

// Training a symbol table (internal/fsst). Its symbols are pieces of the
// repository's texts, so one could keep a piece of a text after the text
// is erased; to keep erasure whole, every symbol of two bytes or more is
// one that occurs, whole, in at least trainMinShared distinct texts of the
// sample (and a sixty-fourth of it, for a large sample): a string of one
// text, or of a few, never enters the table.
const (
	// trainMinTexts is the fewest texts a table is trained on (a
	// quarter of them, for those of a compaction).
	trainMinTexts = 1000
	// trainSampleBytes bounds the sample, taken spread over the texts.
	trainSampleBytes = 256 << 10
	// trainShare is the least share of the sample each symbol occurs in
	// (1/trainShare), when that is more than trainMinShared.
	trainShare = 64
	// trainMinShared is the fewest distinct texts each symbol occurs in.
	trainMinShared = 8
)

// trainSample picks the texts a symbol table is trained on: about
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

// trainDict returns the stored form of a symbol table for texts like
// sample, or nil when the sample is too small to train one on or holds
// too little that is shared.
func trainDict(sample [][]byte) []byte {
	if len(sample) < trainMinTexts/4 {
		return nil
	}
	minShared := max(trainMinShared, len(sample)/trainShare)
	symbols := fsst.Train(sample, minShared)
	long := 0
	for _, s := range symbols {
		if len(s) > 1 {
			long++
		}
	}
	if long == 0 {
		return nil
	}
	t, err := fsst.New(symbols)
	if err != nil {
		return nil // never: trainSymbols gives distinct symbols of 1 to 8 bytes
	}
	return t.Marshal()
}

// stillShared reports whether every symbol of two bytes or more of table
// d (stored form) occurs in at least as many distinct texts of sample as
// a table trained on sample would need (see trainDict): then the table
// keeps no piece of a text that training on sample would leave out.
func stillShared(d []byte, sample [][]byte) bool {
	t, err := fsst.Parse(d)
	if err != nil {
		return false
	}
	minShared := max(trainMinShared, len(sample)/trainShare)
	for _, s := range t.Symbols() {
		if len(s) < 2 {
			continue
		}
		n := 0
		for _, text := range sample {
			if bytes.Contains(text, s) {
				if n++; n == minShared {
					break
				}
			}
		}
		if n < minShared {
			return false
		}
	}
	return true
}

// storeDict writes symbol table d (stored form) under id in tx's dicts
// bucket and makes it the one new texts are compressed with.
func storeDict(tx *bolt.Tx, d []byte, id uint32) error {
	b, err := tx.CreateBucketIfNotExists(bucketDicts)
	if err != nil {
		return err
	}
	key := binary.BigEndian.AppendUint32(nil, id)
	if err := b.Put(key, d); err != nil {
		return err
	}
	if v := tx.Bucket(bucketMeta).Get(keyDictSeq); len(v) != 4 || binary.BigEndian.Uint32(v) < id {
		if err := tx.Bucket(bucketMeta).Put(keyDictSeq, key); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(keyDict, key)
}

// nextDictID returns the id the next symbol table of tx's file gets: one
// the file never had, even before a compaction dropped its tables, since
// a handle may keep the tables it read by id.
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
