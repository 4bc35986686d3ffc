package tract

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"unsafe"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/blocks"
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
// reads nothing. The returned slice is the caller's.
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
		out, err = t.cache.compile(ctx, tx, tip, cfg.includeNotes)
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
			cached, _, err := compileWith(tx, links, false, commits)
			if err != nil {
				return nil, false, err
			}
			return messagesOf(cached), len(ps) == pageSize, nil
		}
		if err := walkPages(ctx, t, forward, func(m Message) bool { return yield(m, nil) }); err != nil {
			yield(Message{}, fmt.Errorf("compile: %w", err))
		}
	}
}

// compileCache remembers one compiled first-parent chain. Commits are
// immutable, so a prefix of a cached chain stays valid forever.
type compileCache struct {
	mu sync.Mutex // guards every field below

	notes bool   // whether notes were compiled in
	chain []Hash // first-parent chain, root first
	pos   map[Hash]int32
	count []int32 // count[i]: messages compiled from chain[:i+1]
	msgs  []cachedMessage
}

// compile returns the messages of the chain ending at tip.
//
// It walks back from tip until a commit the cache knows (or the root),
// compiling each commit on the way. The length of that walk is unknown until
// it ends, so it collects into fixed-size blocks and copies once into
// exact-size slices: growing one slice by appending would allocate (and leave
// as garbage) several times its size on a cold compile of a long chain.
func (c *compileCache) compile(ctx context.Context, tx store.Tx, tip Hash, notes bool) ([]Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.notes != notes {
		c.reset(notes)
	}
	var hashes blocks.List[Hash]
	var msgs blocks.List[cachedMessage]
	var sent blocks.List[bool] // whether each walked commit compiled to a message
	base := -1                 // position in the cache where the walk stopped
	// The walk most often ends at the cached tip (a chain grown since):
	// ReadChain stops there. It reads pages growing from one commit,
	// so a walk of one new commit reads just that one, and
	// a cold walk of a long chain a few round trips on a database.
	var stop Hash
	if len(c.chain) > 0 {
		stop = c.chain[len(c.chain)-1]
	}
	var links []store.ChainLink // one buffer for every page
	for h, size := tip, 1; !h.IsZero(); size = min(4*size, 4096) {
		if i, ok := c.pos[h]; ok {
			base = int(i)
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if links, err = store.AppendChain(links[:0], tx, h, size, stop); err != nil {
			return nil, err
		}
		if len(links) == 0 { // h is stop, which c.pos holds
			return nil, fmt.Errorf("commit %s: the compile cache lost it", h.Short())
		}
		for k, l := range links[1:] {
			if _, ok := c.pos[l.Hash]; ok { // an ancestor of the cached tip
				links = links[:k+1]
				break
			}
		}
		page, flags, err := compilePage(tx, links, notes)
		if err != nil {
			return nil, err
		}
		for _, m := range page {
			msgs.Add(m)
		}
		for i, l := range links {
			sent.Add(flags[i])
			hashes.Add(l.Hash)
		}
		h = links[len(links)-1].Header.Parent
	}
	keep := 0
	if base >= 0 {
		keep = int(c.count[base])
	}
	if hashes.Len() == 0 {
		return messagesOf(c.msgs[:keep]), nil
	}
	// Truncate the cache to the shared prefix and append the walked commits.
	for _, h := range c.chain[base+1:] {
		delete(c.pos, h)
	}
	c.chain, c.count, c.msgs = c.chain[:base+1], c.count[:base+1], c.msgs[:keep]
	fresh, flags := hashes.Reversed(), sent.Reversed()
	if len(c.chain) == 0 {
		c.chain, c.msgs = fresh, msgs.Reversed()
		c.count = make([]int32, 0, len(fresh))
		c.pos = make(map[Hash]int32, len(fresh))
	} else {
		c.chain = append(c.chain, fresh...)
		c.msgs = append(c.msgs, msgs.Reversed()...)
	}
	n := int32(keep)
	for i, h := range fresh {
		c.pos[h] = int32(base + 1 + i)
		if flags[i] {
			n++
		}
		c.count = append(c.count, n)
	}
	return messagesOf(c.msgs), nil
}

// reset empties the cache; the caller holds c.mu.
func (c *compileCache) reset(notes bool) {
	c.notes, c.chain, c.pos, c.count, c.msgs = notes, nil, nil, nil, nil
}

// cachedMessage is a compiled message as the cache keeps it: as small as
// a Message was before shapes (Message has grown fields that almost every
// message leaves empty), so that a long chain's cache stays small.
type cachedMessage struct {
	content string
	shaped  *Message // the whole message, for a commit with a shape
	role    uint8    // Role.Code
}

// messagesOf returns the messages of cached, each the caller's (a shaped
// one is copied deeply: changing it changes nothing in the cache), with
// room for a few more: a turn's tool steps append theirs in place.
func messagesOf(cached []cachedMessage) []Message {
	out := make([]Message, len(cached), len(cached)+8)
	for i, c := range cached {
		out[i] = c.message()
	}
	return out
}

// message returns c as a message of the caller's (a shaped one copied
// deeply).
func (c cachedMessage) message() Message {
	if c.shaped != nil {
		return c.shaped.Clone()
	}
	return Message{Role: string(dag.RoleFromCode(c.role)), Content: c.content}
}

// compilePage turns the commits of links into messages: sent[i] says
// whether links[i] is sent to a model, and msgs holds those messages, in
// order. It reads their texts in one call, and the metadata of those
// whose metadata may hold a shape in another.
func compilePage(tx store.Tx, links []store.ChainLink, notes bool) (msgs []cachedMessage, sent []bool, err error) {
	all, err := store.ChainCommits(tx, links, func(l store.ChainLink) bool {
		_, ok := dag.SentRole(l.Header.Kind, l.Header.Role, notes)
		return ok && l.Header.Shaped
	})
	if err != nil {
		return nil, nil, err
	}
	var shapes []*dag.Commit
	for _, c := range all {
		if c != nil {
			shapes = append(shapes, c)
		}
	}
	return compileWith(tx, links, notes, shapes)
}

// compileWith is compilePage given the commits whose metadata may hold a
// shape, in order.
func compileWith(tx store.Tx, links []store.ChainLink, notes bool, shapes []*dag.Commit) (msgs []cachedMessage, sent []bool, err error) {
	sent = make([]bool, len(links))
	blobs, owners := make([]Hash, 0, len(links)), make([]Hash, 0, len(links))
	for i, l := range links {
		if _, ok := dag.SentRole(l.Header.Kind, l.Header.Role, notes); ok {
			sent[i] = true
			blobs, owners = append(blobs, l.Header.Blob), append(owners, l.Hash)
		}
	}
	texts, err := store.ReadTexts(tx, blobs, owners)
	if err != nil {
		return nil, nil, err
	}
	msgs = make([]cachedMessage, 0, len(texts))
	for i, l := range links {
		if !sent[i] {
			continue
		}
		text := texts[len(msgs)]
		role, _ := dag.SentRole(l.Header.Kind, l.Header.Role, notes)
		code, _ := role.Code() // a stored commit's role is valid
		m := cachedMessage{content: text, role: code}
		if l.Header.Shaped {
			c := shapes[0]
			shapes = shapes[1:]
			sm, err := ingest.CommitMessage(c, role, text)
			if err != nil {
				return nil, nil, fmt.Errorf("commit %s: %w", l.Hash.Short(), err)
			}
			if sm.Parts != nil || sm.ToolCalls != nil || sm.Extra != nil || sm.Name != "" || sm.ToolCallID != "" {
				m = cachedMessage{shaped: &sm, role: code}
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, sent, nil
}

// compileOne turns commit c, whose hash is h, into a message; ok is false
// for commits that are not sent to a model.
func compileOne(tx store.Tx, h Hash, c *dag.Commit, notes bool) (cachedMessage, bool, error) {
	msgs, sent, err := compileWith(tx, []store.ChainLink{{Hash: h, Header: c.Header()}}, notes, []*dag.Commit{c})
	if err != nil || !sent[0] {
		return cachedMessage{}, false, err
	}
	return msgs[0], true, nil
}

// DropCaches forgets the compiled chain Compile keeps in memory, so the next
// Compile reads the whole chain again (as a new process would).
func (t *Tract) DropCaches() {
	t.cachesMu.Lock()
	defer t.cachesMu.Unlock()
	for _, c := range t.caches {
		c.mu.Lock()
		c.reset(false)
		c.mu.Unlock()
	}
}

// bytesToString returns b as a string without copying. Blob returns a fresh
// copy that nothing else references, so the string owns it from here on;
// this halves Compile's allocations.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
