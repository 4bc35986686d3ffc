package api

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// outlineCache keeps the shape of the whole repository (tract.Outline)
// that log --all and the graph are ordered by, until a ref moves: each
// request reads the refs (one short read transaction) and reads the
// outline again only when they differ from the ones it was read with.
type outlineCache struct {
	t  *tract.Tract
	mu sync.Mutex // guards cur; held while an outline is read, so that one read serves every waiting request
	// cur is the latest outline; nil before the first.
	cur *shape
}

// shape is one outline and what the routes derive from it, each made
// on first use.
type shape struct {
	key string
	o   *tract.Outline

	once struct{ flat, topo sync.Once }
	// flat is log --all's order: o.Commits, then each chain's commits;
	// chains[k] is where chain k starts in flat; flatPos maps a hash to
	// its position in flat.
	flat    []tract.Hash
	chains  []int
	flatPos map[tract.Hash]int
	// topo is o.Topo(); topoPos maps a hash to its row.
	topo    []tract.TopoCommit
	topoPos map[tract.Hash]int
}

// get returns the outline of the repository as it is now.
func (c *outlineCache) get(ctx context.Context) (*shape, error) {
	key, err := refsKey(ctx, c.t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.cur.key == key {
		return c.cur, nil
	}
	o, err := c.t.Outline(ctx)
	if err != nil {
		return nil, err
	}
	c.cur = &shape{key: key, o: o}
	return c.cur, nil
}

// drop forgets sh, when reading its commits showed it stale (gc deleted
// orphans, which moves no ref).
func (c *outlineCache) drop(sh *shape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == sh {
		c.cur = nil
	}
}

// refsKey reads every ref and the last entry of the STRANDED reflog
// (a conflict keeps its result off the branch without moving a ref) as
// one string: equal keys, equal outlines.
func refsKey(ctx context.Context, t *tract.Tract) (string, error) {
	var b strings.Builder
	err := t.Store().View(ctx, func(tx store.Tx) error {
		all, err := tx.Refs()
		if err != nil {
			return err
		}
		for _, r := range all {
			b.WriteString(r.Name)
			b.WriteByte(' ')
			if r.IsSymbolic() {
				b.WriteString(r.Target)
			} else {
				b.WriteString(r.Hash.String())
			}
			b.WriteByte('\n')
		}
		es, err := store.ReflogTail(tx, refs.Stranded, 1)
		if err != nil {
			return err
		}
		for _, e := range es {
			b.WriteString(refs.Stranded + " " + e.New.String() + " " + e.Time.String())
		}
		return nil
	})
	return b.String(), err
}

// flatOrder returns log --all's order (see shape).
func (sh *shape) flatOrder() ([]tract.Hash, []int, map[tract.Hash]int) {
	sh.once.flat.Do(func() {
		n := len(sh.o.Commits)
		for _, ch := range sh.o.Orphans {
			n += len(ch.Commits)
		}
		sh.flat = make([]tract.Hash, 0, n)
		sh.flat = append(sh.flat, sh.o.Commits...)
		for _, ch := range sh.o.Orphans {
			sh.chains = append(sh.chains, len(sh.flat))
			sh.flat = append(sh.flat, ch.Commits...)
		}
		sh.flatPos = make(map[tract.Hash]int, len(sh.flat))
		for i, h := range sh.flat {
			sh.flatPos[h] = i
		}
	})
	return sh.flat, sh.chains, sh.flatPos
}

// topoOrder returns the rows of the graph (see shape).
func (sh *shape) topoOrder() ([]tract.TopoCommit, map[tract.Hash]int) {
	sh.once.topo.Do(func() {
		sh.topo = sh.o.Topo()
		sh.topoPos = make(map[tract.Hash]int, len(sh.topo))
		for i, tc := range sh.topo {
			sh.topoPos[tc.Hash] = i
		}
	})
	return sh.topo, sh.topoPos
}

// infos reads the commits hs names, in order.
func (sh *shape) infos(ctx context.Context, hs []tract.Hash) ([]*tract.CommitInfo, error) {
	out := make([]*tract.CommitInfo, 0, len(hs))
	for c, err := range sh.o.Infos(ctx, hs) {
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// withShape runs fn on the current outline, and once more on a fresh
// one when fn fails on a stale one (a commit of it deleted since).
func (c *outlineCache) withShape(ctx context.Context, fn func(*shape) error) error {
	sh, err := c.get(ctx)
	if err != nil {
		return err
	}
	var answer *Error
	if err = fn(sh); err == nil || ctx.Err() != nil || errors.As(err, &answer) {
		return err
	}
	c.drop(sh)
	if sh, err = c.get(ctx); err != nil {
		return err
	}
	return fn(sh)
}
