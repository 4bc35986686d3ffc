package store

import (
	"math/rand/v2"
	"testing"

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
