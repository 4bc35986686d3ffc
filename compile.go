package tract

import (
	"context"
	"fmt"
	"iter"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/blocks"
	"github.com/tractdag/tract/internal/compiled"
	"github.com/tractdag/tract/store"
)

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	rev          string
	includeNotes bool
}

// CompileAt compiles the chain ending at rev instead of HEAD.
func CompileAt(rev string) CompileOption {
	return func(c *compileConfig) { c.rev = rev }
}

// IncludeNotes also compiles note commits (as their role). Error commits are
// never compiled.
func IncludeNotes() CompileOption {
	return func(c *compileConfig) { c.includeNotes = true }
}

// Compile turns the first-parent chain from the root to HEAD (a view's
// branch) into the
// messages a model is sent, oldest first: message, summary and steering
// commits (steering as role user); notes and errors are left out. On an
// unborn branch it returns no messages. A message imported with content
// parts, tool calls, a tool call id, a name or other members comes back
// with them (see MetaShape), as it was imported.
//
// Compile keeps the last compiled chain in memory: compiling again after new
// commits reads only the commits added since, and compiling an ancestor
// reads nothing. A new handle reads a chain that validated turns ran on
// from the compiled-context records they wrote (see docs/storage.md),
// which give the same messages. The returned slice is the caller's.
func (t *Tract) Compile(ctx context.Context, opts ...CompileOption) ([]Message, error) {
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Message
	err := t.view(ctx, func(tx store.Tx) error {
		var tip Hash
		if cfg.rev == "" {
			cur, err := t.position(tx)
			if err != nil {
				return err
			}
			tip = cur.Hash
		} else {
			var err error
			if tip, err = t.resolve(tx, cfg.rev); err != nil {
				return err
			}
		}
		if tip.IsZero() {
			return nil
		}
		var err error
		out, err = t.cache.Compile(ctx, tx, tip, cfg.includeNotes)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return out, nil
}

// CompileSeq is Compile as a sequence, for chains too long to hold: it
// walks the chain back from the tip remembering only what each message is
// made from (a blob hash and a role, or the commit's hash when it has a
// shape), then reads the texts forward; both
// walks read a page of commits per short read transaction, and the
// messages are yielded between transactions, so neither memory nor the
// file's lock is held while the caller writes them out. Commits are
// immutable, so the pages join up; only a commit deleted meanwhile (by a
// hard reset and gc) ends the sequence with an error.
func (t *Tract) CompileSeq(ctx context.Context, opts ...CompileOption) iter.Seq2[Message, error] {
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	type part struct {
		hash   Hash  // the blob's, or the commit's when shaped
		role   uint8 // Role.Code
		shaped bool
	}
	return func(yield func(Message, error) bool) {
		// Back from the tip, remembering what each message is made of.
		var parts blocks.List[part]
		var next Hash
		started := false
		back := func(tx store.Tx) ([]part, bool, error) {
			if !started {
				started = true
				var err error
				if next, err = t.tipOf(tx, cfg.rev); err != nil {
					return nil, false, err
				}
			}
			links, err := store.ReadChain(tx, next, 16*pageSize, Hash{})
			if err != nil {
				return nil, false, err
			}
			var out []part
			for _, l := range links {
				hd := l.Header
				if role, ok := dag.SentRole(hd.Kind, hd.Role, cfg.includeNotes); ok {
					code, _ := role.Code() // a stored commit's role is valid
					p := part{hd.Blob, code, hd.Shaped}
					if hd.Shaped {
						p.hash = l.Hash
					}
					out = append(out, p)
				}
				next = hd.Parent
			}
			return out, !next.IsZero(), nil
		}
		err := walkPages(ctx, t, back, func(p part) bool { parts.Add(p); return true })
		if err != nil {
			yield(Message{}, fmt.Errorf("compile: %w", err))
			return
		}
		// Then forward, reading the texts.
		pull, stop := iter.Pull(parts.Backward())
		defer stop()
		forward := func(tx store.Tx) ([]Message, bool, error) {
			var ps []part
			for len(ps) < pageSize {
				p, ok := pull()
				if !ok {
					break
				}
				ps = append(ps, p)
			}
			// A shaped part names its commit, whose header names the blob.
			var shaped []Hash
			for _, p := range ps {
				if p.shaped {
					shaped = append(shaped, p.hash)
				}
			}
			commits, err := store.ReadCommitsStored(tx, shaped)
			if err != nil {
				return nil, false, err
			}
			links := make([]store.ChainLink, len(ps))
			for i, k := 0, 0; i < len(ps); i++ {
				p := ps[i]
				// Kind message: the part's role is already the one it is sent as.
				hd := dag.Header{Kind: KindMessage, Role: dag.RoleFromCode(p.role), Blob: p.hash}
				if p.shaped {
					hd.Blob, hd.Shaped = commits[k].Blob, true
					k++
				}
				links[i] = store.ChainLink{Hash: p.hash, Header: hd}
			}
			cached, _, err := compiled.With(tx, links, false, commits)
			if err != nil {
				return nil, false, err
			}
			return compiled.Messages(cached), len(ps) == pageSize, nil
		}
		if err := walkPages(ctx, t, forward, func(m Message) bool { return yield(m, nil) }); err != nil {
			yield(Message{}, fmt.Errorf("compile: %w", err))
		}
	}
}

// DropCaches forgets the compiled chain Compile keeps in memory, so the next
// Compile reads the whole chain again, as a new process would: from the
// compiled-context records validated turns wrote, where the chain has
// them, and from its commits elsewhere.
func (t *Tract) DropCaches() {
	t.cachesMu.Lock()
	defer t.cachesMu.Unlock()
	for _, c := range t.caches {
		c.Reset()
	}
}
