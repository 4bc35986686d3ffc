package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/tractdag/tract/refs"
)

// CloseAbandonedSides closes, as its program's close would, every side
// chain (a ref under refs.SidePrefix) whose ref last moved before cutoff:
// the ref is deleted and its reflog records where the chain ended, at
// now, so the chain is listed among the orphans and protected for the
// expiry from now. It returns how many it closed.
func CloseAbandonedSides(tx Tx, cutoff, now time.Time) (int, error) {
	all, err := tx.Refs()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range all {
		if !strings.HasPrefix(r.Name, refs.SidePrefix) {
			continue
		}
		es, err := tx.Reflog(r.Name)
		if err != nil {
			return n, err
		}
		var moved time.Time
		if len(es) > 0 {
			moved = es[len(es)-1].Time
		}
		if moved.After(cutoff) {
			continue
		}
		if err := tx.DeleteRef(r.Name); err != nil {
			return n, err
		}
		msg := fmt.Sprintf("side: closed by gc, unmoved since %s (its program ended without closing it)", moved.UTC().Format(time.RFC3339))
		if err := tx.AppendReflog(r.Name, refs.Entry{Old: r.Hash, Time: now, Action: refs.ActionSide, Message: msg}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
