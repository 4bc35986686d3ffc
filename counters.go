package tract

import (
	"context"

	"github.com/tractdag/tract/store"
)

// countersOf returns the derived counters of commit h (zero for a zero h),
// computing (and, when write is set, storing) the entries missing along
// its chain: see store.CountersOf.
func countersOf(ctx context.Context, tx store.Tx, h Hash, write bool) (store.Counters, error) {
	return store.CountersOf(ctx, tx, h, write)
}
