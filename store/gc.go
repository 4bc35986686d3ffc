package store

import (
	"bytes"
	"errors"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// Garbage marks, by position in g, the commits a garbage collection
// deletes: those no branch or HEAD reaches and no reflog entry protects.
// An entry that expired does not report protects the commits it names (as
// Old or New) and their ancestors. It returns the graph of every commit
// (what the deletion needs), the marks and how many commits they mark.
//
// It first finds out whether anything is garbage holding only each
// commit's hash and first parent (36 bytes a commit, no Graph), which is
// gc's usual case; then g and dead are nil and n is 0.
func Garbage(tx Tx, expired func(refs.Entry) bool) (g *dag.Graph, dead []bool, n int, err error) {
	protect, err := protected(tx, expired)
	if err != nil {
		return nil, nil, 0, err
	}
	tips, err := RefTips(tx)
	if err != nil {
		return nil, nil, 0, err
	}
	if all, err := allReached(tx, tips, protect); err != nil || all {
		return nil, nil, 0, err
	}
	if g, err = LoadGraph(tx); err != nil {
		return nil, nil, 0, err
	}
	live, err := g.Reachable(tips...)
	if err != nil {
		return nil, nil, 0, err
	}
	kept, err := g.Reachable(slices.DeleteFunc(protect, func(h dag.Hash) bool {
		_, ok := g.Index(h)
		return !ok
	})...)
	if err != nil {
		return nil, nil, 0, err
	}
	dead = make([]bool, g.Len())
	for i := range dead {
		if dead[i] = !live[i] && !kept[i]; dead[i] {
			n++
		}
	}
	return g, dead, n, nil
}

// protected returns the commits the unexpired reflog entries name.
func protected(tx Tx, expired func(refs.Entry) bool) ([]dag.Hash, error) {
	var out []dag.Hash
	names, err := tx.ReflogNames()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		es, err := tx.Reflog(name)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if !expired(e) {
				out = append(out, e.Old, e.New)
			}
		}
	}
	return out, nil
}

// errUnsure stops allReached where the full walk must decide: a missing
// parent (an error, or history a salvage lost on purpose).
var errUnsure = errors.New("not sure")

// allReached reports whether tips, protect and their ancestors are every
// commit of tx. It reads the commits three times (to count, to list the
// hashes in key order, to resolve parents to positions), holding 36 bytes
// a commit, and walks with a bitset. Hashes of protect that are not
// commits are passed by; a tip or a parent that is missing makes it
// report false, for the walk over a Graph to decide (and report it).
func allReached(tx Tx, tips, protect []dag.Hash) (bool, error) {
	n := 0
	if err := tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }); err != nil {
		return false, err
	}
	hashes := make([]dag.Hash, 0, n)
	if err := tx.ForEachCommit(func(h dag.Hash, _ []byte) error {
		if len(hashes) == n {
			return errUnsure // a commit came in between: not this transaction
		}
		hashes = append(hashes, h)
		return nil
	}); err != nil {
		return false, unsure(err)
	}
	index := func(h dag.Hash) int32 {
		i, ok := slices.BinarySearchFunc(hashes, h, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		if !ok {
			return -1
		}
		return int32(i)
	}
	// first holds each commit's first parent (-1: a root); more the
	// parents after it, of merge commits.
	first := make([]int32, len(hashes))
	more := map[int32][]int32{}
	i := 0
	err := tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
		if i >= len(hashes) || hashes[i] != h {
			return errUnsure
		}
		first[i] = -1
		var bad bool
		err := dag.DecodeParents(raw, func(p dag.Hash) {
			j := index(p)
			switch {
			case j < 0:
				bad = true
			case first[i] < 0:
				first[i] = j
			default:
				more[int32(i)] = append(more[int32(i)], j)
			}
		})
		if err != nil || bad {
			return errUnsure
		}
		i++
		return nil
	})
	if err != nil {
		return false, unsure(err)
	}
	seen := make([]uint64, (len(hashes)+63)/64)
	var stack []int32
	push := func(j int32) {
		if seen[j/64]&(1<<(j%64)) == 0 {
			seen[j/64] |= 1 << (j % 64)
			stack = append(stack, j)
		}
	}
	for _, t := range tips {
		j := index(t)
		if j < 0 {
			return false, nil
		}
		push(j)
	}
	for _, h := range protect {
		if j := index(h); j >= 0 {
			push(j)
		}
	}
	reached := 0
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		reached++
		if first[j] >= 0 {
			push(first[j])
		}
		for _, p := range more[j] {
			push(p)
		}
	}
	return reached == len(hashes), nil
}

// unsure turns errUnsure into no error: the caller then walks a Graph.
func unsure(err error) error {
	if errors.Is(err, errUnsure) {
		return nil
	}
	return err
}
