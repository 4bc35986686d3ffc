package store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// MemoryPath is what (*Memory).Path returns.
const MemoryPath = ":memory:"

// Memory is an in-memory Store for tests and throwaway repositories. It has
// the transaction semantics of the bbolt store: an Update's writes are
// buffered and become visible, all at once, only when its closure returns
// nil; an error discards them. Views run concurrently with each other and
// with the closure of an Update; Updates run one at a time. Every byte slice
// goes in and comes out as a copy.
//
// A new Memory holds what a new bbolt repository holds: HEAD attached to the
// unborn branch main.
type Memory struct {
	// writer serializes Updates, like bbolt's single writer.
	writer sync.Mutex

	// mu guards the committed state below and closed. Views hold it for
	// reading while their closure runs; an Update takes it for writing only
	// to apply its buffer after its closure returned nil, so a View never
	// sees half of an Update.
	mu      sync.RWMutex
	closed  bool
	blobs   map[dag.Hash][]byte
	commits map[dag.Hash][]byte // dag.Encode of each commit
	refs    map[string]refs.Ref
	reflogs map[string][]refs.Entry
	derived map[dag.Hash]Counters
	// staged holds unpublished packs; packSeq is the last pack id given.
	staged  map[uint64]*memPack
	packSeq uint64
	// words is the word index of the commits (see memory_words.go).
	words memWords
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory repository with HEAD attached to the
// unborn branch main.
func NewMemory() *Memory {
	head := refs.Ref{Name: refs.HEAD, Target: refs.BranchRef(refs.DefaultBranch)}
	return &Memory{
		blobs:   make(map[dag.Hash][]byte),
		commits: make(map[dag.Hash][]byte),
		refs:    map[string]refs.Ref{head.Name: head},
		reflogs: make(map[string][]refs.Entry),
		derived: make(map[dag.Hash]Counters),
		staged:  make(map[uint64]*memPack),
		words:   newMemWords(),
	}
}

var errMemoryClosed = errors.New("memory store is closed")

// Path returns MemoryPath.
func (m *Memory) Path() string { return MemoryPath }

// Close drops nothing (the data stays reachable through m) but makes later
// transactions fail.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// View runs fn in a read-only transaction over the committed state.
func (m *Memory) View(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return errMemoryClosed
	}
	tx := &memTx{m: m}
	defer tx.close()
	return fn(tx)
}

// Update runs fn in a read-write transaction. Its writes go to a buffer that
// is applied when fn returns nil and dropped when it returns an error or
// panics.
func (m *Memory) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.writer.Lock()
	defer m.writer.Unlock()
	m.mu.RLock()
	closed := m.closed
	m.mu.RUnlock()
	if closed {
		return errMemoryClosed
	}
	// Only Updates change the committed state and this one holds writer,
	// so fn may read it without mu while Views read it too.
	tx := &memTx{
		m:        m,
		writable: true,
		blobs:    newOverlay[dag.Hash, []byte](),
		commits:  newOverlay[dag.Hash, []byte](),
		refs:     newOverlay[string, refs.Ref](),
		reflogs:  newOverlay[string, []refs.Entry](),
		derived:  newOverlay[dag.Hash, Counters](),
		staged:   newOverlay[uint64, *memPack](),
		packSeq:  m.packSeq,
	}
	defer tx.close()
	if err := fn(tx); err != nil {
		return err
	}
	added, deleted := tx.wordChanges()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.words.apply(added, deleted)
	tx.blobs.apply(m.blobs)
	tx.commits.apply(m.commits)
	tx.refs.apply(m.refs)
	tx.reflogs.apply(m.reflogs)
	tx.derived.apply(m.derived)
	tx.staged.apply(m.staged)
	m.packSeq = tx.packSeq
	return nil
}

// overlay buffers writes to a map: set holds new values, del deleted keys.
// A nil overlay reads through to the base map.
type overlay[K comparable, V any] struct {
	set map[K]V
	del map[K]bool
}

func newOverlay[K comparable, V any]() *overlay[K, V] {
	return &overlay[K, V]{set: make(map[K]V), del: make(map[K]bool)}
}

func (o *overlay[K, V]) get(base map[K]V, k K) (v V, ok bool) {
	if o != nil {
		if v, ok := o.set[k]; ok {
			return v, true
		}
		if o.del[k] {
			return v, false
		}
	}
	v, ok = base[k]
	return v, ok
}

func (o *overlay[K, V]) put(k K, v V) {
	o.set[k] = v
	delete(o.del, k)
}

func (o *overlay[K, V]) remove(k K) {
	delete(o.set, k)
	o.del[k] = true
}

// keys returns the keys visible through o, sorted by compare.
func (o *overlay[K, V]) keys(base map[K]V, compare func(a, b K) int) []K {
	out := make([]K, 0, len(base))
	for k := range base {
		if o == nil || !o.del[k] {
			out = append(out, k)
		}
	}
	if o != nil {
		for k := range o.set {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compare)
	return slices.Compact(out)
}

func (o *overlay[K, V]) apply(base map[K]V) {
	for k := range o.del {
		delete(base, k)
	}
	maps.Copy(base, o.set)
}

// memTx is a transaction of a Memory. In a View the overlays are nil and
// every read goes to the committed maps.
type memTx struct {
	m        *Memory
	writable bool
	done     bool

	blobs   *overlay[dag.Hash, []byte]
	commits *overlay[dag.Hash, []byte]
	refs    *overlay[string, refs.Ref]
	reflogs *overlay[string, []refs.Entry]
	derived *overlay[dag.Hash, Counters]
	staged  *overlay[uint64, *memPack]
	packSeq uint64
}

var errTxClosed = errors.New("transaction used after its closure returned")

func (t *memTx) close() { t.done = true }

// check returns the error of any use after the closure returned, and of a
// write in a read-only transaction.
func (t *memTx) check(write bool) error {
	switch {
	case t.done:
		return errTxClosed
	case write && !t.writable:
		return ErrReadOnly
	}
	return nil
}

func (t *memTx) Blob(h dag.Hash) ([]byte, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	v, ok := t.blobs.get(t.m.blobs, h)
	if !ok {
		return nil, notFound("blob", h)
	}
	return bytes.Clone(v), nil
}

func (t *memTx) PutBlob(data []byte) (dag.Hash, error) {
	h := dag.Sum(data)
	if err := t.check(true); err != nil {
		return h, fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	if _, ok := t.blobs.get(t.m.blobs, h); !ok {
		t.blobs.put(h, append(make([]byte, 0, len(data)), data...))
	}
	return h, nil
}

func (t *memTx) HasBlob(h dag.Hash) (bool, error) {
	if err := t.check(false); err != nil {
		return false, err
	}
	_, ok := t.blobs.get(t.m.blobs, h)
	return ok, nil
}

func (t *memTx) DeleteBlob(h dag.Hash) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("delete blob %s: %w", h.Short(), err)
	}
	t.blobs.remove(h)
	return nil
}

func (t *memTx) ForEachBlob(fn func(dag.Hash, []byte) error) error {
	if err := t.check(false); err != nil {
		return err
	}
	for _, h := range t.blobs.keys(t.m.blobs, compareHash) {
		v, _ := t.blobs.get(t.m.blobs, h)
		if err := fn(h, bytes.Clone(v)); err != nil {
			return err
		}
	}
	return nil
}

func (t *memTx) Commit(h dag.Hash) (*dag.Commit, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	raw, ok := t.commits.get(t.m.commits, h)
	if !ok {
		return nil, notFound("commit", h)
	}
	c, err := dag.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return c, nil
}

func (t *memTx) CommitHeader(h dag.Hash) (dag.Header, error) {
	if err := t.check(false); err != nil {
		return dag.Header{}, err
	}
	raw, ok := t.commits.get(t.m.commits, h)
	if !ok {
		return dag.Header{}, notFound("commit", h)
	}
	hd, err := dag.DecodeHeader(raw)
	if err != nil {
		return hd, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return hd, nil
}

func (t *memTx) PutCommit(c *dag.Commit) (dag.Hash, error) {
	raw, err := dag.Encode(c)
	if err != nil {
		return dag.Hash{}, err
	}
	h := dag.Sum(raw)
	if err := t.check(true); err != nil {
		return h, fmt.Errorf("put commit %s: %w", h.Short(), err)
	}
	t.commits.put(h, raw)
	return h, nil
}

func (t *memTx) HasCommit(h dag.Hash) (bool, error) {
	if err := t.check(false); err != nil {
		return false, err
	}
	_, ok := t.commits.get(t.m.commits, h)
	return ok, nil
}

func (t *memTx) DeleteCommit(h dag.Hash) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("delete commit %s: %w", h.Short(), err)
	}
	t.commits.remove(h)
	return nil
}

func (t *memTx) ForEachCommit(fn func(dag.Hash, []byte) error) error {
	if err := t.check(false); err != nil {
		return err
	}
	for _, h := range t.commits.keys(t.m.commits, compareHash) {
		raw, _ := t.commits.get(t.m.commits, h)
		if err := fn(h, bytes.Clone(raw)); err != nil {
			return err
		}
	}
	return nil
}

func (t *memTx) Counters(h dag.Hash) (Counters, bool, error) {
	if err := t.check(false); err != nil {
		return Counters{}, false, err
	}
	c, ok := t.derived.get(t.m.derived, h)
	return c, ok, nil
}

func (t *memTx) PutCounters(h dag.Hash, c Counters) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("put counters %s: %w", h.Short(), err)
	}
	t.derived.put(h, c)
	return nil
}

func (t *memTx) DeleteCounters(h dag.Hash) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("delete counters %s: %w", h.Short(), err)
	}
	t.derived.remove(h)
	return nil
}

func (t *memTx) ForEachCounters(fn func(dag.Hash, Counters) error) error {
	if err := t.check(false); err != nil {
		return err
	}
	for _, h := range t.derived.keys(t.m.derived, compareHash) {
		c, _ := t.derived.get(t.m.derived, h)
		if err := fn(h, c); err != nil {
			return err
		}
	}
	return nil
}

func (t *memTx) CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	prefix, err := normalizePrefix(prefix)
	if err != nil {
		return nil, err
	}
	var out []dag.Hash
	for _, h := range t.commits.keys(t.m.commits, compareHash) {
		if !strings.HasPrefix(h.String(), prefix) {
			continue
		}
		out = append(out, h)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

func (t *memTx) Ref(name string) (refs.Ref, error) {
	if err := t.check(false); err != nil {
		return refs.Ref{}, err
	}
	r, ok := t.refs.get(t.m.refs, name)
	if !ok {
		return refs.Ref{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	return r, nil
}

func (t *memTx) SetRef(r refs.Ref) error {
	if r.Name == "" {
		return errors.New("set ref: empty name")
	}
	if err := t.check(true); err != nil {
		return fmt.Errorf("set ref %s: %w", r.Name, err)
	}
	t.refs.put(r.Name, r)
	return nil
}

func (t *memTx) DeleteRef(name string) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	t.refs.remove(name)
	return nil
}

func (t *memTx) Refs() ([]refs.Ref, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	names := t.refs.keys(t.m.refs, strings.Compare)
	out := make([]refs.Ref, 0, len(names))
	for _, n := range names {
		r, _ := t.refs.get(t.m.refs, n)
		out = append(out, r)
	}
	return out, nil
}

func (t *memTx) AppendReflog(name string, e refs.Entry) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if owned, ok := t.reflogs.set[name]; ok {
		// The buffer's own slice: append in place.
		t.reflogs.set[name] = append(owned, e)
		return nil
	}
	cur, _ := t.reflogs.get(t.m.reflogs, name)
	t.reflogs.put(name, append(slices.Clone(cur), e))
	return nil
}

func (t *memTx) Reflog(name string) ([]refs.Entry, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	es, _ := t.reflogs.get(t.m.reflogs, name)
	return slices.Clone(es), nil
}

func (t *memTx) ReflogNames() ([]string, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	return t.reflogs.keys(t.m.reflogs, strings.Compare), nil
}

func (t *memTx) ReplaceReflog(name string, es []refs.Entry) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if len(es) == 0 {
		t.reflogs.remove(name)
		return nil
	}
	t.reflogs.put(name, slices.Clone(es))
	return nil
}

func compareHash(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) }

// normalizePrefix lowercases an abbreviated hash and checks that it is hex
// and not longer than a hash.
func normalizePrefix(prefix string) (string, error) {
	p := strings.ToLower(prefix)
	if len(p) > 2*dag.HashSize || strings.Trim(p, "0123456789abcdef") != "" {
		return "", fmt.Errorf("hash prefix %q: not up to %d hex characters", prefix, 2*dag.HashSize)
	}
	return p, nil
}

// memPack is an unpublished pack of a Memory. A transaction that changes
// one puts a new memPack, so a rolled-back one leaves the old intact.
type memPack struct {
	info    PackInfo
	entries []PackEntry
}

var _ PackTx = (*memTx)(nil)

func (t *memTx) CreatePack(now time.Time) (uint64, error) {
	if err := t.check(true); err != nil {
		return 0, fmt.Errorf("create pack: %w", err)
	}
	t.packSeq++
	t.staged.put(t.packSeq, &memPack{info: PackInfo{ID: t.packSeq, Updated: now}})
	return t.packSeq, nil
}

func (t *memTx) stagedPack(id uint64) (*memPack, error) {
	p, ok := t.staged.get(t.m.staged, id)
	if !ok {
		return nil, fmt.Errorf("pack %d: %w", id, ErrNotFound)
	}
	return p, nil
}

func (t *memTx) AppendPack(id uint64, now time.Time, entries []PackEntry) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("append to pack %d: %w", id, err)
	}
	p, err := t.stagedPack(id)
	if err != nil {
		return err
	}
	next := &memPack{info: p.info, entries: slices.Clip(p.entries)}
	for _, e := range entries {
		if n := len(next.entries); n > 0 && next.entries[n-1].Compare(e) >= 0 {
			return fmt.Errorf("append to pack %d: entry %s is out of order", id, e.Hash.Short())
		}
		e.Value = bytes.Clone(e.Value)
		next.entries = append(next.entries, e)
	}
	next.info.Updated = now
	next.info.Entries = int64(len(next.entries))
	t.staged.put(id, next)
	return nil
}

func (t *memTx) PublishPack(id uint64) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	p, err := t.stagedPack(id)
	if err != nil {
		return err
	}
	for _, e := range p.entries {
		switch e.Kind {
		case PackBlob:
			t.blobs.put(e.Hash, e.Value)
		case PackCommit:
			t.commits.put(e.Hash, e.Value)
		case PackCounters:
			c, err := DecodeCounters(e.Value)
			if err != nil {
				return fmt.Errorf("publish pack %d: %w", id, err)
			}
			t.derived.put(e.Hash, c)
		}
	}
	t.staged.remove(id)
	return nil
}

func (t *memTx) DropPack(id uint64) error {
	if err := t.check(true); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	t.staged.remove(id)
	return nil
}

func (t *memTx) UnpublishedPacks() ([]PackInfo, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	var out []PackInfo
	for _, id := range t.staged.keys(t.m.staged, cmp.Compare[uint64]) {
		p, _ := t.staged.get(t.m.staged, id)
		out = append(out, p.info)
	}
	return out, nil
}

// PublishedPacks is always 0: a Memory merges a pack into its maps when it
// is published.
func (t *memTx) PublishedPacks() (int, error) { return 0, t.check(false) }
