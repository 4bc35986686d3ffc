// Package blocks holds List, a list that grows in fixed-size blocks.
package blocks

import "iter"

// Size is the number of values in a block.
const Size = 4096

// List collects values in fixed-size blocks, so collecting an unknown
// number of them never copies what was already collected. The zero value
// is an empty list.
type List[T any] struct {
	full [][]T
	cur  []T
	n    int
}

// Add appends v.
func (b *List[T]) Add(v T) {
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.full = append(b.full, b.cur)
		}
		b.cur = make([]T, 0, Size)
	}
	b.cur = append(b.cur, v)
	b.n++
}

// Len is the number of values added.
func (b *List[T]) Len() int { return b.n }

// Backward yields every value, last added first.
func (b *List[T]) Backward() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := len(b.cur) - 1; i >= 0; i-- {
			if !yield(b.cur[i]) {
				return
			}
		}
		for k := len(b.full) - 1; k >= 0; k-- {
			for i := len(b.full[k]) - 1; i >= 0; i-- {
				if !yield(b.full[k][i]) {
					return
				}
			}
		}
	}
}

// Reversed returns every value in one slice of exact size, last added
// first.
func (b *List[T]) Reversed() []T {
	out := make([]T, 0, b.n)
	for v := range b.Backward() {
		out = append(out, v)
	}
	return out
}
