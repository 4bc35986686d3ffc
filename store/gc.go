package store

import (
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// Garbage marks, by position in g (a graph of every commit of tx), the
// commits a garbage collection deletes: those no branch or HEAD reaches
// and no reflog entry protects. An entry that expired does not report
// protects the commits it names (as Old or New) and their ancestors. It
// returns the marks and how many commits they mark.
func Garbage(tx Tx, g *dag.Graph, expired func(refs.Entry) bool) ([]bool, int, error) {
	live, err := Reachable(tx, g)
	if err != nil {
		return nil, 0, err
	}
	var protect []dag.Hash
	names, err := tx.ReflogNames()
	if err != nil {
		return nil, 0, err
	}
	for _, name := range names {
		es, err := tx.Reflog(name)
		if err != nil {
			return nil, 0, err
		}
		for _, e := range es {
			if expired(e) {
				continue
			}
			for _, h := range []dag.Hash{e.Old, e.New} {
				if _, ok := g.Index(h); ok {
					protect = append(protect, h)
				}
			}
		}
	}
	kept, err := g.Reachable(protect...)
	if err != nil {
		return nil, 0, err
	}
	dead := make([]bool, g.Len())
	n := 0
	for i := range dead {
		if dead[i] = !live[i] && !kept[i]; dead[i] {
			n++
		}
	}
	return dead, n, nil
}
