package store

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Posting blocks cut from lists of every density read back as the lists,
// each block but the last past postingBlockBytes only by its last code.
func TestRiceBlocks_RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		n    int
		gap  func() uint64
	}{
		{"one document", 1, func() uint64 { return 1 }},
		{"two adjacent", 2, func() uint64 { return 1 }},
		{"dense", 20000, func() uint64 { return 1 }},
		{"a fifth", 20000, func() uint64 { return 1 + rng.Uint64N(9) }},
		{"rare", 3000, func() uint64 { return 1 + rng.Uint64N(2000) }},
		{"huge gaps", 200, func() uint64 { return 1 + rng.Uint64N(1<<38) }},
		{"mixed", 5000, func() uint64 {
			if rng.IntN(50) == 0 {
				return 1 + rng.Uint64N(1<<20)
			}
			return 1 + rng.Uint64N(3)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := []uint64{rng.Uint64N(1000)}
			for len(ids) < tc.n {
				ids = append(ids, ids[len(ids)-1]+tc.gap())
			}
			var got []uint64
			blocks := 0
			err := cutBlocks(ids, func(first uint64, val []byte) error {
				blocks++
				assert.Less(t, len(val), postingBlockBytes+16)
				return eachPosting(first, val, func(id uint64) { got = append(got, id) })
			})
			require.NoError(t, err)
			assert.Equal(t, ids, got)
			got = got[:0]
			require.NoError(t, eachPosting(ids[0], encodePostings(ids), func(id uint64) { got = append(got, id) }))
			assert.Equal(t, ids, got)
			if tc.n == 20000 {
				assert.Greater(t, blocks, 1)
			}
			// The bulk build's list, held as uvarint differences, cuts
			// the same blocks.
			p := postingList{first: ids[0], last: ids[0]}
			for _, id := range ids[1:] {
				p.add(id)
			}
			var fromList []uint64
			require.NoError(t, p.blocks(func(first uint64, val []byte) error {
				return eachPosting(first, val, func(id uint64) { fromList = append(fromList, id) })
			}))
			assert.Equal(t, ids, fromList)
		})
	}
}

// A value cut short or with a bad parameter is an error, never a panic
// or a list that goes on.
func TestRiceBlocks_BadValues(t *testing.T) {
	ids := []uint64{5, 9, 10, 300, 301, 5000}
	val := encodePostings(ids)
	for _, bad := range [][]byte{{57}, {200, 1}, val[:len(val)-1], append(append([]byte{}, val...), 0xff, 0xff)} {
		err := eachPosting(5, bad, func(uint64) {})
		assert.Error(t, err, "%x", bad)
	}
}

// A word's posting blocks topped up merge after merge (appendPostings)
// read back as its whole list, repeats dropped, whatever the density of
// the documents before and after: codes appended after the last block's
// own while its parameter suits them, the block cut again when it does
// not; every block but the last past postingBlockBytes only by its last
// code, and the blocks no more than an eighth larger than a list cut
// at once.
func TestRiceBlocks_TopUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dense := func() uint64 { return 1 }
	fifth := func() uint64 { return 1 + rng.Uint64N(9) }
	rare := func() uint64 { return 1 + rng.Uint64N(2000) }
	for _, tc := range []struct {
		name          string
		before, after func() uint64
		batch         int
	}{
		{"dense, a document at a time", dense, dense, 1},
		{"dense", dense, dense, 300},
		{"a fifth", fifth, fifth, 200},
		{"rare", rare, rare, 20},
		{"dense, then rare", dense, rare, 50},
		{"rare, then dense", rare, dense, 500},
		{"a fifth, then dense, in large batches", fifth, dense, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "words.db"), 0o600, &bolt.Options{NoSync: true})
			require.NoError(t, err)
			defer db.Close()
			ids := []uint64{rng.Uint64N(1000)}
			for len(ids) < 6000 {
				ids = append(ids, ids[len(ids)-1]+tc.before())
			}
			for len(ids) < 12000 {
				ids = append(ids, ids[len(ids)-1]+tc.after())
			}
			prefix := postingPrefix(prefixRecent, "word")
			for at := 0; at < len(ids); {
				n := min(1+rng.IntN(2*tc.batch), len(ids)-at)
				batch := ids[max(at-rng.IntN(3), 0) : at+n] // a few indexed already
				require.NoError(t, db.Update(func(tx *bolt.Tx) error {
					b, err := tx.CreateBucketIfNotExists(bucketWords)
					if err != nil {
						return err
					}
					return appendPostings(b, prefixRecent, "word", batch)
				}))
				at += n
			}
			var got []uint64
			size, blocks := 0, 0
			require.NoError(t, db.View(func(tx *bolt.Tx) error {
				c := tx.Bucket(bucketWords).Cursor()
				for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
					if blocks > 0 {
						assert.Less(t, len(v), postingBlockBytes+16)
					}
					size, blocks = size+len(v), blocks+1
					if err := eachPosting(binary.BigEndian.Uint64(k[len(prefix):]), v, func(id uint64) { got = append(got, id) }); err != nil {
						return err
					}
				}
				return nil
			}))
			require.Equal(t, ids, got)
			once := 0
			require.NoError(t, cutBlocks(ids, func(_ uint64, val []byte) error { once += len(val); return nil }))
			assert.LessOrEqual(t, size, once+once/8+blocks*2, "bytes of %d blocks against %d cut at once", blocks, once)
		})
	}
}

// postingsEnd finds where a block's codes end, its padding apart, so that
// codes resumed there read on as if the block had been cut with them.
func TestRiceBlocks_Resume(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 200 {
		ids := []uint64{rng.Uint64N(100)}
		gap := 1 + rng.Uint64N(1<<rng.UintN(20))
		for n := 1 + rng.IntN(60); len(ids) < n; {
			ids = append(ids, ids[len(ids)-1]+1+rng.Uint64N(gap))
		}
		cut := 1 + rng.IntN(len(ids))
		val := encodePostings(ids[:cut])
		last, codeBits, err := postingsEnd(ids[0], val)
		require.NoError(t, err)
		require.Equal(t, ids[cut-1], last)
		if cut == 1 {
			assert.Zero(t, codeBits)
			continue
		}
		var w riceWriter
		w.resume(val, codeBits)
		for i := cut; i < len(ids); i++ {
			w.add(ids[i] - ids[i-1])
		}
		var got []uint64
		require.NoError(t, eachPosting(ids[0], w.finish(), func(id uint64) { got = append(got, id) }))
		assert.Equal(t, ids, got)
	}
}
