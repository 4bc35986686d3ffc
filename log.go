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
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/search"
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
	// Refs are the names pointing at the commit: "HEAD -> BRANCH" (or
	// "HEAD" when detached), branch short names, "ORIG_HEAD". Parents and
	// Refs are never nil, so their JSON is [] when empty.
	Refs []string `json:"refs"`
	// LostParent is, for a commit of a repository salvaged from a damaged
	// file whose parent the salvage could not recover, that parent: the
	// history before this commit is lost (see Salvage). Zero otherwise.
	LostParent Hash `json:"lost_parent,omitzero"`
}

// MetaValue returns the metadata value under key (nil when absent).
func (c *CommitInfo) MetaValue(key string) any {
	v, _ := record.Field[any](c.Meta, key)
	return v
}

// Diagnosis returns the validator's diagnosis recorded on a failed attempt
// or steering commit ("" when there is none).
func (c *CommitInfo) Diagnosis() string {
	s, _ := record.Field[string](c.Meta, MetaDiagnosis)
	return s
}

// LogOption configures Log.
type LogOption func(*logConfig)

type logConfig struct {
	limit int
	rev   string
	grep  *search.Grep
}

// LogLimit stops Log after n commits (n <= 0: no limit).
func LogLimit(n int) LogOption { return func(c *logConfig) { c.limit = n } }

// LogFrom starts Log at rev instead of HEAD.
func LogFrom(rev string) LogOption { return func(c *logConfig) { c.rev = rev } }

// LogGrep keeps only the commits whose text or diagnosis g matches (see
// search.NewGrep); LogLimit then counts the commits kept. The walk still
// reads a page at a time: a search of a long history holds no more.
func LogGrep(g *search.Grep) LogOption { return func(c *logConfig) { c.grep = g } }

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

// walkPages runs a walk a page at a time: each call of next runs in a
// short read transaction of its own and returns a page and whether more
// follow, and each value of the page goes to each after that transaction
// has ended, so neither the whole walk nor the file's lock is held while
// the caller works. Commits are immutable, so the pages join up. It stops
// at the first error (the context's included) or when each returns false.
func walkPages[T any](ctx context.Context, t *Tract, next func(tx store.Tx) (page []T, more bool, err error), each func(T) bool) error {
	defer t.Linger()()
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var page []T
		err := t.view(ctx, func(tx store.Tx) (err error) {
			page, more, err = next(tx)
			return err
		})
		if err != nil {
			return err
		}
		for _, v := range page {
			if !each(v) {
				return nil
			}
		}
	}
	return nil
}

// walkPagesAhead is walkPages reading one page ahead: the next page's
// read transaction runs in a goroutine of its own while each takes the
// values of the page before, so that the time a page takes to arrive (a
// database's round trips and lookups) overlaps the caller's work instead
// of adding to it. next must not depend on anything each does; the walk
// waits for the page it reads ahead before it returns.
func walkPagesAhead[T any](ctx context.Context, t *Tract, next func(tx store.Tx) (page []T, more bool, err error), each func(T) bool) error {
	defer t.Linger()()
	type result struct {
		page []T
		more bool
		err  error
	}
	fetch := func() (r result) {
		if r.err = ctx.Err(); r.err != nil {
			return r
		}
		r.err = t.view(ctx, func(tx store.Tx) (err error) {
			r.page, r.more, err = next(tx)
			return err
		})
		return r
	}
	for r := fetch(); ; {
		if r.err != nil {
			return r.err
		}
		var ahead chan result
		if r.more {
			ahead = make(chan result, 1)
			go func() { ahead <- fetch() }()
		}
		for _, v := range r.page {
			if !each(v) {
				if ahead != nil {
					<-ahead // no transaction outlives the walk
				}
				return nil
			}
		}
		if ahead == nil {
			return nil
		}
		r = <-ahead
	}
}

// LogSeq is Log as a sequence: it reads the history a page of commits at a
// time (see walkPages), so a long history neither sits in memory nor keeps
// writers waiting while the caller prints. Only a commit deleted meanwhile
// (by a hard reset and gc) ends the sequence with an error.
func (t *Tract) LogSeq(ctx context.Context, opts ...LogOption) iter.Seq2[*CommitInfo, error] {
	var cfg logConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func(yield func(*CommitInfo, error) bool) {
		var next Hash
		var names map[Hash][]string
		started, n := false, 0
		page := func(tx store.Tx) ([]*CommitInfo, bool, error) {
			if !started {
				tip, err := t.tipOf(tx, cfg.rev)
				if err != nil {
					return nil, false, err
				}
				if names, err = refNames(tx); err != nil {
					return nil, false, err
				}
				next, started = tip, true
			}
			size := pageSize
			if cfg.limit > 0 && cfg.grep == nil {
				size = min(size, cfg.limit-n)
			}
			links, cs, err := store.AppendChainCommits(nil, tx, next, size, nil)
			if err != nil {
				return nil, false, err
			}
			out, err := infos(tx, store.ChainHashes(links), cs, names)
			if err != nil {
				return nil, false, err
			}
			if len(links) > 0 {
				last := len(links) - 1
				next = links[last].Header.Parent
				if next.IsZero() && len(cs[last].Parents) > 0 {
					// The chain ends where a salvage lost its history.
					out[last].LostParent = cs[last].Parents[0]
				}
			}
			if cfg.grep != nil {
				kept := out[:0]
				for _, ci := range out {
					if cfg.grep.Match(ci.Text, ci.Diagnosis()) {
						kept = append(kept, ci)
					}
				}
				out = kept
				if cfg.limit > 0 && n+len(out) > cfg.limit {
					out = out[:cfg.limit-n]
				}
			}
			n += len(out)
			return out, !next.IsZero() && (cfg.limit <= 0 || n < cfg.limit), nil
		}
		if err := walkPages(ctx, t, page, func(ci *CommitInfo) bool { return yield(ci, nil) }); err != nil {
			yield(nil, fmt.Errorf("log: %w", err))
		}
	}
}

// Show returns one commit by revision.
func (t *Tract) Show(ctx context.Context, rev string) (*CommitInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *CommitInfo
	err := t.view(ctx, func(tx store.Tx) error {
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
	err := t.view(ctx, func(tx store.Tx) (err error) {
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
		if r.Name == headTarget {
			continue
		}
		h, ok := r.Hash, true // a branch's, as Refs read it: no second look
		if r.IsSymbolic() {
			var err error
			if h, ok, err = store.ResolveRef(tx, r.Name); err != nil || !ok {
				continue
			}
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
	ci := newInfo(h, c, text, names)
	if len(c.Parents) > 0 && store.LostCommit(tx, c.Parents[0]) {
		ci.LostParent = c.Parents[0]
	}
	return ci, nil
}

func newInfo(h Hash, c *dag.Commit, text string, names map[Hash][]string) *CommitInfo {
	// A copy: c may be a cached graph's, and callers may change theirs.
	parents, refNames := append([]Hash{}, c.Parents...), names[h]
	if refNames == nil {
		refNames = []string{}
	}
	return &CommitInfo{
		Hash: h, Parents: parents, Kind: c.Kind, Role: c.Role, Text: text,
		Meta: json.RawMessage(c.Meta), Time: c.Time, Refs: refNames,
	}
}

// Message returns the commit as an OpenAI message: its role, and its text
// as the content, or, for a commit with a shape (see MetaShape), the
// message the shape keeps. Unlike Compile it keeps the commit's own role
// (a steering commit is role user either way).
func (c *CommitInfo) Message() (Message, error) {
	shape, err := record.Shape(c.Meta)
	if err != nil || shape == nil {
		return Message{Role: string(c.Role), Content: c.Text}, err
	}
	return ingest.ShapedMessage(c.Role, c.Text, shape)
}
