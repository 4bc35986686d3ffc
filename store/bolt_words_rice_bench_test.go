package store

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// BenchmarkPostingDecode decodes the postings of a word in a fifth of
// a million documents, Rice-coded in blocks (schema 8) and as schema 7's
// uvarints, calling a function with each as a search does.
func BenchmarkPostingDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []uint64{0}
	for len(ids) < 200_000 {
		ids = append(ids, ids[len(ids)-1]+1+rng.Uint64N(9))
	}
	type block struct {
		first uint64
		val   []byte
	}
	var rice []block
	_ = cutBlocks(ids, func(first uint64, val []byte) error {
		rice = append(rice, block{first, val})
		return nil
	})
	b.Run("rice", func(b *testing.B) {
		var sum uint64
		for b.Loop() {
			for _, bl := range rice {
				_ = eachPosting(bl.first, bl.val, func(id uint64) { sum += id })
			}
		}
	})
	var uv []byte
	for i := 1; i < len(ids); i++ {
		uv = binary.AppendUvarint(uv, ids[i]-ids[i-1])
	}
	b.Run("uvarint", func(b *testing.B) { // as schema 7 read them
		var sum uint64
		fn := func(id uint64) { sum += id }
		for b.Loop() {
			id := ids[0]
			fn(id)
			for v := uv; len(v) > 0; {
				d, n := binary.Uvarint(v)
				id += d
				fn(id)
				v = v[n:]
			}
		}
	})
}
