package tract

import (
	"context"
	"fmt"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// SwitchOrphan points HEAD at name, a new branch with no commits yet, as
// 'git switch --orphan' does: the next commit on it is a root, so a chat
// there starts a conversation with no history. The branch comes into
// being with that first commit; until then it is unborn (Status.Head is
// zero) and is not listed by Branches. The branch HEAD was on is left as
// it is, and no reflog entry is written (HEAD's reflog records the first
// commit). It fails with ErrBranchExists when name is a branch already,
// and with an error from refs.ValidateBranchName when name cannot be one.
// On a view made by OnBranch it acts as on the handle: it moves HEAD.
func (t *Tract) SwitchOrphan(ctx context.Context, name string) (*Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := refs.ValidateBranchName(name); err != nil {
		return nil, fmt.Errorf("orphan branch: %w", err)
	}
	t = t.headView()
	full := refs.BranchRef(name)
	err := t.update(ctx, func(tx store.Tx) error {
		_, err := tx.Ref(full)
		switch {
		case err == nil:
			return fmt.Errorf("%w: %s", ErrBranchExists, name)
		case !isNotFound(err):
			return err
		}
		return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: full})
	})
	if err != nil {
		return nil, fmt.Errorf("orphan branch: %w", err)
	}
	return t.Status(ctx)
}
