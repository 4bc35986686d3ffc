package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// ResetMode says what Reset does with the commits it leaves behind.
type ResetMode int

const (
	// Soft moves the branch and keeps the commits left behind as orphans,
	// listed by LogAll and protected by the reflog until GC expires them.
	Soft ResetMode = iota
	// Hard moves the branch, then permanently deletes the commits the move
	// made unreachable from every ref, the blobs only they used, and the
	// reflog entries that mention them, and overwrites the file space they
	// occupied. It is for erasing something (a leaked secret) and cannot be
	// undone.
	Hard
)

// ErrInvalidResetMode is returned by Reset and ResetUnborn for a mode that
// is neither Soft nor Hard.
var ErrInvalidResetMode = errors.New("invalid reset mode")

// String returns the ResetMode as users see it.
func (m ResetMode) String() string {
	if m == Hard {
		return "hard"
	}
	return "soft"
}

// ResetResult reports what Reset did.
type ResetResult struct {
	From Hash `json:"from"`
	To   Hash `json:"to"`
	// Orphaned is the number of commits a Soft reset made orphans: those
	// on the first-parent chain from From down to where it meets To's
	// chain that no ref reaches after the move (no branch, HEAD or side
	// chain; ORIG_HEAD, which names From, does not count). A commit that
	// left the branch but is still on another branch is not one.
	Orphaned int `json:"orphaned"`
	// Deleted counts what a Hard reset erased.
	Deleted Removed `json:"deleted"`
}

// ResetOption configures Reset.
type ResetOption func(*resetConfig)

type resetConfig struct {
	expect          Hash
	expectSet       bool
	action, message string
}

// ResetIf makes Reset a compare-and-swap: it moves the branch only if the
// branch still stands at h (read before a prompt or a model call, say),
// and otherwise moves nothing and returns a *ConflictError.
func ResetIf(h Hash) ResetOption {
	return func(c *resetConfig) { c.expect, c.expectSet = h, true }
}

// ResetReflog sets the reflog action and message of the move (default
// action "reset", message "reset --MODE: moving to REV"), so the reflog
// says why the branch moved.
func ResetReflog(action, message string) ResetOption {
	return func(c *resetConfig) { c.action, c.message = action, message }
}

// Reset moves the current branch (or a detached HEAD, or a view's branch)
// to rev, sets ORIG_HEAD
// to where it was and records a "reset" reflog entry. See ResetMode for what
// happens to the commits left behind.
func (t *Tract) Reset(ctx context.Context, rev string, mode ResetMode, opts ...ResetOption) (*ResetResult, error) {
	return t.reset(ctx, mode, opts, rev, func(tx store.Tx) (Hash, error) { return t.resolve(tx, rev) })
}

// ResetUnborn takes every commit off the current branch, as if nothing had
// been committed on it yet: the branch's ref is removed while HEAD keeps
// naming the branch, so the next commit starts it again with no parent.
// It is how the only commits of a branch are taken back (a first message
// cancelled while it was answered, say), which Reset cannot do because
// there is no revision to move to. ORIG_HEAD and the reflog record where
// the branch was ('tract reset --soft ORIG_HEAD' undoes it), and mode
// says what happens to the commits left behind, as for Reset.
//
// Only the branch HEAD is on can be unborn: a detached HEAD has no branch
// (the error wraps ErrDetachedHead), and a view's branch that HEAD does
// not name would cease to exist (delete it instead). ResetIf and
// ResetReflog apply as for Reset.
func (t *Tract) ResetUnborn(ctx context.Context, mode ResetMode, opts ...ResetOption) (*ResetResult, error) {
	return t.reset(ctx, mode, opts, "unborn", func(store.Tx) (Hash, error) { return Hash{}, nil })
}

// reset moves the position to the commit target returns in the
// transaction (zero: the unborn branch); rev names it in the reflog.
func (t *Tract) reset(ctx context.Context, mode ResetMode, opts []ResetOption, rev string, target func(store.Tx) (Hash, error)) (*ResetResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if mode != Soft && mode != Hard {
		// Never the destructive path by default.
		return nil, fmt.Errorf("reset: %w %d: use Soft or Hard", ErrInvalidResetMode, int(mode))
	}
	var cfg resetConfig
	for _, o := range opts {
		o(&cfg)
	}
	res := &ResetResult{}
	err := t.update(ctx, func(tx store.Tx) error {
		cur, err := t.position(tx)
		if err != nil {
			return err
		}
		if cfg.expectSet && cur.Hash != cfg.expect {
			return &ConflictError{Ref: cur.ref(), Expected: cfg.expect, Actual: cur.Hash}
		}
		to, err := target(tx)
		if err != nil {
			return err
		}
		res.From, res.To = cur.Hash, to
		if to == cur.Hash {
			return nil
		}
		var g *dag.Graph
		var before []bool
		if mode == Hard {
			if g, err = store.LoadGraph(tx); err != nil {
				return err
			}
			if before, err = store.Reachable(tx, g); err != nil {
				return err
			}
		} else if res.Orphaned, err = orphanedBy(ctx, tx, cur, to); err != nil {
			return err
		}
		action, msg := refs.ActionReset, fmt.Sprintf("reset --%s: moving to %s", mode, rev)
		if cfg.action != "" {
			action = cfg.action
		}
		if cfg.message != "" {
			msg = cfg.message
		}
		if to.IsZero() {
			err = t.makeUnborn(tx, cur, action, msg)
		} else {
			err = t.moveFrom(tx, cur, to, action, msg)
		}
		if err != nil {
			return err
		}
		if mode == Soft {
			return setOrigHead(tx, cur.Hash)
		}
		if err := tx.DeleteRef(refs.OrigHead); err != nil {
			return err
		}
		after, err := store.Reachable(tx, g)
		if err != nil {
			return err
		}
		left := make([]bool, g.Len())
		for i := range left {
			left[i] = before[i] && !after[i]
		}
		res.Deleted, err = erase(tx, g, left, after)
		return err
	})
	var erasure *ErasureError
	if errors.As(err, &erasure) {
		return res, fmt.Errorf("hard reset: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reset: %w", err)
	}
	return res, nil
}

// makeUnborn makes the branch of cur, which HEAD must name, unborn: its ref
// is removed and the branch's and HEAD's reflogs record the move from
// cur to nothing.
func (t *Tract) makeUnborn(tx store.Tx, cur head, action, msg string) error {
	if cur.detached() {
		return fmt.Errorf("%w at %s: only a branch can be unborn", ErrDetachedHead, cur.Hash.Short())
	}
	name, _ := refs.BranchName(cur.Branch)
	if h, err := tx.Ref(refs.HEAD); err != nil {
		return err
	} else if h.Target != cur.Branch {
		return fmt.Errorf("branch %q is not the one HEAD is on: unborn, it would cease to exist (delete it instead)", name)
	}
	if err := tx.DeleteRef(cur.Branch); err != nil {
		return err
	}
	e := refs.Entry{Old: cur.Hash, Time: t.now(), Action: action, Message: msg}
	if err := tx.AppendReflog(cur.Branch, e); err != nil {
		return err
	}
	return tx.AppendReflog(refs.HEAD, e)
}

// orphanedBy counts the commits a move of the position cur to to leaves
// no ref reaching: the commits on cur's first-parent chain above the point
// where it meets to's chain, less those another ref (a branch, HEAD, a
// side chain; not ORIG_HEAD, nor cur's own ref) still reaches (see
// store.Orphaned).
func orphanedBy(ctx context.Context, tx store.Tx, cur head, to Hash) (int, error) {
	if cur.Hash.IsZero() {
		return 0, nil
	}
	tips, err := tipsAfter(tx, cur)
	if err != nil {
		return 0, err
	}
	return store.Orphaned(ctx, tx, cur.Hash, to, tips)
}

// tipsAfter returns the commits the refs that keep commits reachable (as
// refTips) will point at once the position cur has moved: every such ref
// but cur's own and an attached HEAD that follows it.
func tipsAfter(tx store.Tx, cur head) ([]Hash, error) {
	return store.RefTipsBut(tx, func(r refs.Ref) bool {
		return r.Name == cur.ref() || r.IsSymbolic() && r.Target == cur.Branch
	})
}
