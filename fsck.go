package tract

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/store"
)

// FsckReport is the result of Fsck: counts and every problem found.
type FsckReport = store.FsckReport

// Fsck re-derives the hash of every object, decodes every commit, ref and
// reflog entry, and checks every parent, blob and ref reference. Damage is
// reported in the result, not as a panic; the error is non-nil only when the
// repository cannot be read at all.
func (t *Tract) Fsck(ctx context.Context) (*FsckReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var r *FsckReport
	err := t.withStore(func(st store.Store) (err error) {
		r, err = store.Fsck(st)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("fsck: %w", err)
	}
	return r, nil
}
