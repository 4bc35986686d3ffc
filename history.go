package tract

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// History is the whole repository as LogAll returns it. Its lists are
// never nil, so their JSON is [] when empty.
type History struct {
	// Commits are the commits reachable from a branch or HEAD, newest
	// first. (ORIG_HEAD labels a commit but does not keep it reachable.)
	Commits []*CommitInfo `json:"commits"`
	// Orphans are the side chains of commits no ref reaches, in the order
	// their tips were made.
	Orphans []*OrphanChain `json:"orphans"`
}

// OrphanChain is a side chain of orphaned commits hanging off a fork point.
type OrphanChain struct {
	// Fork is the reachable commit the chain forked from; zero when the
	// chain reaches a root without meeting one.
	Fork Hash `json:"fork"`
	// Commits are the chain's commits, newest first.
	Commits []*CommitInfo `json:"commits"`
	// Action is the reflog action that orphaned the chain ("purify",
	// "reset", "compress"), or "" when no reflog entry records it.
	Action string `json:"action,omitempty"`
	// Reason is that reflog entry's message, e.g. "purify: hid 2 failed attempts".
	Reason string `json:"reason,omitempty"`
	// When is when the chain was orphaned (zero when unknown).
	When time.Time `json:"when,omitzero"`
}

// LogAll returns every commit in the repository: the reachable ones with
// their refs, and the orphans grouped into side chains by the commit they
// forked from, each with the reflog entry that orphaned it. It holds every
// commit's text at once; Outline gives the same history as hashes, with
// the texts read a page at a time.
func (t *Tract) LogAll(ctx context.Context) (*History, error) {
	o, err := t.Outline(ctx)
	if err != nil {
		return nil, err
	}
	out := &History{Commits: make([]*CommitInfo, 0, len(o.Commits)), Orphans: []*OrphanChain{}}
	collect := func(hs []Hash) ([]*CommitInfo, error) {
		cs := []*CommitInfo{}
		for ci, err := range o.Infos(ctx, hs) {
			if err != nil {
				return nil, err
			}
			cs = append(cs, ci)
		}
		return cs, nil
	}
	if out.Commits, err = collect(o.Commits); err != nil {
		return nil, err
	}
	for _, ch := range o.Orphans {
		oc := &OrphanChain{Fork: ch.Fork, Action: ch.Action, Reason: ch.Reason, When: ch.When}
		if oc.Commits, err = collect(ch.Commits); err != nil {
			return nil, err
		}
		out.Orphans = append(out.Orphans, oc)
	}
	return out, nil
}

// Outline is the whole repository as LogAll shows it, as hashes: the
// order and grouping of every commit without their texts, which Infos
// reads a page at a time. Its memory grows with the number of commits,
// not with their size.
type Outline struct {
	// Commits are the commits reachable from a branch or HEAD, newest
	// first.
	Commits []Hash
	// Orphans are the side chains of commits no ref reaches, in the order
	// their tips were made.
	Orphans []OrphanOutline

	t     *Tract
	names map[Hash][]string
	// reach marks, by position in g, the commits a branch or HEAD reaches;
	// head is HEAD's commit (zero on an unborn branch).
	reach []bool
	head  Hash
	// g holds every commit without its metadata, as Outline read it;
	// Infos reads again only the commits that have metadata.
	g *dag.Graph
}

// OrphanOutline is an OrphanChain as hashes.
type OrphanOutline struct {
	// Fork is the reachable commit the chain forked from; zero when the
	// chain reaches a root without meeting one.
	Fork Hash
	// Commits are the chain's commits, newest first.
	Commits []Hash
	// Action, Reason and When are those of the reflog entry that orphaned
	// the chain, as in OrphanChain.
	Action, Reason string
	When           time.Time
}

// Outline reads the shape of the whole repository, in one read
// transaction: what LogAll returns, as hashes.
func (t *Tract) Outline(ctx context.Context) (*Outline, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Outline{t: t}
	err := t.view(ctx, func(tx store.Tx) error {
		var err error
		if out.g, err = store.LoadGraph(tx); err != nil {
			return err
		}
		if out.names, err = refNames(tx); err != nil {
			return err
		}
		tips, err := store.RefTips(tx)
		if err != nil {
			return err
		}
		reach, err := out.g.Reachable(tips...)
		if err != nil {
			return err
		}
		out.reach = reach
		if out.head, _, err = store.ResolveRef(tx, refs.HEAD); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		orphanedBy, err := store.OrphaningEntries(tx)
		if err != nil {
			return err
		}
		var reachable []int32
		for i, r := range reach {
			if r {
				reachable = append(reachable, int32(i))
			}
		}
		sorted := out.g.NewestFirst(reachable)
		out.Commits = make([]Hash, len(sorted))
		for k, i := range sorted {
			out.Commits[k] = out.g.Hash(int(i))
		}
		for _, ch := range out.g.OrphanChains(reach) {
			oc := OrphanOutline{Fork: ch.Fork, Commits: ch.Commits}
			if e, ok := orphanedBy[ch.Tip]; ok {
				oc.Action, oc.Reason, oc.When = e.Action, e.Message, e.Time
			}
			out.Orphans = append(out.Orphans, oc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read all commits: %w", err)
	}
	return out, nil
}

// Infos returns the commits hs names, in that order, with their texts and
// refs (as they were when the outline was read), reading a page of them
// per short read transaction, the next page while the caller takes the
// commits of the one before (see walkPagesAhead).
func (o *Outline) Infos(ctx context.Context, hs []Hash) iter.Seq2[*CommitInfo, error] {
	return func(yield func(*CommitInfo, error) bool) {
		page := func(tx store.Tx) ([]*CommitInfo, bool, error) {
			n := min(infosPage, len(hs))
			cs, err := o.commits(tx, hs[:n])
			if err != nil {
				return nil, false, err
			}
			out, err := infos(tx, hs[:n], cs, o.names)
			if err != nil {
				return nil, false, err
			}
			hs = hs[n:]
			return out, len(hs) > 0, nil
		}
		if err := walkPagesAhead(ctx, o.t, page, func(ci *CommitInfo) bool { return yield(ci, nil) }); err != nil {
			yield(nil, fmt.Errorf("read commits: %w", err))
		}
	}
}

// infosPage is how many commits Infos reads per read transaction: four
// pages of a walk, since it reads little more than their texts, which a
// database looks up one by one, and a transaction's fixed cost (BEGIN
// and ROLLBACK's round trips) is best spread over many.
const infosPage = 4 * pageSize

// commits returns commits hs: from the outline's graph unless one has
// metadata (which the graph does not keep) or is not in it; those are
// read in one call.
func (o *Outline) commits(tx store.Tx, hs []Hash) ([]*dag.Commit, error) {
	out := make([]*dag.Commit, len(hs))
	var read []Hash
	var at []int
	for k, h := range hs {
		if i, ok := o.g.Index(h); ok && !o.g.HasMeta(i) {
			c, err := o.g.Commit(i, tx.Commit)
			if err != nil {
				return nil, err // tx.Commit's error names the commit
			}
			out[k] = c
			continue
		}
		read, at = append(read, h), append(at, k)
	}
	if err := store.ReadCommitsInto(tx, out, read, at); err != nil {
		return nil, err
	}
	return out, nil
}
