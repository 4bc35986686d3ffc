package tract

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
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
	d, err := store.DeleteCommits(tx, g, dead, func(refs.Entry) bool { return false }, nil)
	return removed(d), err
}

// removed is what a deletion removed, as a Removed.
func removed(d store.Deleted) Removed {
	return Removed{Commits: d.Commits, Blobs: d.Blobs, ReflogEntries: d.ReflogEntries}
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
	err := t.update(ctx, func(tx store.Tx) error {
		cutoff := t.now().Add(-cfg.expiry)
		expired := func(e refs.Entry) bool { return !e.Time.After(cutoff) }
		sides, err := store.CloseAbandonedSides(tx, t.now().Add(-sideAbandonedAfter), t.now())
		if err != nil {
			return err
		}
		g, dead, n, err := store.Garbage(tx, expired)
		if err != nil {
			return err
		}
		p.SetTotal(int64(n))
		d, err := store.DeleteCommits(tx, g, dead, expired, func() { p.Add(1) })
		if err != nil {
			return err
		}
		rm = removed(d)
		rm.SideChains = sides
		if rm.UnfinishedImports, err = store.DropAbandonedPacks(tx, t.now().Add(-max(cfg.expiry, abandonedAfter))); err != nil {
			return err
		}
		// ORIG_HEAD does not protect commits; drop it with what it named.
		if r, err := tx.Ref(refs.OrigHead); err == nil && store.Dead(g, dead, r.Hash) {
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

// errDryRun rolls back a dry run's transaction.
var errDryRun = fmt.Errorf("dry run")
