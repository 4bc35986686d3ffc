package store

import (
	"bytes"
	"errors"
	"iter"
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
// It first finds out whether anything is garbage in memory that does not
// grow with history (see allReached), which is gc's usual case; then g
// and dead are nil and n is 0.
func Garbage(tx Tx, expired func(refs.Entry) bool) (g *dag.Graph, dead []bool, n int, err error) {
	tips, err := RefTips(tx)
	if err != nil {
		return nil, nil, 0, err
	}
	if all, err := allReached(tx, tips, expired, gcSortBudget); err != nil || all {
		return nil, nil, 0, err
	}
	protect, err := protected(tx, expired)
	if err != nil {
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
	err := eachProtected(tx, expired, func(h dag.Hash) error {
		out = append(out, h)
		return nil
	})
	return out, err
}

// eachProtected calls fn with each commit an unexpired reflog entry names,
// an entry at a time where tx reads reflogs so (see EachReflog).
func eachProtected(tx Tx, expired func(refs.Entry) bool, fn func(dag.Hash) error) error {
	return EachReflog(tx, func(_ string, e refs.Entry) error {
		if expired(e) {
			return nil
		}
		if err := fn(e.Old); err != nil {
			return err
		}
		return fn(e.New)
	})
}

// errUnsure stops allReached where the full walk must decide: a missing
// parent (an error, or history a salvage lost on purpose), or a sort that
// failed.
var errUnsure = errors.New("not sure")

// gcSortBudget is the memory Garbage's allReached sorts names in; more go
// to temporary files (see PackSorter). A name costs about 64 bytes there,
// so a run takes 65,536; at a million commits gc's peak was 44 MiB with
// it (85 with 16 MiB, as the buffer and the collector's headroom double
// it).
const gcSortBudget = 4 << 20

// allReached reports whether tips, the commits the unexpired reflog
// entries name, and their ancestors are every commit of tx. In a history
// (a DAG) that holds exactly when every commit is a tip, is named by such
// an entry, or is the parent of another commit: of the commits nothing
// reaches, one that is no other's parent among them is no parent at all,
// or its child would be reached, and it too. So allReached sorts the
// names (tips, the entries' commits, every commit's parents) in budget
// bytes of memory, in temporary files past that, and reads them beside
// the commits in key order: its memory does not grow with history (the
// reflogs are read an entry at a time, see EachReflogEntry). A tip or a
// parent that is no commit makes it report false, for the walk over a
// Graph to decide (and report it); commits the entries name that are
// gone are passed by.
func allReached(tx Tx, tips []dag.Hash, expired func(refs.Entry) bool, budget int) (bool, error) {
	s := NewPackSorter("", budget)
	defer s.Close()
	// A tip or a parent must be a commit, a reflog entry's commit need
	// not: two kinds, which the sorter orders by hash alike and keeps
	// apart. A sorter that fails (no room for its runs) leaves the
	// answer to the walk over a Graph, as before there was one.
	const must, may = PackCommit, PackCounters
	add := func(kind PackKind, h dag.Hash) error {
		if s.Add(PackEntry{Kind: kind, Hash: h}) != nil {
			return errUnsure
		}
		return nil
	}
	for _, h := range tips {
		if err := add(must, h); err != nil {
			return false, nil
		}
	}
	if err := eachProtected(tx, expired, func(h dag.Hash) error { return add(may, h) }); err != nil {
		return false, unsure(err)
	}
	if err := tx.ForEachCommit(func(_ dag.Hash, raw []byte) error {
		var err error
		derr := dag.DecodeParents(raw, func(p dag.Hash) {
			if err == nil {
				err = add(must, p)
			}
		})
		if derr != nil {
			return errUnsure
		}
		return err
	}); err != nil {
		return false, unsure(err)
	}
	next, stop := iter.Pull2(s.Sorted())
	defer stop()
	name, nerr, ok := next()
	err := tx.ForEachCommit(func(h dag.Hash, _ []byte) error {
		named := false
		for ; ok; name, nerr, ok = next() {
			if nerr != nil {
				return errUnsure
			}
			c := bytes.Compare(name.Hash[:], h[:])
			if c > 0 {
				break
			}
			if c < 0 && name.Kind == must {
				return errUnsure // a tip or a parent that is no commit
			}
			named = named || c == 0
		}
		if !named {
			return errUnsure // nothing reaches h
		}
		return nil
	})
	if err != nil {
		return false, unsure(err)
	}
	for ; ok; name, nerr, ok = next() {
		if nerr != nil {
			return false, nil
		}
		if name.Kind == must {
			return false, nil // a tip or a parent past the last commit
		}
	}
	return true, nil
}

// unsure turns errUnsure into no error: the caller then walks a Graph.
func unsure(err error) error {
	if errors.Is(err, errUnsure) {
		return nil
	}
	return err
}
