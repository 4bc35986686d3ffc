package tract

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// CommitInfo is a commit with its text and the refs that point at it.
type CommitInfo struct {
	Hash    Hash            `json:"hash"`
	Parents []Hash          `json:"parents"`
	Kind    Kind            `json:"kind"`
	Role    Role            `json:"role"`
	Text    string          `json:"text"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Time    time.Time       `json:"time"`
	// Refs are the names pointing at the commit: "HEAD", branch short names,
	// "ORIG_HEAD".
	Refs []string `json:"refs,omitempty"`
}

// MetaValue returns the metadata value under key (nil when absent).
func (c *CommitInfo) MetaValue(key string) any {
	if len(c.Meta) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(c.Meta, &m) != nil {
		return nil
	}
	return m[key]
}

// Diagnosis returns the validator's diagnosis recorded on a failed attempt
// or steering commit ("" when there is none).
func (c *CommitInfo) Diagnosis() string {
	s, _ := c.MetaValue(MetaDiagnosis).(string)
	return s
}

// LogOption configures Log.
type LogOption func(*logConfig)

type logConfig struct {
	limit int
	rev   string
}

// LogLimit stops Log after n commits (n <= 0: no limit).
func LogLimit(n int) LogOption { return func(c *logConfig) { c.limit = n } }

// LogFrom starts Log at rev instead of HEAD.
func LogFrom(rev string) LogOption { return func(c *logConfig) { c.rev = rev } }

// Log returns the first-parent history from HEAD, newest first. On an unborn
// branch it returns no commits. LogSeq gives the same commits without
// holding them all.
func (t *Tract) Log(ctx context.Context, opts ...LogOption) ([]*CommitInfo, error) {
	var out []*CommitInfo
	for ci, err := range t.LogSeq(ctx, opts...) {
		if err != nil {
			return nil, err
		}
		out = append(out, ci)
	}
	return out, nil
}

// pageSize is how many commits a paged walk reads per read transaction:
// enough that a transaction's fixed cost does not show, few enough that
// a writer never waits long behind a reader.
const pageSize = 256

// LogSeq is Log as a sequence: it reads the history a page of commits at a
// time, each page in a short read transaction, and yields them between
// transactions, so a long history neither sits in memory nor keeps writers
// waiting while the caller prints. Commits are immutable, so the pages
// join up; only a commit deleted meanwhile (by a hard reset and gc) ends
// the sequence with an error.
func (t *Tract) LogSeq(ctx context.Context, opts ...LogOption) iter.Seq2[*CommitInfo, error] {
	var cfg logConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func(yield func(*CommitInfo, error) bool) {
		defer t.linger()()
		var next Hash
		var names map[Hash][]string
		started, n := false, 0
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("log: %w", err))
				return
			}
			size := pageSize
			if cfg.limit > 0 {
				size = min(size, cfg.limit-n)
			}
			page := make([]*CommitInfo, 0, size)
			err := t.view(func(tx store.Tx) error {
				if !started {
					tip, err := t.tipOf(tx, cfg.rev)
					if err != nil {
						return err
					}
					if names, err = refNames(tx); err != nil {
						return err
					}
					next, started = tip, true
				}
				for len(page) < size && !next.IsZero() {
					c, err := tx.Commit(next)
					if err != nil {
						return fmt.Errorf("commit %s: %w", next.Short(), err)
					}
					ci, err := info(tx, next, c, names)
					if err != nil {
						return err
					}
					page = append(page, ci)
					next = c.Parent()
				}
				return nil
			})
			if err != nil {
				yield(nil, fmt.Errorf("log: %w", err))
				return
			}
			for _, ci := range page {
				if !yield(ci, nil) {
					return
				}
				n++
			}
			if next.IsZero() || (cfg.limit > 0 && n >= cfg.limit) {
				return
			}
		}
	}
}

// Show returns one commit by revision.
func (t *Tract) Show(ctx context.Context, rev string) (*CommitInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *CommitInfo
	err := t.view(func(tx store.Tx) error {
		h, err := t.resolve(tx, rev)
		if err != nil {
			return err
		}
		c, err := tx.Commit(h)
		if err != nil {
			return err
		}
		names, err := refNames(tx)
		if err != nil {
			return err
		}
		out, err = info(tx, h, c, names)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("show: %w", err)
	}
	return out, nil
}

// Resolve returns the commit a revision names.
func (t *Tract) Resolve(ctx context.Context, rev string) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return Hash{}, err
	}
	var h Hash
	err := t.view(func(tx store.Tx) (err error) {
		h, err = t.resolve(tx, rev)
		return err
	})
	return h, err
}

// tipOf resolves rev, or t's position when rev is empty (zero on an unborn
// branch).
func (t *Tract) tipOf(tx store.Tx, rev string) (Hash, error) {
	if rev != "" {
		return t.resolve(tx, rev)
	}
	cur, err := t.position(tx)
	return cur.Hash, err
}

// refNames maps commits to the display names of the refs pointing at them.
func refNames(tx store.Tx) (map[Hash][]string, error) {
	all, err := tx.Refs()
	if err != nil {
		return nil, err
	}
	out := make(map[Hash][]string)
	headTarget := ""
	for _, r := range all {
		if r.Name == refs.HEAD {
			headTarget = r.Target
		}
	}
	for _, r := range all {
		h, ok, err := store.ResolveRef(tx, r.Name)
		if err != nil || !ok || r.Name == headTarget {
			continue
		}
		name := r.Name
		if b, ok := refs.BranchName(name); ok {
			name = b
		} else if r.Name == refs.HEAD && r.IsSymbolic() {
			b, _ := refs.BranchName(r.Target)
			name = "HEAD -> " + b
		}
		out[h] = append(out[h], name)
	}
	for h := range out {
		sort.Slice(out[h], func(i, j int) bool { return refOrder(out[h][i]) < refOrder(out[h][j]) })
	}
	return out, nil
}

// refOrder sorts HEAD first, then branches, then ORIG_HEAD.
func refOrder(name string) string {
	switch {
	case strings.HasPrefix(name, "HEAD"):
		return "0" + name
	case name == refs.OrigHead:
		return "2" + name
	}
	return "1" + name
}

func info(tx store.Tx, h Hash, c *dag.Commit, names map[Hash][]string) (*CommitInfo, error) {
	text, err := commitText(tx, c)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return newInfo(h, c, text, names), nil
}

func newInfo(h Hash, c *dag.Commit, text string, names map[Hash][]string) *CommitInfo {
	return &CommitInfo{
		Hash: h, Parents: c.Parents, Kind: c.Kind, Role: c.Role, Text: text,
		Meta: json.RawMessage(c.Meta), Time: c.Time, Refs: names[h],
	}
}

// History is the whole repository as LogAll returns it.
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
	out := &History{Commits: make([]*CommitInfo, 0, len(o.Commits))}
	collect := func(hs []Hash) ([]*CommitInfo, error) {
		var cs []*CommitInfo
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
	if out.Commits == nil {
		out.Commits = []*CommitInfo{}
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
	out := &Outline{t: t, g: &dag.Graph{}}
	err := t.view(func(tx store.Tx) error {
		if err := tx.ForEachCommit(out.g.Add); err != nil {
			return err
		}
		out.g.Link()
		var err error
		if out.names, err = refNames(tx); err != nil {
			return err
		}
		tips, err := refTips(tx)
		if err != nil {
			return err
		}
		reach, err := out.g.Reachable(tips...)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		orphanedBy, err := orphaningEntries(tx)
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
		return nil, fmt.Errorf("log --all: %w", err)
	}
	return out, nil
}

// Infos returns the commits hs names, in that order, with their texts and
// refs (as they were when the outline was read), reading a page of them
// per short read transaction.
func (o *Outline) Infos(ctx context.Context, hs []Hash) iter.Seq2[*CommitInfo, error] {
	return func(yield func(*CommitInfo, error) bool) {
		defer o.t.linger()()
		for len(hs) > 0 {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("log --all: %w", err))
				return
			}
			n := min(pageSize, len(hs))
			page := make([]*CommitInfo, 0, n)
			err := o.t.view(func(tx store.Tx) error {
				for _, h := range hs[:n] {
					c, err := o.commit(tx, h)
					if err != nil {
						return fmt.Errorf("commit %s: %w", h.Short(), err)
					}
					ci, err := info(tx, h, c, o.names)
					if err != nil {
						return err
					}
					page = append(page, ci)
				}
				return nil
			})
			if err != nil {
				yield(nil, fmt.Errorf("log --all: %w", err))
				return
			}
			for _, ci := range page {
				if !yield(ci, nil) {
					return
				}
			}
			hs = hs[n:]
		}
	}
}

// commit returns commit h: from the outline's graph unless it has
// metadata (which the graph does not keep) or is not in it.
func (o *Outline) commit(tx store.Tx, h Hash) (*dag.Commit, error) {
	if i, ok := o.g.Index(h); ok && !o.g.HasMeta(i) {
		return o.g.Commit(i, tx.Commit)
	}
	return tx.Commit(h)
}

// orphaningEntries maps each commit a ref moved away from to the latest
// reflog entry of HEAD (or of any ref) that did so backwards or sideways —
// the entry that orphaned it — and each result a conflict kept off its
// branch to the entry of the stranded reflog that records it.
func orphaningEntries(tx store.Tx) (map[Hash]refs.Entry, error) {
	names, err := tx.ReflogNames()
	if err != nil {
		return nil, err
	}
	out := make(map[Hash]refs.Entry)
	for _, name := range names {
		es, err := tx.Reflog(name)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if e.Action == refs.ActionConflict {
				// A result kept off its branch: the entry names it as New.
				out[e.New] = e
				continue
			}
			if e.Old.IsZero() || e.Action == refs.ActionCommit || e.Action == refs.ActionImport {
				continue
			}
			if prev, ok := out[e.Old]; !ok || e.Time.After(prev.Time) || name == refs.HEAD {
				out[e.Old] = e
			}
		}
	}
	return out, nil
}
