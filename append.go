package tract

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// CommitOption configures Commit and its sugar.
type CommitOption func(*commitConfig)

type commitConfig struct {
	meta    map[string]any
	rawMeta []byte
	// own marks metadata tract writes itself (turn and summary records),
	// which the metadata size limit does not bind.
	own     bool
	action  string
	message string
}

// WithMeta attaches metadata to the commit. It becomes part of the commit's
// hash. Later WithMeta calls add keys; WithMetaJSON replaces them.
func WithMeta(m map[string]any) CommitOption {
	return func(c *commitConfig) {
		if c.meta == nil {
			c.meta = make(map[string]any, len(m))
		}
		for k, v := range m {
			c.meta[k] = v
		}
	}
}

// WithMetaJSON attaches metadata given as raw JSON, which must be an object.
func WithMetaJSON(raw []byte) CommitOption {
	return func(c *commitConfig) { c.rawMeta, c.meta = raw, nil }
}

// WithReflogMessage sets the reflog action and message of the commit's ref
// move (default action "commit", message "commit (ROLE): FIRST LINE").
func WithReflogMessage(action, message string) CommitOption {
	return func(c *commitConfig) { c.action, c.message = action, message }
}

// canonicalMeta returns the commit's metadata in canonical form, checked
// against l's metadata size limit unless it is tract's own.
func (c *commitConfig) canonicalMeta(l Limits) ([]byte, error) {
	if c.rawMeta != nil && !c.own {
		if err := l.CheckMeta(c.rawMeta); err != nil {
			return nil, err // before parsing it
		}
	}
	var meta []byte
	var err error
	if c.rawMeta != nil {
		meta, err = dag.CanonicalMeta(c.rawMeta)
	} else {
		meta, err = dag.MetaFromMap(c.meta)
	}
	if err == nil && !c.own {
		err = l.CheckMeta(meta)
	}
	return meta, err
}

// Commit appends a commit of kind and role with text to the current branch
// (a view's branch) and returns its hash. Text must be non-empty UTF-8;
// metadata must be a JSON object; either over its size limit (see Limits)
// is a *TooLargeError. It fails with ErrDetachedHead when HEAD
// is detached. The commit, the branch move and the reflog entries are one
// transaction that reads the branch's tip and appends to it, so concurrent
// committers on one branch serialise and none is lost: Commit never
// conflicts.
func (t *Tract) Commit(ctx context.Context, kind Kind, role Role, text string, opts ...CommitOption) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return Hash{}, err
	}
	var h Hash
	err := t.update(ctx, func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		h, err = t.commitTx(tx, cur.Hash, kind, role, text, opts...)
		return err
	})
	if err != nil {
		return Hash{}, fmt.Errorf("commit: %w", err)
	}
	return h, nil
}

// commitTx writes one commit on top of parent, which tx has just read as
// t's position, and moves the position to it.
func (t *Tract) commitTx(tx store.Tx, parent Hash, kind Kind, role Role, text string, opts ...CommitOption) (Hash, error) {
	var cfg commitConfig
	for _, o := range opts {
		o(&cfg)
	}
	return t.commitWith(tx, parent, kind, role, text, &cfg)
}

// commitWith is commitTx with the options applied.
func (t *Tract) commitWith(tx store.Tx, parent Hash, kind Kind, role Role, text string, cfg *commitConfig) (Hash, error) {
	h, err := t.putCommit(tx, parent, kind, role, text, cfg)
	if err != nil {
		return Hash{}, err
	}
	action, msg := cfg.reflog(kind, role, text)
	return h, t.move(tx, parent, h, action, msg)
}

// putCommit validates and stores one commit on parent without moving any
// ref.
func (t *Tract) putCommit(tx store.Tx, parent Hash, kind Kind, role Role, text string, cfg *commitConfig) (Hash, error) {
	c, err := t.newCommit(tx, parent, kind, role, text, cfg)
	if err != nil {
		return Hash{}, err
	}
	return tx.PutCommit(c)
}

// reflog returns the reflog action and message of a commit's ref move.
func (c *commitConfig) reflog(kind Kind, role Role, text string) (action, msg string) {
	action, msg = c.action, c.message
	if action == "" {
		action = refs.ActionCommit
	}
	if msg == "" {
		msg = fmt.Sprintf("%s (%s %s): %s", action, kind, role, english.FirstLine(text, 60))
	}
	return action, msg
}

// putText stores text as a blob. Its bytes are a fresh copy, so a store
// that can take them as they are (a HashedPutter) need not copy them
// again: a large message is copied once less.
func putText(tx store.Tx, text string) (Hash, error) {
	data := []byte(text)
	hp, ok := tx.(store.HashedPutter)
	if !ok {
		return tx.PutBlob(data)
	}
	h := dag.Sum(data)
	return h, hp.PutHashedBlob(h, data)
}

// newCommit validates input, stores the text blob and builds the commit.
func (t *Tract) newCommit(tx store.Tx, parent Hash, kind Kind, role Role, text string, cfg *commitConfig) (*dag.Commit, error) {
	if err := t.validateCommit(kind, role, text); err != nil {
		return nil, err
	}
	meta, err := cfg.canonicalMeta(t.limits)
	if err != nil {
		return nil, err
	}
	if err := record.Check(meta); err != nil {
		return nil, err
	}
	blob, err := putText(tx, text)
	if err != nil {
		return nil, err
	}
	c := &dag.Commit{Kind: kind, Role: role, Blob: blob, Meta: meta, Time: t.now()}
	if !parent.IsZero() {
		c.Parents = []Hash{parent}
	}
	return c, nil
}

// validateCommit checks a commit's kind, role and text (see
// Limits.CheckText).
func (t *Tract) validateCommit(kind Kind, role Role, text string) error {
	if err := ingest.CheckKindRole(kind, role); err != nil {
		return err
	}
	return t.limits.CheckText("the text", text)
}

// System commits a system message.
func (t *Tract) System(ctx context.Context, text string, opts ...CommitOption) (Hash, error) {
	return t.Commit(ctx, KindMessage, RoleSystem, text, opts...)
}

// User commits a user message.
func (t *Tract) User(ctx context.Context, text string, opts ...CommitOption) (Hash, error) {
	return t.Commit(ctx, KindMessage, RoleUser, text, opts...)
}

// Assistant commits an assistant message.
func (t *Tract) Assistant(ctx context.Context, text string, opts ...CommitOption) (Hash, error) {
	return t.Commit(ctx, KindMessage, RoleAssistant, text, opts...)
}

// Note commits a note (role system): an annotation that Compile leaves out
// by default.
func (t *Tract) Note(ctx context.Context, text string, opts ...CommitOption) (Hash, error) {
	return t.Commit(ctx, KindNote, RoleSystem, text, opts...)
}

// CommitMany appends msgs to the current branch (a view's branch) as a
// chain of commits, like that many calls of Commit, but in one transaction:
// they become durable together, with one sync instead of one each. On a
// file, a batch of 64 or more is written as a pack of its own (see package
// store): about 45,000 messages per second in batches of 100 and 70,000 in
// batches of 1,000, against 2,000 single commits. Either all are
// committed or none (the error names the first bad message; the size
// limits of Commit apply to each). It returns
// the new commits' hashes in order. Like Commit it appends to the branch's
// tip, so it never conflicts; the branch moves once, with one reflog entry
// "commit: N commits".
func (t *Tract) CommitMany(ctx context.Context, msgs []ImportMessage) ([]Hash, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	hs, err := t.appendChain(ctx, msgs, refs.ActionCommit, "commit: "+english.Count(len(msgs), "commit", "commits"))
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return hs[1:], nil
}

// mergePacks runs, after a write that added a pack and outside its
// transaction, the merges of packs it made due (store.PackMerger). The
// write is done whatever happens here: a merge that fails or is cancelled
// leaves every object where it was, and the next write that adds a pack
// takes it up again.
func (t *Tract) mergePacks(ctx context.Context) {
	_ = t.withStore(func(st store.Store) error {
		if m, ok := st.(store.PackMerger); ok {
			return m.MergePacks(ctx)
		}
		return nil
	})
}

// appendChain appends msgs to t's position in one transaction and returns
// the position before, then each new commit (just the position when msgs
// is empty).
func (t *Tract) appendChain(ctx context.Context, msgs []ImportMessage, action, msg string) ([]Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Hash
	err := t.update(ctx, func(tx store.Tx) error {
		cur, err := t.requireBranch(tx)
		if err != nil {
			return err
		}
		out = append(make([]Hash, 0, len(msgs)+1), cur.Hash)
		if len(msgs) == 0 {
			return nil
		}
		commits, blobs, err := t.buildChain(ctx, cur.Hash, msgs, t.now())
		if err != nil {
			return err
		}
		for _, c := range commits {
			out = append(out, c.Hash)
		}
		if err := store.PutChain(tx, t.now(), commits, blobs); err != nil {
			return err
		}
		return t.move(tx, cur.Hash, out[len(out)-1], action, msg)
	})
	if err == nil && len(msgs) >= store.PackMin {
		t.mergePacks(ctx)
	}
	return out, err
}

// buildChain validates msgs and builds their commits in memory, each the
// first parent of the next, starting on parent.
func (t *Tract) buildChain(ctx context.Context, parent Hash, msgs []ImportMessage, now time.Time) ([]store.NewCommit, []store.NewBlob, error) {
	commits := make([]store.NewCommit, 0, len(msgs))
	blobs := make([]store.NewBlob, 0, len(msgs))
	for i, m := range msgs {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		kind := m.CommitKind()
		text, shape, err := m.Stored()
		if err == nil {
			err = t.validateCommit(kind, m.Role, text)
		}
		if err == nil {
			err = t.limits.CheckShape(shape)
		}
		if err != nil {
			return nil, nil, &ingest.MessageError{N: i + 1, Err: err}
		}
		if err := t.limits.CheckMeta(m.Meta); err != nil {
			return nil, nil, &ingest.MessageError{N: i + 1, Err: err}
		}
		meta, err := dag.CanonicalMeta(m.Meta)
		if err == nil {
			err = record.Check(meta)
		}
		if err == nil && shape != nil {
			meta, err = record.WithShape(meta, shape)
		}
		if err != nil {
			return nil, nil, &ingest.MessageError{N: i + 1, Err: err}
		}
		data := []byte(text)
		blob := dag.Sum(data)
		blobs = append(blobs, store.NewBlob{Hash: blob, Data: data})
		// Consecutive nanoseconds keep the imported order visible in time.
		c := &dag.Commit{Kind: kind, Role: m.Role, Blob: blob, Meta: meta, Time: now.Add(time.Duration(i))}
		if !parent.IsZero() {
			c.Parents = []Hash{parent}
		}
		raw, err := dag.Encode(c)
		if err != nil {
			return nil, nil, &ingest.MessageError{N: i + 1, Err: err}
		}
		parent = dag.Sum(raw)
		commits = append(commits, store.NewCommit{Hash: parent, Commit: c, Raw: raw})
	}
	return commits, blobs, nil
}

// metaConfig returns the commit configuration that writes m, tract's own
// metadata of a commit of a turn.
func metaConfig(m *record.Meta) (*commitConfig, error) {
	if m == nil {
		return &commitConfig{}, nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &commitConfig{rawMeta: raw, own: true}, nil
}
