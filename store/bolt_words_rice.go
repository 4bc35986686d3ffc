package store

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// A posting block's value (schema 8) holds the documents after its
// first, ascending: nothing for a block of one document; otherwise a
// byte k (0 to maxRiceK), then the differences between each document
// and the one before, less one, Rice-coded with parameter k, most
// significant bit first: the quotient d>>k in unary (that many 1 bits,
// then a 0 bit), then the k low bits of d. The last byte is padded with
// 1 bits, fewer than 8, which no code ends in. A word in one document of
// m takes about log2(m)+1.5 bits a document (schema 7 took a byte or
// more: uvarints), and k is chosen for each block's run from its mean
// difference.

// maxRiceK is the largest Rice parameter: a difference of up to 2^56
// takes one byte of quotient at most; documents are numbered below
// 2^40 (fsck).
const maxRiceK = 56

// schemaWords is the schema of a file whose word index this tract reads
// and keeps: 8, the posting blocks Rice-coded. A file of schema 7 has
// an index of uvarint blocks: its searches read every text, as a file
// without one does, and its first write builds the index again.
const schemaWords = 8

// wordIndexCurrent reports whether tx's file has a word index this tract
// reads and keeps: the bucket, in a file of schemaWords or later.
func wordIndexCurrent(tx *bolt.Tx) bool {
	if tx.Bucket(bucketWords) == nil {
		return false
	}
	v, n := binary.Uvarint(tx.Bucket(bucketMeta).Get(keySchema))
	return n > 0 && v >= schemaWords
}

// riceK returns the Rice parameter that codes n differences less one
// summing to sum in the fewest bits: from just above log2 of their mean
// down while that takes fewer (cost says how many bits a parameter
// takes for them exactly).
func riceK(n, sum uint64, cost func(k uint) uint64) uint {
	if n == 0 {
		return 0
	}
	k := min(uint(bits.Len64(sum/n)), maxRiceK) // floor(log2(mean))+1; 0 for a mean below 1
	for c := cost(k); k > 0; k-- {
		below := cost(k - 1)
		if below > c {
			break
		}
		c = below
	}
	return k
}

// riceFits reports whether parameter k codes the differences of ids
// (ascending, all past last) from the document before each, last first,
// in at most an eighth more bits than the parameter that suits them:
// a block coded with k may take them as they are.
func riceFits(k uint, last uint64, ids []uint64) bool {
	n := uint64(len(ids))
	cost := gapsCost(last, ids)
	best := cost(riceK(n, ids[len(ids)-1]-last-n, cost))
	return cost(k) <= best+best/8
}

// gapsCost returns how many bits each parameter codes the differences
// of ids (ascending, all past prev) from the document before each, prev
// first, in.
func gapsCost(prev uint64, ids []uint64) func(k uint) uint64 {
	return func(k uint) uint64 {
		c, p := uint64(len(ids))*uint64(k+1), prev
		for _, id := range ids {
			c, p = c+(id-p-1)>>k, id
		}
		return c
	}
}

// riceWriter codes differences into a posting block's value.
type riceWriter struct {
	buf []byte
	k   uint
	acc uint64 // bits not written yet, in the low n bits
	n   uint
}

// start begins a block's value coded with k, in buf (reset).
func (w *riceWriter) start(buf []byte, k uint) {
	w.buf, w.k, w.acc, w.n = append(buf[:0], byte(k)), k, 0, 0
}

// resume continues the codes of a posting block's value val (its
// parameter byte first), whose codes take codeBits bits, in a buffer of
// its own: its padding goes, and the next add codes after its last code.
func (w *riceWriter) resume(val []byte, codeBits int) {
	full := 1 + codeBits/8
	w.buf = append(make([]byte, 0, max(len(val), postingBlockBytes)+16), val[:full]...)
	w.k, w.n, w.acc = uint(val[0]), uint(codeBits%8), 0
	if w.n > 0 {
		w.acc = uint64(val[full] >> (8 - w.n))
	}
}

// put appends v's low n bits (n at most 32).
func (w *riceWriter) put(v uint64, n uint) {
	w.acc = w.acc<<n | v&(1<<n-1)
	w.n += n
	for w.n >= 8 {
		w.n -= 8
		w.buf = append(w.buf, byte(w.acc>>w.n))
	}
}

// add codes difference d (at least 1).
func (w *riceWriter) add(d uint64) {
	d--
	for q := d >> w.k; ; {
		if q < 32 {
			w.put(1<<(q+1)-2, uint(q)+1) // q ones, a zero
			break
		}
		w.put(1<<32-1, 32)
		q -= 32
	}
	low := d & (1<<w.k - 1)
	if w.k > 32 {
		w.put(low>>32, w.k-32)
		low &= 1<<32 - 1
		w.put(low, 32)
		return
	}
	w.put(low, w.k)
}

// bytes returns how many bytes the value holds so far, its last byte
// counted.
func (w *riceWriter) bytes() int { return len(w.buf) + int(w.n+7)/8 }

// finish pads the last byte with 1 bits and returns the value.
func (w *riceWriter) finish() []byte {
	if w.n > 0 {
		pad := 8 - w.n
		w.put(1<<pad-1, pad)
	}
	return w.buf
}

// eachPosting calls fn with each document of a posting block that
// starts at first, in order.
func eachPosting(first uint64, val []byte, fn func(uint64)) error {
	_, err := walkPostings(first, val, fn)
	return err
}

// postingsEnd returns the last document of a posting block that starts
// at first, and how many bits its codes take after its parameter byte
// (0 for a block of one document, which has neither): where codes
// appended to it go.
func postingsEnd(first uint64, val []byte) (last uint64, codeBits int, err error) {
	pad, err := walkPostings(first, val, func(id uint64) { last = id })
	if err != nil || len(val) == 0 {
		return last, 0, err
	}
	return last, 8*(len(val)-1) - pad, nil
}

// walkPostings is eachPosting, and returns how many bits pad the
// value's last byte.
func walkPostings(first uint64, val []byte, fn func(uint64)) (pad int, err error) {
	fn(first)
	if len(val) == 0 {
		return 0, nil
	}
	k := uint(val[0])
	if k > maxRiceK {
		return 0, fmt.Errorf("bad posting block: parameter %d: %w", k, dag.ErrBadEncoding)
	}
	val = val[1:]
	var acc uint64 // unread bits, from the top
	var n uint     // how many
	id := first
	for {
		var q uint64
		start := true
		for {
			for n <= 56 && len(val) > 0 { // refilled here, not in a closure: acc and n stay in registers
				acc |= uint64(val[0]) << (56 - n)
				val = val[1:]
				n += 8
			}
			ones := uint(bits.LeadingZeros64(^acc))
			if ones < n {
				q += uint64(ones)
				acc <<= ones + 1
				n -= ones + 1
				break
			}
			// Every bit left is 1: the padding, when it ends the value
			// and starts no code.
			if len(val) == 0 {
				if start && n < 8 {
					return int(n), nil
				}
				return 0, fmt.Errorf("bad posting block: a code runs past its end: %w", dag.ErrBadEncoding)
			}
			q += uint64(n)
			acc, n, start = 0, 0, false
		}
		if n < k {
			for n <= 56 && len(val) > 0 {
				acc |= uint64(val[0]) << (56 - n)
				val = val[1:]
				n += 8
			}
			if n < k {
				return 0, fmt.Errorf("bad posting block: a code runs past its end: %w", dag.ErrBadEncoding)
			}
		}
		low := uint64(0)
		if k > 0 {
			low = acc >> (64 - k)
			acc <<= k
			n -= k
		}
		if q >= 1<<(63-k) {
			return 0, fmt.Errorf("bad posting block: a difference out of range: %w", dag.ErrBadEncoding)
		}
		d := q<<k | low
		if id+d+1 <= id {
			return 0, fmt.Errorf("bad posting block: a document out of range: %w", dag.ErrBadEncoding)
		}
		id += d + 1
		fn(id)
	}
}

// cutBlocks codes ids (ascending, at least one) as posting blocks with
// the parameter that suits them, and calls fn with each block's first
// document and value: a block takes the documents after its first until
// its value holds postingBlockBytes or more, and the next document
// starts the next block. Each value is a new slice (bbolt keeps the
// values put until the transaction commits).
func cutBlocks(ids []uint64, fn func(first uint64, val []byte) error) error {
	k := idsRiceK(ids)
	i := 0
	return cutRun(k, func() (uint64, bool) {
		if i == len(ids) {
			return 0, false
		}
		i++
		return ids[i-1], true
	}, fn)
}

// idsRiceK returns the Rice parameter that codes the gaps of ids
// (ascending, at least one) in the fewest bits.
func idsRiceK(ids []uint64) uint {
	n := uint64(len(ids) - 1)
	return riceK(n, ids[len(ids)-1]-ids[0]-n, gapsCost(ids[0], ids[1:]))
}

// cutRun is cutBlocks for the documents next yields, with parameter k.
func cutRun(k uint, next func() (uint64, bool), fn func(first uint64, val []byte) error) error {
	first, ok := next()
	if !ok {
		return nil
	}
	var w riceWriter
	w.start(nil, k)
	last, empty := first, true
	flush := func() error {
		val := []byte{}
		if !empty {
			val = w.finish()
		}
		return fn(first, val)
	}
	for id, ok := next(); ok; id, ok = next() {
		if w.bytes() >= postingBlockBytes {
			if err := flush(); err != nil {
				return err
			}
			first, last, empty = id, id, true
			w.start(make([]byte, 0, postingBlockBytes+16), k)
			continue
		}
		w.add(id - last)
		last, empty = id, false
	}
	return flush()
}

// encodePostings is a posting block's value for ids (ascending, at
// least one), however long.
func encodePostings(ids []uint64) []byte {
	if len(ids) == 1 {
		return []byte{}
	}
	k := idsRiceK(ids)
	var w riceWriter
	w.start(nil, k)
	for i := 1; i < len(ids); i++ {
		w.add(ids[i] - ids[i-1])
	}
	return w.finish()
}
