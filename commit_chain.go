package tract

import (
	"context"
	"fmt"
	"slices"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// CommitChainOn commits msgs as a chain on top of commit at (zero: the
// chain starts a new root) and points branch name at the chain's last
// commit, in one transaction. The branch must stand at at, or not exist
// (it is then created there): when it stands anywhere else, nothing is
// written and the error is a *ConflictError, so a caller that matched msgs
// against what it read earlier matches again and retries. A non-zero at
// that is not in the repository (erased meanwhile) is an error matching
// ErrUnknownRevision. It returns the
// new commits' hashes in order. The size limits of Commit apply to each
// message; WithReflogMessage sets the reflog entry (default action
// "commit", message "commit: N commits"). HEAD does not move unless it is
// on the branch.
//
// It is the write of a program that records conversations as they arrive
// (tract serve): extending a branch whose tip it read, or forking one at
// an earlier commit, without ever moving a ref it did not read.
func (t *Tract) CommitChainOn(ctx context.Context, name string, at Hash, msgs []ImportMessage, opts ...CommitOption) ([]Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	if err := refs.ValidateBranchName(name); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	var cfg commitConfig
	for _, o := range opts {
		o(&cfg)
	}
	action, msg := cfg.action, cfg.message
	if action == "" {
		action = refs.ActionCommit
	}
	if msg == "" {
		msg = action + ": " + english.Count(len(msgs), "commit", "commits")
	}
	full := refs.BranchRef(name)
	// The chain depends on at and msgs alone: built before the
	// transaction, its encoding and hashing hold no other writer of the
	// file (the writes of concurrent calls are grouped into one
	// transaction, which runs their functions one after another).
	commits, blobs, err := t.buildChain(ctx, at, msgs, t.now())
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	_ = t.withStore(func(st store.Store) error { store.WordsAheadOf(st, commits, blobs); return nil })
	out := make([]Hash, len(commits))
	for i, c := range commits {
		out[i] = c.Hash
	}
	err = t.update(ctx, func(tx store.Tx) error {
		cur := head{Branch: full}
		r, err := tx.Ref(full)
		switch {
		case err == nil:
			cur.Hash = r.Hash
			if r.Hash != at {
				return &ConflictError{Ref: full, Expected: at, Actual: r.Hash}
			}
		case !isNotFound(err):
			return err
		case !at.IsZero():
			if ok, err := tx.HasCommit(at); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("%w: commit %s is not in the repository", ErrUnknownRevision, at.Short())
			}
		}
		// PutChain sorts and fills in what it is given, and this function
		// may run again (grouped with others, see store.Store.Update):
		// each run gets the chain as built.
		if err := store.PutChain(tx, t.now(), slices.Clone(commits), slices.Clone(blobs)); err != nil {
			return err
		}
		return t.moveFrom(tx, cur, out[len(out)-1], action, msg)
	})
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if len(msgs) >= store.PackMin {
		t.mergePacks(ctx)
	}
	return out, nil
}
