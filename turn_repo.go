package tract

import (
	"context"
	"fmt"
	"time"

	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/turn"
)

// turnRepo is a Tract (or a view of one branch) as a validated turn
// reaches it (turn.Repo): each method that writes is one transaction on
// the tract's position, and moves it only if it still stands where the
// turn expects it.
type turnRepo struct{ t *Tract }

var _ turn.Repo = turnRepo{}

// Compile returns the messages compiled at tip (as Compile with
// CompileAt, without resolving the hash as a revision).
func (r turnRepo) Compile(ctx context.Context, tip Hash) ([]Message, error) {
	var out []Message
	err := r.t.view(ctx, func(tx store.Tx) (err error) {
		out, err = r.t.cache.Compile(ctx, tx, tip, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return out, nil
}

// Now is the repository's clock.
func (r turnRepo) Now() time.Time { return r.t.now() }

// Limits are the repository's size limits.
func (r turnRepo) Limits() Limits { return r.t.limits }

// CommitOn writes p on parent and moves t's position from parent to it, in
// one transaction. When the position moved since parent was read, the
// commit is kept off the branch and the error is a *ConflictError (see
// advance).
func (r turnRepo) CommitOn(ctx context.Context, parent Hash, p turn.Pending) (Hash, error) {
	t := r.t
	var h Hash
	err := t.updateAdvancing(ctx, func(tx store.Tx) (conflict *ConflictError, err error) {
		if _, err := t.requireBranch(tx); err != nil {
			return nil, err
		}
		cfg, err := metaConfig(p.Meta)
		if err != nil {
			return nil, err
		}
		action, msg := cfg.reflog(p.Kind, p.Role, p.Text)
		h, conflict, err = t.advance(tx, parent, action, msg, p.What, func() (Hash, error) {
			return t.putCommit(tx, parent, p.Kind, p.Role, p.Text, cfg)
		})
		if err == nil && conflict == nil {
			err = t.takeUpEscalations(tx, []turn.Pending{p})
		}
		if err == nil && conflict == nil {
			err = t.saveContext(ctx, tx, h)
		}
		return conflict, err
	})
	return h, err
}

// CommitChain writes chain on parent, each commit on the one before, and
// moves t's position from parent to the last, in one transaction (one
// reflog entry). When the position moved since parent was read, the chain
// is kept off the branch and the error is a *ConflictError.
func (r turnRepo) CommitChain(ctx context.Context, parent Hash, chain []turn.Pending) ([]Hash, error) {
	t := r.t
	var hs []Hash
	err := t.updateAdvancing(ctx, func(tx store.Tx) (*ConflictError, error) {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		var action, msg string
		if hs, action, msg, err = t.putChain(tx, parent, chain); err != nil {
			return nil, err
		}
		conflict, err := t.land(tx, cur, parent, hs[len(hs)-1], action, msg, chain[len(chain)-1].What)
		if err == nil && conflict == nil {
			err = t.takeUpEscalations(tx, chain)
		}
		if err == nil && conflict == nil {
			err = t.saveContext(ctx, tx, hs[len(hs)-1])
		}
		return conflict, err
	})
	return hs, err
}

// putChain stores chain on parent without moving any ref, and returns its
// commits and the reflog action and message of a move to the last.
func (t *Tract) putChain(tx store.Tx, parent Hash, chain []turn.Pending) (hs []Hash, action, msg string, err error) {
	h := parent
	for _, p := range chain {
		cfg, err := metaConfig(p.Meta)
		if err == nil {
			h, err = t.putCommit(tx, h, p.Kind, p.Role, p.Text, cfg)
		}
		if err != nil {
			return nil, "", "", err
		}
		hs = append(hs, h)
		if action == "" {
			action, msg = cfg.reflog(p.Kind, p.Role, p.Text)
		}
	}
	if len(chain) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(chain)-1)
	}
	return hs, action, msg, nil
}

// Rewind soft-resets the branch from tip to restore (reflog action purify,
// ORIG_HEAD at tip) and commits then on restore, in one transaction. When
// the branch no longer stands at tip it moves nothing: then is kept off
// the branch and the error is a *ConflictError.
func (r turnRepo) Rewind(ctx context.Context, tip, restore Hash, msg string, then []turn.Pending) ([]Hash, error) {
	t := r.t
	var hs []Hash
	err := t.updateAdvancing(ctx, func(tx store.Tx) (*ConflictError, error) {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		if cur.Hash != tip {
			if len(then) == 0 {
				return &ConflictError{Ref: cur.ref(), Expected: tip, Actual: cur.Hash}, nil
			}
			if hs, _, _, err = t.putChain(tx, restore, then); err != nil {
				return nil, err
			}
			return t.strand(tx, cur, tip, hs[len(hs)-1], then[len(then)-1].What)
		}
		if err := t.move(tx, tip, restore, refs.ActionPurify, msg); err != nil {
			return nil, err
		}
		if err := setOrigHead(tx, tip); err != nil {
			return nil, err
		}
		if err := t.takeUpEscalations(tx, then); err != nil {
			return nil, err
		}
		if len(then) == 0 {
			return nil, t.saveContext(ctx, tx, restore)
		}
		var action, cmsg string
		if hs, action, cmsg, err = t.putChain(tx, restore, then); err != nil {
			return nil, err
		}
		if err := t.move(tx, restore, hs[len(hs)-1], action, cmsg); err != nil {
			return nil, err
		}
		return nil, t.saveContext(ctx, tx, hs[len(hs)-1])
	})
	return hs, err
}

// Restart begins the next attempt of a turn with the fresh retry context
// from the restore point (see turn.Repo), in one transaction. When the
// branch no longer stands at tip, the new chain is kept off it and the
// error is a *ConflictError.
func (r turnRepo) Restart(ctx context.Context, tip, restore Hash, p turn.Pending, msg string) (feedback, newTip Hash, err error) {
	t := r.t
	cfg, err := metaConfig(p.Meta)
	if err != nil {
		return Hash{}, Hash{}, err
	}
	err = t.updateAdvancing(ctx, func(tx store.Tx) (*ConflictError, error) {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return nil, err
		}
		task, err := tx.Commit(restore)
		if err != nil {
			return nil, fmt.Errorf("read restore point %s: %w", restore.Short(), err)
		}
		isTask := task.Kind == KindMessage && task.Role == RoleUser
		base := restore
		if isTask {
			base = task.Parent()
		}
		if feedback, err = t.putCommit(tx, base, p.Kind, p.Role, p.Text, cfg); err != nil {
			return nil, err
		}
		newTip = feedback
		if isTask {
			c := *task
			c.Parents, c.Time = []Hash{feedback}, t.now()
			if newTip, err = tx.PutCommit(&c); err != nil {
				return nil, err
			}
		}
		conflict, err := t.land(tx, cur, tip, newTip, refs.ActionRetry, msg, p.What)
		if err == nil && conflict == nil {
			err = t.saveContext(ctx, tx, newTip)
		}
		return conflict, err
	})
	return feedback, newTip, err
}

// saveContext writes the compiled-context records of the chain a turn
// moved the branch to, tip (see compiled.Cache.Save), in the transaction
// that moved it, so that the next process reads the chain's messages from
// a few records. The turn compiled the chain already: it costs a record.
func (t *Tract) saveContext(ctx context.Context, tx store.Tx, tip Hash) error {
	if tip.IsZero() {
		return nil
	}
	return t.cache.Save(context.WithoutCancel(ctx), tx, tip)
}

// Step reads commit h back as a step of a validated turn (nil when it is
// none).
func (r turnRepo) Step(ctx context.Context, h Hash) (*events.Step, error) {
	var s *events.Step
	err := r.t.view(ctx, func(tx store.Tx) error {
		c, err := tx.Commit(h)
		if err != nil {
			return err
		}
		s, _, err = stepOf(tx, h, c)
		return err
	})
	return s, err
}
