package tract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract/internal/compiled"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// sideChain is the state of a view made by SideChain.
type sideChain struct {
	// reason is the message of the reflog entry that ends the chain.
	reason string
	// base is where the chain starts (zero: at a root).
	base Hash
	// once closes the chain once.
	once sync.Once
	// err is what closing returned.
	err error
}

// SideChain returns a view that builds a chain of commits on base off
// every branch: its Commit (and System, User, Assistant, Note), Chat and
// Generate append to the chain and never move a branch or HEAD, so a
// program can try something (an alternative answer, an experiment) without
// changing the conversation, and adopt the result later with
// Reset(…, ResetIf(…)). Head returns the chain's tip (its branch name is
// ""). A zero base starts the chain at a root.
//
// While it is built the chain has a temporary ref, refs/side/ID, which
// LogAll shows. Close ends the chain: it deletes the ref and records in
// the ref's reflog (action "side", message reason) where the chain ended,
// so LogAll lists the chain among the orphans with that reason and GC
// keeps it until the entry expires. Closing the handle does not end the
// chain: close the view first. A chain left open by a program that ended
// (its ref unmoved for an hour) is closed by GC the same way, and a view
// of it still open then fails with ErrClosed.
func (t *Tract) SideChain(ctx context.Context, base Hash, reason string) (*Tract, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("side chain: %w", err)
	}
	name := refs.SidePrefix + hex.EncodeToString(id[:])
	err := t.update(ctx, func(tx store.Tx) error {
		if base.IsZero() {
			return nil
		}
		if _, err := tx.Commit(base); err != nil {
			return fmt.Errorf("base %s: %w", base.Short(), err)
		}
		if err := tx.SetRef(refs.Ref{Name: name, Hash: base}); err != nil {
			return err
		}
		return tx.AppendReflog(name, refs.Entry{New: base, Time: t.now(), Action: refs.ActionBranch,
			Message: "side: started on " + base.Short()})
	})
	if err != nil {
		return nil, fmt.Errorf("side chain: %w", err)
	}
	return &Tract{repo: t.repo, branch: name, cache: &compiled.Cache{MinBytes: t.recordsMin}, side: &sideChain{reason: reason, base: base}}, nil
}

// position is where the chain named name stands: its ref, or its base
// before its first commit on a zero base. A chain whose ref is gone after
// it moved was closed by GC (see store.CloseAbandonedSides): ErrClosed.
func (s *sideChain) position(tx store.Tx, name string) (head, error) {
	r, err := tx.Ref(name)
	switch {
	case err == nil:
		return head{Branch: name, Hash: r.Hash}, nil
	case !isNotFound(err):
		return head{}, err
	}
	es, err := tx.Reflog(name)
	if err != nil {
		return head{}, err
	}
	if len(es) > 0 {
		return head{}, fmt.Errorf("%w: side chain %s was closed by gc after %s unmoved; its commits stay in the repository as orphans",
			ErrClosed, strings.TrimPrefix(name, refs.SidePrefix), sideAbandonedAfter)
	}
	return head{Branch: name, Hash: s.base}, nil
}

// sideAbandonedAfter is how long a side chain's ref must have stayed
// unmoved before GC closes it: a program building a side chain commits
// every few seconds or minutes, so one untouched for this long belongs to
// a program that ended (crashed, killed) before closing it.
const sideAbandonedAfter = time.Hour

// closeSide ends a side chain (see SideChain).
func (t *Tract) closeSide() error {
	t.side.once.Do(func() {
		t.side.err = t.update(context.Background(), func(tx store.Tx) error {
			r, err := tx.Ref(t.branch)
			if isNotFound(err) {
				return nil // nothing was committed on a zero base
			} else if err != nil {
				return err
			}
			if err := tx.DeleteRef(t.branch); err != nil {
				return err
			}
			return tx.AppendReflog(t.branch, refs.Entry{Old: r.Hash, Time: t.now(), Action: refs.ActionSide,
				Message: t.side.reason})
		})
		t.viewClosed.Store(true)
		if t.side.err != nil {
			t.side.err = fmt.Errorf("close side chain: %w", t.side.err)
		}
	})
	return t.side.err
}
