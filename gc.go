package tract

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Removed counts objects deleted by a hard reset or GC.
type Removed struct {
	Commits       int `json:"commits"`
	Blobs         int `json:"blobs"`
	ReflogEntries int `json:"reflog_entries"`
	// UnfinishedImports counts the unpublished packs GC dropped: what
	// imports killed before they finished had written.
	UnfinishedImports int `json:"unfinished_imports"`
	// SideChains counts the side chains GC closed: refs/side/* refs a
	// program left when it ended before closing its SideChain. Their
	// commits became orphans, protected for the expiry; nothing of them
	// was deleted.
	SideChains int `json:"side_chains"`
}

// erase deletes the commits marked in doomed (by position in g), every
// orphan that descends from one of them (it would be left with a missing
// parent) unless keep marks it, the blobs no remaining commit uses, and
// every reflog entry that mentions a deleted commit.
func erase(tx store.Tx, g *dag.Graph, doomed, keep []bool) (Removed, error) {
	dead := g.Descendants(doomed, keep)
	return deleteCommits(tx, g, dead, func(refs.Entry) bool { return false }, nil)
}

// deleteCommits removes the dead commits (by position in g), blobs left
// unused, and the reflog entries dropEntry selects (plus any that mention
// a dead commit).
func deleteCommits(tx store.Tx, g *dag.Graph, dead []bool, dropEntry func(refs.Entry) bool, p *progress.Counter) (Removed, error) {
	var rm Removed
	// The blobs of dead commits, unless a live commit uses them too.
	unused := make(map[Hash]bool)
	for i, d := range dead {
		if d {
			unused[g.Blob(i)] = true
		}
	}
	for i, d := range dead {
		if !d && len(unused) > 0 {
			delete(unused, g.Blob(i))
		}
	}
	for i, d := range dead {
		if !d {
			continue
		}
		h := g.Hash(i)
		if err := tx.DeleteCommit(h); err != nil {
			return rm, err
		}
		if err := tx.DeleteCounters(h); err != nil {
			return rm, err
		}
		rm.Commits++
		p.Add(1)
		if b := g.Blob(i); unused[b] {
			if err := tx.DeleteBlob(b); err != nil {
				return rm, err
			}
			delete(unused, b) // delete once
			rm.Blobs++
		}
	}
	names, err := tx.ReflogNames()
	if err != nil {
		return rm, err
	}
	for _, name := range names {
		es, err := tx.Reflog(name)
		if err != nil {
			return rm, err
		}
		kept := es[:0:0]
		for _, e := range es {
			if deadHash(g, dead, e.Old) || deadHash(g, dead, e.New) || dropEntry(e) {
				rm.ReflogEntries++
				continue
			}
			kept = append(kept, e)
		}
		if len(kept) != len(es) {
			if err := tx.ReplaceReflog(name, kept); err != nil {
				return rm, err
			}
		}
	}
	return rm, nil
}

// DefaultGCExpiry is how long reflog entries protect orphans from GC.
const DefaultGCExpiry = 30 * 24 * time.Hour

// GCOption configures GC.
type GCOption func(*gcConfig)

type gcConfig struct {
	expiry   time.Duration
	dryRun   bool
	progress ProgressFunc
}

// GCProgress reports the commits deleted so far to fn (see Progress; the
// total is known once the orphans are found).
func GCProgress(fn ProgressFunc) GCOption { return func(c *gcConfig) { c.progress = fn } }

// GCExpiry sets how old a reflog entry must be before it stops protecting
// the orphans it mentions (default 30 days; 0, or less, expires every
// entry now).
func GCExpiry(d time.Duration) GCOption { return func(c *gcConfig) { c.expiry = d } }

// GCDryRun counts what GC would remove without removing anything.
func GCDryRun() GCOption { return func(c *gcConfig) { c.dryRun = true } }

// GC removes orphans that no unexpired reflog entry refers to, the blobs only
// they used, the expired reflog entries, and what imports that never
// finished left behind (unpublished packs not written to for the expiry,
// or an hour if that is longer). It first closes the side chains left
// open by programs that ended (see SideChain). Commits reachable from a branch
// or HEAD, and every ancestor of a commit an unexpired reflog entry
// mentions, stay. ORIG_HEAD protects nothing; it is deleted with the commit
// it names.
func (t *Tract) GC(ctx context.Context, opts ...GCOption) (Removed, error) {
	cfg := gcConfig{expiry: DefaultGCExpiry}
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return Removed{}, err
	}
	var rm Removed
	p := cfg.progress.start("commits", 0)
	defer p.Stop()
	err := t.update(func(tx store.Tx) error {
		cutoff := t.now().Add(-cfg.expiry)
		expired := func(e refs.Entry) bool { return !e.Time.After(cutoff) }
		sides, err := closeAbandonedSides(tx, t.now().Add(-sideAbandonedAfter), t.now())
		if err != nil {
			return err
		}
		g, err := loadGraph(tx)
		if err != nil {
			return err
		}
		live, err := reachableIn(tx, g)
		if err != nil {
			return err
		}
		var protect []Hash
		names, err := tx.ReflogNames()
		if err != nil {
			return err
		}
		for _, name := range names {
			es, err := tx.Reflog(name)
			if err != nil {
				return err
			}
			for _, e := range es {
				if expired(e) {
					continue
				}
				for _, h := range []Hash{e.Old, e.New} {
					if _, ok := g.Index(h); ok {
						protect = append(protect, h)
					}
				}
			}
		}
		kept, err := g.Reachable(protect...)
		if err != nil {
			return err
		}
		dead := make([]bool, g.Len())
		for i := range dead {
			dead[i] = !live[i] && !kept[i]
		}
		n := 0
		for _, d := range dead {
			if d {
				n++
			}
		}
		p.SetTotal(int64(n))
		rm, err = deleteCommits(tx, g, dead, expired, p)
		if err != nil {
			return err
		}
		rm.SideChains = sides
		if rm.UnfinishedImports, err = dropAbandonedPacks(tx, t.now().Add(-max(cfg.expiry, abandonedAfter))); err != nil {
			return err
		}
		// ORIG_HEAD does not protect commits; drop it with what it named.
		if r, err := tx.Ref(refs.OrigHead); err == nil && deadHash(g, dead, r.Hash) {
			if err := tx.DeleteRef(refs.OrigHead); err != nil {
				return err
			}
		}
		if cfg.dryRun {
			return errDryRun
		}
		return nil
	})
	var erasure *ErasureError
	switch {
	case err == errDryRun:
	case errors.As(err, &erasure):
		return rm, fmt.Errorf("gc: %w", err)
	case err != nil:
		return Removed{}, fmt.Errorf("gc: %w", err)
	}
	return rm, nil
}

// abandonedAfter is how long an unpublished pack must have gone unwritten
// before GC drops it, whatever the expiry: an import appends to its pack
// many times a second, so one untouched for this long was abandoned.
const abandonedAfter = time.Hour

// dropAbandonedPacks drops the unpublished packs last written before
// cutoff and returns how many.
func dropAbandonedPacks(tx store.Tx, cutoff time.Time) (int, error) {
	p, ok := tx.(store.PackTx)
	if !ok {
		return 0, nil
	}
	infos, err := p.UnpublishedPacks()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, info := range infos {
		if info.Updated.After(cutoff) {
			continue
		}
		if err := p.DropPack(info.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// deadHash reports whether h is marked in dead (by position in g).
func deadHash(g *dag.Graph, dead []bool, h Hash) bool {
	i, ok := g.Index(h)
	return ok && dead[i]
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = fmt.Errorf("dry run")
