package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// allReached agrees with a walk from the tips and the unexpired reflog
// entries' commits, on random histories: merges, refs and entries that
// name commits that are gone, parents that are missing (then it must
// not report everything reached), names sorted in memory and in many
// runs on disk.
func TestAllReached_AgreesWithAWalk(t *testing.T) {
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expired := func(e refs.Entry) bool { return !e.Time.After(old) }
	agreed := map[bool]int{}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 7))
		// A third of the histories leave no garbage and no parent missing
		// by construction, a third no garbage but a parent missing (of
		// the first commit), the others anything.
		clean, lost := seed%3 != 2, seed%3 == 1
		st := NewMemory()
		var hashes []dag.Hash
		parents := map[dag.Hash][]dag.Hash{}
		missing := false
		var tips, roots []dag.Hash
		require.NoError(t, st.Update(context.Background(), func(tx Tx) error {
			for i := range 20 + r.IntN(200) {
				c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum([]byte(fmt.Sprint(i))), Time: old.Add(time.Duration(i))}
				if lost && i == 0 {
					c.Parents = []dag.Hash{dag.Sum([]byte("lost"))}
					missing = true
				}
				for range r.IntN(3) {
					switch {
					case len(hashes) > 0 && r.IntN(40) > 0:
						c.Parents = append(c.Parents, hashes[r.IntN(len(hashes))])
					case !clean && r.IntN(4) == 0:
						c.Parents = append(c.Parents, dag.Sum([]byte(fmt.Sprint("gone ", i))))
						missing = true
					}
				}
				h, err := tx.PutCommit(c)
				if err != nil {
					return err
				}
				hashes = append(hashes, h)
				parents[h] = c.Parents
			}
			// Most histories keep every commit: the tips of the chains
			// (the commits no other names) are refs or reflog entries.
			named := map[dag.Hash]bool{}
			for _, ps := range parents {
				for _, p := range ps {
					named[p] = true
				}
			}
			for i, h := range hashes {
				if named[h] || !clean && r.IntN(10) == 0 {
					continue // a parent, or left unnamed: garbage
				}
				switch r.IntN(3) {
				case 0:
					if err := tx.SetRef(refs.Ref{Name: fmt.Sprint("refs/heads/b", i), Hash: h}); err != nil {
						return err
					}
					tips = append(tips, h)
					roots = append(roots, h)
				default:
					e := refs.Entry{Old: dag.Sum([]byte("never a commit")), New: h, Time: old.Add(time.Hour), Action: "commit"}
					if !clean && r.IntN(5) == 0 {
						e.Time = old // expired: protects nothing
					} else {
						roots = append(roots, h)
					}
					if err := tx.AppendReflog(fmt.Sprint("refs/heads/r", i%4), e); err != nil {
						return err
					}
				}
			}
			return nil
		}))
		reached := map[dag.Hash]bool{}
		stack := append([]dag.Hash(nil), roots...)
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, ok := parents[h]; !ok || reached[h] {
				continue
			}
			reached[h] = true
			stack = append(stack, parents[h]...)
		}
		want := !missing && len(reached) == len(hashes)
		for _, budget := range []int{1 << 20, 512} {
			require.NoError(t, st.View(context.Background(), func(tx Tx) error {
				got, err := allReached(tx, tips, expired, budget)
				require.NoError(t, err)
				assert.Equal(t, want, got, "seed %d, budget %d: %d commits, %d reached, a parent missing: %v", seed, budget, len(hashes), len(reached), missing)
				return nil
			}))
		}
		agreed[want]++
	}
	// The histories must have tried both answers.
	assert.Positive(t, agreed[true])
	assert.Positive(t, agreed[false])
}
