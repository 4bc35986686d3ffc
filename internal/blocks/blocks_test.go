package blocks_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/internal/blocks"
)

func TestList(t *testing.T) {
	for _, n := range []int{0, 1, blocks.Size - 1, blocks.Size, blocks.Size + 1, 3*blocks.Size + 7} {
		var l blocks.List[int]
		want := make([]int, 0, n)
		for i := range n {
			l.Add(i)
			want = append(want, i)
		}
		slices.Reverse(want)
		assert.Equal(t, n, l.Len())
		assert.Equal(t, want, l.Reversed(), "n=%d", n)
		assert.Equal(t, want, slices.Collect(l.Backward()), "n=%d", n)
		if n > 2 {
			var first []int
			for v := range l.Backward() {
				if first = append(first, v); len(first) == 2 {
					break
				}
			}
			assert.Equal(t, want[:2], first, "stops when asked")
		}
	}
}
