package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// head is where HEAD stands inside one transaction.
type head struct {
	// Branch is the full ref name of the current branch; empty when detached.
	Branch string
	// Hash is the commit HEAD resolves to; zero on an unborn branch.
	Hash Hash
}

func (h head) detached() bool { return h.Branch == "" }

// branchName is the short name of the current branch ("" when detached
// or on a side chain).
func (h head) branchName() string {
	n, ok := refs.BranchName(h.Branch)
	if !ok {
		return ""
	}
	return n
}

func readHead(tx store.Tx) (head, error) {
	r, err := tx.Ref(refs.HEAD)
	if err != nil {
		return head{}, fmt.Errorf("read HEAD: %w", err)
	}
	if !r.IsSymbolic() {
		return head{Hash: r.Hash}, nil
	}
	h, _, err := store.ResolveRef(tx, r.Target)
	if err != nil {
		return head{}, fmt.Errorf("read HEAD: %w", err)
	}
	return head{Branch: r.Target, Hash: h}, nil
}

// position returns where t's operations act: the branch of a view made by
// OnBranch, or HEAD.
func (t *Tract) position(tx store.Tx) (head, error) {
	if t.branch == "" {
		return readHead(tx)
	}
	if t.side != nil {
		return t.side.position(tx, t.branch)
	}
	name, _ := refs.BranchName(t.branch)
	r, err := tx.Ref(t.branch)
	if err == nil {
		// Also a branch whose name is no longer valid ("STRANDED",
		// created before it was reserved): it stays usable.
		return head{Branch: t.branch, Hash: r.Hash}, nil
	}
	if !isNotFound(err) {
		return head{}, err
	}
	if err := refs.ValidateBranchName(name); err != nil {
		return head{}, err
	}
	// The unborn branch HEAD is on may be committed to, as through HEAD.
	if h, err := tx.Ref(refs.HEAD); err == nil && h.Target == t.branch {
		return head{Branch: t.branch}, nil
	}
	return head{}, fmt.Errorf("%w: %q", ErrBranchNotFound, name)
}

// move points t's position (the view's branch, HEAD's branch, or a detached
// HEAD) from want to to and appends the reflog entries of the branch and,
// when HEAD is on that branch, of HEAD. It is the compare-and-swap every
// ref move goes through: when the position no longer stands at want
// (another writer moved it first) nothing moves and the error is a
// *ConflictError.
func (t *Tract) move(tx store.Tx, want, to Hash, action, msg string) error {
	cur, err := t.position(tx)
	if err != nil {
		return err
	}
	if cur.Hash != want {
		return &ConflictError{Ref: cur.ref(), Expected: want, Actual: cur.Hash}
	}
	return t.moveFrom(tx, cur, to, action, msg)
}

// land finishes a step that built to on want, with cur t's position read in
// tx: it moves the position to to, or, when another writer moved it away
// from want, keeps to off the branch (strand) and returns the conflict.
func (t *Tract) land(tx store.Tx, cur head, want, to Hash, action, msg, what string) (*ConflictError, error) {
	if cur.Hash != want {
		return t.strand(tx, cur, want, to, what)
	}
	return nil, t.moveFrom(tx, cur, to, action, msg)
}

// moveFrom points t's position, read as cur in tx, at to.
func (t *Tract) moveFrom(tx store.Tx, cur head, to Hash, action, msg string) error {
	// The new position's counters go in with the move (the derived index
	// is written in the transaction that makes a commit a tip).
	if _, err := store.CountersOf(context.Background(), tx, to, true); err != nil {
		return err
	}
	e := refs.Entry{Old: cur.Hash, New: to, Time: t.now(), Action: action, Message: msg}
	if cur.detached() {
		if err := tx.SetRef(refs.Ref{Name: refs.HEAD, Hash: to}); err != nil {
			return err
		}
		return tx.AppendReflog(refs.HEAD, e)
	}
	if err := tx.SetRef(refs.Ref{Name: cur.Branch, Hash: to}); err != nil {
		return err
	}
	if err := tx.AppendReflog(cur.Branch, e); err != nil {
		return err
	}
	if h, err := tx.Ref(refs.HEAD); err != nil || h.Target != cur.Branch {
		return err // HEAD is elsewhere: a view moved its own branch
	}
	return tx.AppendReflog(refs.HEAD, e)
}

// ref is the name of the ref a move of h changes.
func (h head) ref() string {
	if h.detached() {
		return refs.HEAD
	}
	return h.Branch
}

// ConflictError is returned when the branch (or detached HEAD) an
// operation works on moved while it ran; errors.Is(err, ErrConflict) holds
// for it (see refs.ConflictError).
type ConflictError = refs.ConflictError

// advance stores what write makes on top of want and moves t's position
// from want to it, in tx. When the position moved meanwhile, the commits
// write stored stay in the repository off the branch, recorded in the
// stranded reflog, and advance returns a *ConflictError naming them; the
// caller must then still commit tx (return nil from the transaction) and
// report the conflict after it, or the commits are lost.
func (t *Tract) advance(tx store.Tx, want Hash, action, msg, what string, write func() (Hash, error)) (Hash, *ConflictError, error) {
	cur, err := t.position(tx)
	if err != nil {
		return Hash{}, nil, err
	}
	h, err := write()
	if err != nil {
		return Hash{}, nil, err
	}
	c, err := t.land(tx, cur, want, h, action, msg, what)
	return h, c, err
}

// strand records kept, a result made for a position that was expected at
// want but found at cur, in the stranded reflog, and returns the conflict
// to report. The entry's message reads "conflict: WHAT kept off BRANCH,
// which moved from WANT to CUR".
func (t *Tract) strand(tx store.Tx, cur head, want, kept Hash, what string) (*ConflictError, error) {
	where := cur.ref()
	if b := cur.branchName(); b != "" {
		where = b
	}
	if _, err := store.CountersOf(context.Background(), tx, kept, true); err != nil {
		return nil, err
	}
	e := refs.Entry{Old: want, New: kept, Time: t.now(), Action: refs.ActionConflict,
		Message: fmt.Sprintf("conflict: %s kept off %s, which moved from %s to %s", what, where, short(want), short(cur.Hash))}
	if err := tx.AppendReflog(refs.Stranded, e); err != nil {
		return nil, err
	}
	return &ConflictError{Ref: cur.ref(), Expected: want, Actual: cur.Hash, Kept: kept, What: what}, nil
}

// updateAdvancing runs fn in one write transaction. A conflict fn reports
// through advance commits the transaction (so what was stored stays) and is
// returned after it.
func (t *Tract) updateAdvancing(ctx context.Context, fn func(tx store.Tx) (*ConflictError, error)) error {
	var conflict *ConflictError
	err := t.update(ctx, func(tx store.Tx) (err error) {
		conflict, err = fn(tx)
		return err
	})
	if err != nil {
		return err
	}
	if conflict != nil {
		return conflict
	}
	return nil
}

// setOrigHead records the position an operation moved HEAD away from.
func setOrigHead(tx store.Tx, h Hash) error {
	if h.IsZero() {
		return nil
	}
	return tx.SetRef(refs.Ref{Name: refs.OrigHead, Hash: h})
}

// resolve resolves a revision expression inside tx. In a view made by
// OnBranch, "HEAD" means the view's branch, also in HEAD@{N}.
func (t *Tract) resolve(tx store.Tx, rev string) (Hash, error) {
	h, err := refs.Resolve(txResolver{ChainResolver: store.Resolver(tx), tx: tx, branch: t.branch}, rev)
	if err != nil {
		return Hash{}, err
	}
	return h, nil
}

// txResolver resolves revisions in tx: reflogs too (REF@{N}), and HEAD as
// a view's branch when branch is set.
type txResolver struct {
	refs.ChainResolver
	tx store.Tx
	// branch is the full name of a view's branch; "" for HEAD.
	branch string
}

var (
	_ refs.ReflogResolver = txResolver{}
	_ refs.ChainResolver  = txResolver{}
)

// ref is the ref name stands for: a view's branch for HEAD.
func (r txResolver) ref(name string) string {
	if name == refs.HEAD && r.branch != "" {
		return r.branch
	}
	return name
}

func (r txResolver) ResolveRef(name string) (Hash, bool, error) {
	return r.ChainResolver.ResolveRef(r.ref(name))
}

func (r txResolver) ReflogTail(name string, n int) ([]refs.Entry, error) {
	return store.ReflogTail(r.tx, r.ref(name), n)
}

// requireBranch returns t's position, or ErrDetachedHead.
func (t *Tract) requireBranch(tx store.Tx) (head, error) {
	cur, err := t.position(tx)
	if err != nil {
		return cur, err
	}
	if cur.detached() {
		return cur, fmt.Errorf("%w at %s: commits go on a branch", ErrDetachedHead, cur.Hash.Short())
	}
	return cur, nil
}

func short(h Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.Short()
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// commitText returns the text of c (see store.CommitText).
func commitText(tx store.Tx, c *dag.Commit) (string, error) { return store.CommitText(tx, c) }
