package tract

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// MaxBranchNameBytes is the longest name, in bytes, a new branch may
// have, on every backend; a longer one is ErrInvalidBranchName. A branch
// a store already holds under a longer name stays usable.
const MaxBranchNameBytes = refs.MaxBranchNameBytes

// Branch is a branch and the commit it points at.
type Branch struct {
	Name string `json:"name"`
	Hash Hash   `json:"hash"`
	// Current is true for the branch HEAD is on.
	Current bool `json:"current"`
}

// CreateBranch creates branch name at rev (HEAD when rev is empty) without
// switching to it.
func (t *Tract) CreateBranch(ctx context.Context, name, rev string) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return Hash{}, err
	}
	var at Hash
	err := t.update(ctx, func(tx store.Tx) (err error) {
		at, err = t.createBranch(tx, name, rev)
		return err
	})
	if err != nil {
		return Hash{}, fmt.Errorf("branch: %w", err)
	}
	return at, nil
}

func (t *Tract) createBranch(tx store.Tx, name, rev string) (Hash, error) {
	if err := refs.ValidateBranchName(name); err != nil {
		return Hash{}, err
	}
	full := refs.BranchRef(name)
	if _, err := tx.Ref(full); err == nil {
		return Hash{}, fmt.Errorf("%w: %s", ErrBranchExists, name)
	} else if !isNotFound(err) {
		return Hash{}, err
	}
	at, err := t.tipOf(tx, rev)
	if err != nil {
		return Hash{}, err
	}
	if at.IsZero() {
		return Hash{}, fmt.Errorf("%w: commit something before creating a branch", ErrUnbornBranch)
	}
	if err := tx.SetRef(refs.Ref{Name: full, Hash: at}); err != nil {
		return Hash{}, err
	}
	from := rev
	if from == "" {
		from = refs.HEAD
	}
	return at, tx.AppendReflog(full, refs.Entry{New: at, Time: t.now(), Action: refs.ActionBranch, Message: "branch: created from " + from})
}

// Branches lists every branch, sorted by name.
func (t *Tract) Branches(ctx context.Context) ([]Branch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Branch
	err := t.view(ctx, func(tx store.Tx) error {
		cur, err := readHead(tx)
		if err != nil {
			return err
		}
		all, err := tx.Refs()
		if err != nil {
			return err
		}
		for _, r := range all {
			if name, ok := refs.BranchName(r.Name); ok && !r.IsSymbolic() {
				out = append(out, Branch{Name: name, Hash: r.Hash, Current: r.Name == cur.Branch})
			}
		}
		return nil
	})
	return out, err
}

// DeleteBranch deletes branch name and its reflog. Its commits become
// orphans unless another ref reaches them. Deleting the branch HEAD is on
// fails with ErrCurrentBranch.
//
// name may also be the full name of a ref a salvage made for a chain no
// branch reached (refs/salvaged/<tip>, see Salvage), when no branch has
// that name: it is deleted the same way, once the chain is kept on a
// branch or not wanted.
func (t *Tract) DeleteBranch(ctx context.Context, name string) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return Hash{}, err
	}
	var was Hash
	err := t.update(ctx, func(tx store.Tx) error {
		full := refs.BranchRef(name)
		r, err := tx.Ref(full)
		if isNotFound(err) && strings.HasPrefix(name, refs.SalvagedPrefix) {
			full = name
			r, err = tx.Ref(full)
		}
		if isNotFound(err) {
			return fmt.Errorf("%w: %q", ErrBranchNotFound, name)
		} else if err != nil {
			return err
		}
		cur, err := readHead(tx)
		if err != nil {
			return err
		}
		if cur.Branch == full {
			return fmt.Errorf("%w: %s", ErrCurrentBranch, name)
		}
		was = r.Hash
		if err := tx.DeleteRef(full); err != nil {
			return err
		}
		if err := tx.ReplaceReflog(full, nil); err != nil {
			return err
		}
		// HEAD's reflog keeps the commits listable (and safe from GC) for now.
		return tx.AppendReflog(refs.HEAD, refs.Entry{Old: was, New: cur.Hash, Time: t.now(),
			Action: refs.ActionBranch, Message: "branch: deleted " + name})
	})
	if err != nil {
		return Hash{}, fmt.Errorf("branch -d: %w", err)
	}
	return was, nil
}

// Checkout points HEAD at target: a branch name attaches HEAD to the branch,
// anything else that resolves to a commit detaches HEAD there. Committing on
// a detached HEAD fails until a branch is created with Switch(name, true).
// On a view made by OnBranch it acts as on the handle: it moves HEAD.
func (t *Tract) Checkout(ctx context.Context, target string) (*Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t = t.headView()
	err := t.update(ctx, func(tx store.Tx) error {
		cur, err := readHead(tx)
		if err != nil {
			return err
		}
		// A branch attaches HEAD, even one named before its name was
		// reserved ("STRANDED"); HEAD and ORIG_HEAD name their own refs.
		full := refs.BranchRef(target)
		if r, err := tx.Ref(full); err == nil && target != refs.HEAD && target != refs.OrigHead {
			return t.attach(tx, cur, full, r.Hash, "checkout: moving to "+target)
		}
		h, err := t.resolve(tx, target)
		if err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: refs.HEAD, Hash: h}); err != nil {
			return err
		}
		return tx.AppendReflog(refs.HEAD, refs.Entry{Old: cur.Hash, New: h, Time: t.now(),
			Action: refs.ActionCheckout, Message: "checkout: detaching HEAD at " + h.Short()})
	})
	if err != nil {
		return nil, fmt.Errorf("checkout: %w", err)
	}
	return t.Status(ctx)
}

// Switch attaches HEAD to branch name; with create it first creates the
// branch at HEAD (which also works on a detached HEAD). On a view made by
// OnBranch it acts as on the handle: it moves HEAD.
func (t *Tract) Switch(ctx context.Context, name string, create bool) (*Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t = t.headView()
	err := t.update(ctx, func(tx store.Tx) error {
		cur, err := readHead(tx)
		if err != nil {
			return err
		}
		full := refs.BranchRef(name)
		if create {
			if err := refs.ValidateBranchName(name); err != nil {
				return err
			}
			if cur.Hash.IsZero() {
				// Like git on an unborn branch: just rename where HEAD points.
				if _, err := tx.Ref(full); err == nil {
					return fmt.Errorf("%w: %s", ErrBranchExists, name)
				}
				return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: full})
			}
			if _, err := t.createBranch(tx, name, ""); err != nil {
				return err
			}
			return t.attach(tx, cur, full, cur.Hash, "switch: created and moved to "+name)
		}
		r, err := tx.Ref(full)
		if isNotFound(err) {
			return fmt.Errorf("%w: %q", ErrBranchNotFound, name)
		} else if err != nil {
			return err
		}
		return t.attach(tx, cur, full, r.Hash, "switch: moving to "+name)
	})
	if err != nil {
		return nil, fmt.Errorf("switch: %w", err)
	}
	return t.Status(ctx)
}

func (t *Tract) attach(tx store.Tx, cur head, full string, at Hash, msg string) error {
	if err := tx.SetRef(refs.Ref{Name: refs.HEAD, Target: full}); err != nil {
		return err
	}
	return tx.AppendReflog(refs.HEAD, refs.Entry{Old: cur.Hash, New: at, Time: t.now(), Action: refs.ActionCheckout, Message: msg})
}

// Status describes where HEAD stands.
type Status struct {
	// Branch is the current branch's short name; empty when detached.
	Branch string `json:"branch,omitempty"`
	// Detached is true when HEAD points at a commit, not a branch.
	Detached bool `json:"detached"`
	// Head is the commit HEAD resolves to; zero on an unborn branch.
	Head Hash `json:"head"`
	// Length is the number of commits on the first-parent chain.
	Length int `json:"length"`
	// Messages is the number of messages Compile sends.
	Messages int `json:"messages"`
	// Tokens estimates the tokens of those messages' text (one per four
	// characters; see compress.EstimateTokens).
	Tokens int `json:"tokens"`
	// OrigHead is where ORIG_HEAD points (zero when unset).
	OrigHead Hash `json:"orig_head"`
	// Path is the repository file.
	Path string `json:"path"`
}

// Status reports the current branch, HEAD and the size of the context (for
// a view, its branch). It reads the derived counters of HEAD, so it takes
// the same time on any length of history (on a repository written by a
// tract older than the counters, until its next write, it walks the chain
// once).
func (t *Tract) Status(ctx context.Context) (*Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := &Status{Path: t.path}
	err := t.view(ctx, func(tx store.Tx) error {
		cur, err := t.position(tx)
		if err != nil {
			return err
		}
		st.Branch, st.Detached, st.Head = cur.branchName(), cur.detached(), cur.Hash
		if r, err := tx.Ref(refs.OrigHead); err == nil {
			st.OrigHead = r.Hash
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c, err := store.CountersOf(ctx, tx, cur.Hash, false)
		st.Length, st.Messages, st.Tokens = int(c.Depth), int(c.Messages), int(c.Tokens)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return st, nil
}

// Head returns the current branch's short name (empty when detached) and
// the commit HEAD resolves to (zero on an unborn branch); for a view, its
// branch and the branch's tip.
func (t *Tract) Head(ctx context.Context) (branch string, h Hash, err error) {
	if err := ctx.Err(); err != nil {
		return "", Hash{}, err
	}
	err = t.view(ctx, func(tx store.Tx) error {
		cur, err := t.position(tx)
		branch, h = cur.branchName(), cur.Hash
		return err
	})
	return branch, h, err
}
