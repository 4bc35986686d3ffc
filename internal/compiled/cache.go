// Package compiled compiles first-parent chains into the messages a
// model is sent, and keeps what it compiled: in memory, for the next
// compile of the same process, and in the store, as records of the
// messages of runs of commits (see store.ContextTx), so that a new
// process reads a long chain's context in a few records instead of
// reading every commit and text of the chain.
//
// The records are a cache: what they give is byte for byte what
// compiling the commits gives, a record that cannot be read is passed by
// (the commits are read instead), and a repository without them works
// as before. Save writes them; docs/performance.md has the figures.
package compiled

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/blocks"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/store"
)

// Cache remembers one compiled first-parent chain. Commits are immutable,
// so a prefix of a cached chain stays valid forever. The zero value is an
// empty cache.
type Cache struct {
	// MinBytes is the size of a chain's compiled messages below which
	// Save writes no record: a chain that small compiles from its commits
	// in a few milliseconds, and its records would only store its texts a
	// second time. Zero keeps records for every chain; a negative value
	// keeps none. Set it before the first use.
	MinBytes int

	mu sync.Mutex // guards every field below

	notes bool // whether notes were compiled in
	// chain holds commits of the chain, root first: every commit the
	// cache compiled, but of a run read from a record only its last.
	chain []dag.Hash
	pos   map[dag.Hash]int32
	count []int32 // count[i]: messages compiled from the root through chain[i]
	msgs  []Message
}

// Compile returns the messages of the chain ending at tip (not zero):
// notes says whether note commits are compiled in.
//
// It walks back from tip until a commit the cache knows (or the root),
// compiling each commit on the way, or, where a commit has a record,
// taking the record's messages and going on from the commit before its
// run.
func (c *Cache) Compile(ctx context.Context, tx store.Tx, tip dag.Hash, notes bool) ([]llm.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.load(ctx, tx, tip, notes)
	if err != nil {
		return nil, err
	}
	return Messages(c.msgs[:n]), nil
}

// Reset empties the cache, so that the next Compile reads the whole chain
// again (from its records, if it has any).
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset(false)
}

// reset empties the cache; the caller holds c.mu.
func (c *Cache) reset(notes bool) {
	c.notes, c.chain, c.pos, c.count, c.msgs = notes, nil, nil, nil, nil
}

// load brings the chain ending at tip into the cache and returns the
// number of its messages; the caller holds c.mu. Records are used when
// notes are not compiled in; records that do not add up (a message count
// that disagrees with the chain's) are passed by: the chain is then read
// from its commits.
func (c *Cache) load(ctx context.Context, tx store.Tx, tip dag.Hash, notes bool) (int, error) {
	if c.notes != notes {
		c.reset(notes)
	}
	ct, _ := tx.(store.ContextTx)
	if notes {
		ct = nil
	}
	n, ok, err := c.walk(ctx, tx, tip, ct)
	if err == nil && !ok {
		n, _, err = c.walk(ctx, tx, tip, nil)
	}
	return n, err
}

// chunk is messages a walk collected: a record's, oldest first, or a
// page's, newest first.
type chunk struct {
	msgs        []Message
	newestFirst bool
}

// oldestFirst returns the messages of chunks, collected newest chunk
// first, in one slice, oldest first, with room for spare more.
func oldestFirst(chunks []chunk, spare int) []Message {
	n := 0
	for _, ch := range chunks {
		n += len(ch.msgs)
	}
	out := make([]Message, n, n+spare)
	for _, ch := range chunks {
		if !ch.newestFirst {
			n -= len(ch.msgs)
			copy(out[n:], ch.msgs)
			continue
		}
		for _, m := range ch.msgs {
			n--
			out[n] = m
		}
	}
	return out
}

// spareCommits is the room a cold walk leaves in the cache's slices for
// the commits that follow.
const spareCommits = 64

// step is what one entry of a walk adds to the chain's messages: add
// messages, and for a record, the total it says the chain has through
// its commit (-1 for a commit).
type step struct{ add, total int32 }

// walk is load, with the records of ct (nil: none); ok is false when
// the records did not add up, and the cache is then unchanged.
//
// The length of the walk is unknown until it ends, so it collects into
// fixed-size blocks (the messages: the pages and records they come in)
// and copies once into exact-size slices: growing one slice by appending
// would allocate (and leave as garbage) several times its size on a cold
// compile of a long chain.
func (c *Cache) walk(ctx context.Context, tx store.Tx, tip dag.Hash, ct store.ContextTx) (n int, ok bool, err error) {
	var hashes blocks.List[dag.Hash]
	var chunks []chunk         // the messages walked, the newest chunk first
	var adds blocks.List[step] // what each walked commit (or record) adds
	hopped := false
	base := -1 // position in the cache where the walk stopped
	// The walk most often ends at the cached tip (a chain grown since):
	// ReadChain stops there. It reads pages growing from one commit,
	// so a walk of one new commit reads just that one, and
	// a cold walk of a long chain a few round trips on a database.
	var stop dag.Hash
	if len(c.chain) > 0 {
		stop = c.chain[len(c.chain)-1]
	}
	var links []store.ChainLink // one buffer for every page
	rs := &records{ct: ct}
	// A walk from a known chain most often ends within a few commits:
	// it looks for records (a lookup more, a round trip on a database)
	// only when the cache is empty or the walk goes on.
	walked := 0
	for h, size := tip, 1; !h.IsZero(); size = min(4*size, 4096) {
		if i, ok := c.pos[h]; ok {
			base = int(i)
			break
		}
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		useRecords := ct != nil && (len(c.chain) == 0 || walked >= 16)
		if useRecords {
			r, ok, err := read(tx, rs, h)
			if err != nil {
				return 0, false, err
			}
			if ok { // the counters, when h has them, must agree
				cn, has, err := tx.Counters(h)
				if err != nil {
					return 0, false, err
				}
				ok = !has || cn.Messages == int64(r.total)
			}
			if ok {
				chunks = append(chunks, chunk{msgs: r.msgs})
				adds.Add(step{int32(len(r.msgs)), int32(r.total)})
				hashes.Add(h)
				hopped = true
				h, size = r.prev, 1
				continue
			}
		}
		if links, err = store.AppendChain(links[:0], tx, h, size, stop); err != nil {
			return 0, false, err
		}
		if len(links) == 0 { // h is stop, which c.pos holds
			return 0, false, fmt.Errorf("commit %s: the compile cache lost it", h.Short())
		}
		for k, l := range links[1:] {
			if _, ok := c.pos[l.Hash]; ok { // an ancestor of the cached tip
				links = links[:k+1]
				break
			}
		}
		if useRecords && len(links) > 1 {
			hs := make([]dag.Hash, len(links)-1)
			for k, l := range links[1:] {
				hs[k] = l.Hash
			}
			has, err := ct.HasContexts(hs)
			if err != nil {
				return 0, false, err
			}
			for k, ok := range has {
				if ok { // the walk goes on from its record
					links = links[:k+1]
					break
				}
			}
		}
		page, flags, err := Page(tx, links, c.notes)
		if err != nil {
			return 0, false, err
		}
		chunks = append(chunks, chunk{msgs: page, newestFirst: true})
		walked += len(links)
		for i, l := range links {
			s := step{total: -1}
			if flags[i] {
				s.add = 1
			}
			adds.Add(s)
			hashes.Add(l.Hash)
		}
		h = links[len(links)-1].Header.Parent
	}
	keep := 0
	if base >= 0 {
		keep = int(c.count[base])
	}
	if hashes.Len() == 0 {
		return keep, true, nil
	}
	// A walk that starts the cache leaves room for the commits of a few
	// turns: a new process compiles a long chain once and then adds its
	// turn's commits, each of which would otherwise copy the chain's
	// messages into a slice twice their size.
	spare := 0
	if base < 0 {
		spare = spareCommits
	}
	fresh := slices.AppendSeq(make([]dag.Hash, 0, hashes.Len()+spare), hashes.Backward())
	added := adds.Reversed()
	if hopped { // each record's total must be the messages through its commit
		sum := keep
		for _, a := range added {
			sum += int(a.add)
			if a.total >= 0 && int(a.total) != sum {
				return 0, false, nil
			}
		}
	}
	// Truncate the cache to the shared prefix and append the walked commits.
	for _, h := range c.chain[base+1:] {
		delete(c.pos, h)
	}
	c.chain, c.count, c.msgs = c.chain[:base+1], c.count[:base+1], c.msgs[:keep]
	if len(c.chain) == 0 {
		c.chain, c.msgs = fresh, oldestFirst(chunks, spare)
		c.count = make([]int32, 0, len(fresh)+spare)
		c.pos = make(map[dag.Hash]int32, len(fresh))
	} else {
		c.chain = append(c.chain, fresh...)
		c.msgs = append(c.msgs, oldestFirst(chunks, 0)...)
	}
	n = keep
	for i, h := range fresh {
		c.pos[h] = int32(base + 1 + i)
		n += int(added[i].add)
		c.count = append(c.count, int32(n))
	}
	return n, true, nil
}
