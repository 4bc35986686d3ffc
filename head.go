package tract

import (
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

// branchName is the short name of the current branch ("" when detached).
func (h head) branchName() string {
	n, _ := refs.BranchName(h.Branch)
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

// move points HEAD's branch (or a detached HEAD) from want to to, appends the
// reflog entries of the branch and of HEAD, and fails with ErrConflict when
// HEAD no longer stands at want (another writer moved it first).
func (t *Tract) move(tx store.Tx, want, to Hash, action, msg string) error {
	cur, err := readHead(tx)
	if err != nil {
		return err
	}
	if cur.Hash != want {
		return fmt.Errorf("%w: HEAD moved from %s to %s while the operation ran; nothing was written, try again",
			ErrConflict, short(want), short(cur.Hash))
	}
	e := refs.Entry{Old: cur.Hash, New: to, Time: t.now(), Action: action, Message: msg}
	if cur.detached() {
		if err := tx.SetRef(refs.Ref{Name: refs.HEAD, Hash: to}); err != nil {
			return err
		}
	} else {
		if err := tx.SetRef(refs.Ref{Name: cur.Branch, Hash: to}); err != nil {
			return err
		}
		if err := tx.AppendReflog(cur.Branch, e); err != nil {
			return err
		}
	}
	return tx.AppendReflog(refs.HEAD, e)
}

// setOrigHead records the position an operation moved HEAD away from.
func setOrigHead(tx store.Tx, h Hash) error {
	if h.IsZero() {
		return nil
	}
	return tx.SetRef(refs.Ref{Name: refs.OrigHead, Hash: h})
}

// resolve resolves a revision expression inside tx.
func resolve(tx store.Tx, rev string) (Hash, error) {
	h, err := refs.Resolve(store.Resolver(tx), rev)
	if err != nil {
		return Hash{}, err
	}
	return h, nil
}

// requireBranch returns the current head, or ErrDetachedHead with advice.
func requireBranch(tx store.Tx) (head, error) {
	cur, err := readHead(tx)
	if err != nil {
		return cur, err
	}
	if cur.detached() {
		return cur, fmt.Errorf("%w at %s: create a branch to commit on with 'tract switch -c NAME' (or Tract.Switch(NAME, true))",
			ErrDetachedHead, cur.Hash.Short())
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

// commitText returns the text of c.
func commitText(tx store.Tx, c *dag.Commit) (string, error) {
	b, err := tx.Blob(c.Blob)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
