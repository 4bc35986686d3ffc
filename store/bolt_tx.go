package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// boltTx is one transaction of a Bolt store: the Tx every caller gets.
type boltTx struct {
	tx *bolt.Tx
	// texts keeps the stored form of blob values (see blobcodec.go).
	texts textForms
	// policy says when packs are merged (see bolt_tiers.go).
	policy packPolicy
	// main holds the top-level blobs and commits buckets. all is every
	// layer, main first and then the published packs (see bolt_pack.go),
	// loaded on first use; a lookup tries them in that order.
	main layer
	all  []*layer
	// pmeta is the session's packMetas (nil: none); pmetaRead is what
	// the transaction read that pmeta lacked, kept once it commits.
	pmeta     *packMetas
	pmetaRead []packMeta
	// lastHit is the index in all of the layer where lookup last found
	// a key.
	lastHit int
	// erased is set by every write that drops stored text (objects,
	// reflog entries, packs, compiled-context records): the transaction
	// then records a pending erasure, completed once it commits (see
	// erase.go).
	erased bool
	// mergesDropped is set once the transaction has dropped the merges in
	// progress (dropMerges).
	mergesDropped bool
	// packsWritten holds the unpublished packs this transaction created
	// or appended to: PublishPack refuses them.
	packsWritten map[uint64]bool
	// noRefsets is set once the transaction found no refsets bucket
	// (see bolt_refsets.go): the writes of refs look no further.
	noRefsets bool
	// words is what the transaction wrote that the word index must
	// follow when it ends (see bolt_words.go); wpolicy says when it
	// merges.
	words   *wordsTx
	wpolicy wordsPolicy
	// wordsMerged is set when the transaction merged the pending
	// documents: its journal record does not checkpoint the journal
	// too, unless it outgrew twice its bounds (see commitJournal).
	wordsMerged bool
	// crowded is set when other writes wait for the transaction (they
	// joined its group, or queued for the next), or waited for one a
	// moment ago (see writeGroup.crowded). Its upkeep (a checkpoint of
	// the journal, a merge of pending documents) is then left to a
	// transaction of the handle's background (upkeepDue), unless the
	// journal or the pending documents outgrew twice their bounds (see
	// commitJournal, finishWords, bolt_upkeep.go). upkeep is set in
	// that background transaction: it does the upkeep that is due, a
	// step of a move of the recent blocks with stepping, or, with
	// stepOnly, the step alone.
	crowded, upkeepDue, upkeep, stepping, stepOnly bool
	// wbuild counts the commits of a build of the whole index (nil:
	// nobody asked; see Bolt.startBuild).
	wbuild *indexBuild

	// The journal (see bolt_journal.go): jpolicy bounds it; jidx is the
	// session's index of it (nil: the transaction builds its own); jv is
	// this transaction's view of it, loaded on first use; pend holds what
	// this transaction adds to it. direct is set once the transaction
	// writes to the buckets instead (writeDirect), checkpointed when
	// committing its record checkpointed the journal.
	jpolicy              journalPolicy
	jidx                 *journalIndexes
	jv                   *journalView
	pend                 *pending
	direct, checkpointed bool
	// res counts what the transaction's reads touch of the file's map
	// (nil: nothing counts); see resident.go.
	res *residency
}

// layer is one place objects are kept: the top-level buckets or a pack.
// A pack's buckets are opened when a lookup first needs them: most
// lookups of a transaction find their key in the journal or in one pack,
// or are ruled out by the other packs' filters.
type layer struct {
	// pack is a pack's bucket (nil for the top-level buckets, which
	// mainLayer sets); opened says a pack's blobs and commits are set
	// (either may be nil in a damaged pack). A pack whose size and
	// filter the session kept has parent, the packs bucket, and id, its
	// key there, instead, until a lookup needs its bucket.
	pack           *bolt.Bucket
	parent         *bolt.Bucket
	id             []byte
	opened         bool
	blobs, commits *bolt.Bucket
	// filter is the pack's filter (see packfilter.go); nil: none.
	filter packFilter
	// blobCur and commitCur are reused for lookups in read-only
	// transactions: bbolt's Bucket.Get allocates a cursor (and its stack)
	// per call, which was most of Compile's garbage.
	blobCur, commitCur *bolt.Cursor
}

// get looks key up in the layer's commits (or blobs) bucket, through a
// reusable cursor when the transaction is read-only (a cursor must be
// repositioned after writes).
func (l *layer) get(writable, commits bool, key []byte) []byte {
	if !l.filter.mayHave(key) {
		return nil
	}
	b, cur := l.bucket(commits), &l.blobCur
	if b == nil {
		return nil
	}
	if commits {
		cur = &l.commitCur
	}
	if writable {
		return b.Get(key)
	}
	if *cur == nil {
		*cur = b.Cursor()
	}
	k, v := (*cur).Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// lookup finds key in the commits (or blobs) bucket of the first layer
// that has it.
//
// It tries the layer of the last hit first: the commits of a chain, and
// their texts, were mostly written together, so a walk finds one after
// another in the same pack.
func (t *boltTx) lookup(commits bool, key []byte) []byte {
	space := spaceOf(commits)
	if v := t.pend.get(space, key); v != nil {
		return v
	}
	if v := t.journal().get(space, key); v != nil {
		return v
	}
	w := t.tx.Writable()
	ls := t.layers()
	if t.lastHit >= len(ls) {
		t.lastHit = 0
	}
	if v := ls[t.lastHit].get(w, commits, key); v != nil {
		return v
	}
	for i, l := range ls {
		if i == t.lastHit {
			continue
		}
		if v := l.get(w, commits, key); v != nil {
			t.lastHit = i
			return v
		}
	}
	return nil
}

// bucket returns the layer's commits (or blobs) bucket, opening a pack's
// on first use; nil when a damaged pack lacks it.
func (l *layer) bucket(commits bool) *bolt.Bucket {
	if l.pack == nil && l.parent != nil {
		l.pack, l.parent = l.parent.Bucket(l.id), nil
		if l.pack == nil {
			l.opened = true // gone: nothing to find
		}
	}
	if l.pack != nil && !l.opened {
		l.opened = true
		l.blobs, l.commits = l.pack.Bucket(bucketBlobs), l.pack.Bucket(bucketCommits)
	}
	if commits {
		return l.commits
	}
	return l.blobs
}

var _ SortedPacker = (*boltTx)(nil)

// PackSorted fills the pages of the blob and commit buckets completely
// when they are empty: bbolt splits a full page at its FillPercent (half,
// by default), which for ascending keys leaves every page but the last
// half empty. Into a bucket that holds keys already, sorted keys land all
// over it, and full pages would split at every later insert: those keep
// bbolt's default.
func (t *boltTx) PackSorted() {
	for _, b := range []*bolt.Bucket{t.blobBucket(), t.commitBucket()} {
		if k, _ := b.Cursor().First(); k == nil {
			b.FillPercent = 1.0
		}
	}
}

func (t *boltTx) getBlob(h dag.Hash) []byte   { return t.lookup(false, h[:]) }
func (t *boltTx) getCommit(h dag.Hash) []byte { return t.lookup(true, h[:]) }

func (t *boltTx) bucket(name []byte) *bolt.Bucket { return t.tx.Bucket(name) }

func (t *boltTx) mainLayer() *layer {
	if t.main.blobs == nil {
		t.main.blobs = t.tx.Bucket(bucketBlobs)
		t.main.commits = t.tx.Bucket(bucketCommits)
	}
	return &t.main
}

func (t *boltTx) blobBucket() *bolt.Bucket   { return t.mainLayer().blobs }
func (t *boltTx) commitBucket() *bolt.Bucket { return t.mainLayer().commits }

// writable returns ErrReadOnly in a read-only transaction. bbolt would
// refuse the write too, but with its own error.
func (t *boltTx) writable() error {
	if !t.tx.Writable() {
		return ErrReadOnly
	}
	return nil
}

// clone returns a copy of b (nil for nil). Appending to a nil slice
// allocates without zeroing what the copy overwrites at once: a text or
// record of many pages is written once, not cleared and then written.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	return append([]byte(nil), b...)
}

func notFound(what string, h dag.Hash) error {
	return fmt.Errorf("%s %s: %w", what, h.Short(), ErrNotFound)
}

func (t *boltTx) Blob(h dag.Hash) ([]byte, error) {
	v := t.getBlob(h)
	if v == nil {
		return nil, notFound("blob", h)
	}
	text, err := t.text(v)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h.Short(), err)
	}
	if len(text) > 0 && len(v) > 0 && &text[len(text)-1] == &v[len(v)-1] {
		return clone(text), nil // a slice of bbolt's memory
	}
	return text, nil
}

func (t *boltTx) PutBlob(data []byte) (dag.Hash, error) {
	h := dag.Sum(data)
	return h, t.PutHashedBlob(h, data)
}

var _ HashedPutter = (*boltTx)(nil)

func (t *boltTx) PutHashedBlob(h dag.Hash, data []byte) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	if t.getBlob(h) != nil {
		return nil
	}
	// The stored form is new memory: bbolt keeps the value slice until
	// the transaction commits, and a caller may reuse its buffer.
	v, err := t.stored(data, !t.direct)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	if err := t.put(spaceBlobs, h[:], v); err != nil {
		return fmt.Errorf("put blob %s: %w", h.Short(), err)
	}
	return nil
}

func (t *boltTx) PutEncodedCommit(h dag.Hash, raw []byte) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put commit %s: %w", h.Short(), err)
	}
	t.noteCommitPut(h)
	if err := t.put(spaceCommits, h[:], raw); err != nil {
		return fmt.Errorf("put commit %s: %w", h.Short(), err)
	}
	return nil
}

func (t *boltTx) HasBlob(h dag.Hash) (bool, error) {
	return t.getBlob(h) != nil, nil
}

func (t *boltTx) DeleteBlob(h dag.Hash) error {
	if t.tx.Writable() {
		t.noteBlobDeleted(h)
	}
	return t.remove("blob", false, h, h[:])
}

// remove deletes key, which belongs to object h of kind what, from the
// commits (or blobs) bucket of every layer.
func (t *boltTx) remove(what string, commits bool, h dag.Hash, key []byte) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete %s %s: %w", what, h.Short(), err)
	}
	if err := t.writeDirect(); err != nil {
		return fmt.Errorf("delete %s %s: %w", what, h.Short(), err)
	}
	t.erased = true
	return t.deleteEverywhere(commits, key)
}

func (t *boltTx) ForEachBlob(fn func(dag.Hash, []byte) error) error {
	return t.forEach(false, func(k, v []byte) error {
		if len(k) != dag.HashSize {
			return fmt.Errorf("blob key of %d bytes: %w", len(k), dag.ErrBadEncoding)
		}
		text, err := t.text(v)
		if err != nil {
			// A damaged value is handed on as it is, as before texts
			// had forms: it does not hash to its key, which Fsck
			// reports.
			text = v
		}
		return fn(dag.Hash(k), text)
	})
}

func (t *boltTx) Commit(h dag.Hash) (*dag.Commit, error) {
	v := t.getCommit(h)
	if v == nil {
		return nil, notFound("commit", h)
	}
	c, err := dag.Decode(v)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return c, nil
}

func (t *boltTx) PutCommit(c *dag.Commit) (dag.Hash, error) {
	raw, err := dag.Encode(c)
	if err != nil {
		return dag.Hash{}, err
	}
	h := dag.Sum(raw)
	return h, t.PutEncodedCommit(h, raw)
}

func (t *boltTx) CommitHeader(h dag.Hash) (dag.Header, error) {
	v := t.getCommit(h)
	if v == nil {
		return dag.Header{}, notFound("commit", h)
	}
	hd, err := dag.DecodeHeader(v)
	if err != nil {
		return hd, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return hd, nil
}

func (t *boltTx) HasCommit(h dag.Hash) (bool, error) {
	return t.getCommit(h) != nil, nil
}

func (t *boltTx) DeleteCommit(h dag.Hash) error {
	if t.tx.Writable() {
		t.noteCommitDeleted(h)
	}
	return t.remove("commit", true, h, h[:])
}

func (t *boltTx) ForEachCommit(fn func(dag.Hash, []byte) error) error {
	return t.forEach(true, func(k, v []byte) error {
		if isCountersKey(k) {
			return nil
		}
		if len(k) != dag.HashSize {
			return fmt.Errorf("commit key of %d bytes: %w", len(k), dag.ErrBadEncoding)
		}
		return fn(dag.Hash(k), v)
	})
}

// CommitsWithPrefix seeks to the first key at or after the prefix (padded
// with a zero nibble when its length is odd) and reads keys while they match:
// keys sort like their hex forms, so the matches are contiguous.
func (t *boltTx) CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error) {
	prefix, err := normalizePrefix(prefix)
	if err != nil {
		return nil, err
	}
	padded := prefix
	if len(padded)%2 == 1 {
		padded += "0"
	}
	seek, err := hex.DecodeString(padded)
	if err != nil {
		return nil, fmt.Errorf("hash prefix %q: %w", prefix, err)
	}
	var out []dag.Hash
	c := t.cursor(true)
	for k, _ := c.Seek(seek); k != nil; k, _ = c.Next() {
		if !strings.HasPrefix(hex.EncodeToString(k), prefix) {
			break
		}
		if len(k) != dag.HashSize {
			continue
		}
		out = append(out, dag.Hash(k))
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

func (t *boltTx) Ref(name string) (refs.Ref, error) {
	v := t.bucket(bucketRefs).Get([]byte(name))
	if v == nil {
		v = t.refsetRef(name)
	}
	if v == nil {
		return refs.Ref{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	return refs.DecodeRef(name, v)
}

func (t *boltTx) SetRef(r refs.Ref) error {
	if r.Name == "" {
		return errors.New("set ref: empty name")
	}
	if err := fitsKey(r.Name); err != nil {
		return err
	}
	if err := t.writable(); err != nil {
		return fmt.Errorf("set ref %s: %w", r.Name, err)
	}
	if err := t.fold(r.Name); err != nil {
		return fmt.Errorf("set ref %s: %w", r.Name, err)
	}
	return t.bucket(bucketRefs).Put([]byte(r.Name), r.Encode())
}

// fitsKey returns an error wrapping refs.ErrInvalidName, in tract's
// words rather than bbolt's "key too large", for a ref name longer than
// a file can hold: a name no branch may have (see
// refs.MaxBranchNameBytes), but which another backend, or a tract with
// looser rules, may have stored, and a copy may bring.
func fitsKey(name string) error {
	if len(name) > bolt.MaxKeySize {
		return fmt.Errorf("ref %s: %w: the name is %d bytes, more than a repository file can hold (%d)",
			refs.ShortName(name), refs.ErrInvalidName, len(name), bolt.MaxKeySize)
	}
	return nil
}

func (t *boltTx) DeleteRef(name string) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if err := t.fold(name); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	return t.bucket(bucketRefs).Delete([]byte(name))
}

// Refs lists the refs bucket's refs and the refsets', in name order.
func (t *boltTx) Refs() ([]refs.Ref, error) {
	var out []refs.Ref
	add := func(k, v []byte) error {
		r, err := refs.DecodeRef(string(k), v)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}
	err := t.bucket(bucketRefs).ForEach(add)
	if err == nil && t.tx.Bucket(bucketRefsets) != nil {
		if err = t.refsetRefs(add); err == nil {
			slices.SortStableFunc(out, func(a, b refs.Ref) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return out, err
}

func (t *boltTx) AppendReflog(name string, e refs.Entry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if name == "" {
		return errors.New("reflog: empty ref name")
	}
	if err := fitsKey(name); err != nil {
		return err
	}
	if err := t.fold(name); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if err := t.put(spaceReflogs, []byte(name), e.Encode()); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	return nil
}

// Reflog reads the entries of the reflogs bucket, then the refsets', then
// the journal's, then the transaction's own (see EachReflogEntry).
func (t *boltTx) Reflog(name string) ([]refs.Entry, error) {
	out := []refs.Entry{} // empty, not nil, as it always was
	err := t.EachReflogEntry(name, func(e refs.Entry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var _ ReflogStreamer = (*boltTx)(nil)

// EachReflogEntry decodes the entries of the reflogs bucket one at a
// time, then the refsets', then the journal's, then the transaction's
// own (those are few: the next checkpoint moves them to the bucket).
func (t *boltTx) EachReflogEntry(name string, fn func(refs.Entry) error) error {
	each := func(v []byte) error {
		e, err := refs.DecodeEntry(v)
		if err != nil {
			return fmt.Errorf("reflog %s: %w", name, err)
		}
		return fn(e)
	}
	if b := t.bucket(bucketReflogs).Bucket([]byte(name)); b != nil {
		if err := b.ForEach(func(_, v []byte) error { return each(v) }); err != nil {
			return err
		}
	}
	_, pending := t.pend.reflog(name)
	for _, v := range slices.Concat(t.refsetReflog(name), t.journal().reflog(name), pending) {
		if err := each(v); err != nil {
			return err
		}
	}
	return nil
}

// decodeReflog decodes the entries raws of reflog name.
func decodeReflog(name string, raws [][]byte) ([]refs.Entry, error) {
	out := make([]refs.Entry, 0, len(raws))
	for _, v := range raws {
		e, err := refs.DecodeEntry(v)
		if err != nil {
			return nil, fmt.Errorf("reflog %s: %w", name, err)
		}
		out = append(out, e)
	}
	return out, nil
}

var _ ReflogTailer = (*boltTx)(nil)

// ReflogTail reads the transaction's own entries, then the journal's,
// then the refsets', then the reflogs bucket's from its end, until it has
// n.
func (t *boltTx) ReflogTail(name string, n int) ([]refs.Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	_, raws := t.pend.reflog(name)
	raws = append(t.journal().reflog(name), raws...)
	raws = append(t.refsetReflog(name), raws...)
	if len(raws) > n {
		raws = raws[len(raws)-n:]
	}
	if b := t.bucket(bucketReflogs).Bucket([]byte(name)); b != nil && len(raws) < n {
		var older [][]byte
		c := b.Cursor()
		for k, v := c.Last(); k != nil && len(older)+len(raws) < n; k, v = c.Prev() {
			older = append(older, v)
		}
		slices.Reverse(older)
		raws = append(older, raws...)
	}
	return decodeReflog(name, raws)
}

func (t *boltTx) ReflogNames() ([]string, error) {
	var out []string
	err := t.bucket(bucketReflogs).ForEach(func(k, v []byte) error {
		if v == nil {
			out = append(out, string(k))
		}
		return nil
	})
	out = append(out, t.journal().reflogNames()...)
	out = append(out, t.refsetReflogNames()...)
	pending, _ := t.pend.reflog("")
	out = append(out, pending...)
	sort.Strings(out)
	return slices.Compact(out), err
}

func (t *boltTx) ReplaceReflog(name string, es []refs.Entry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if err := fitsKey(name); err != nil {
		return err
	}
	if err := t.writeDirect(); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	if err := t.fold(name); err != nil {
		return fmt.Errorf("reflog %s: %w", name, err)
	}
	rb := t.bucket(bucketReflogs)
	if rb.Bucket([]byte(name)) != nil {
		t.erased = true
		if err := rb.DeleteBucket([]byte(name)); err != nil {
			return fmt.Errorf("reflog %s: %w", name, err)
		}
	}
	for _, e := range es {
		if err := t.AppendReflog(name, e); err != nil {
			return err
		}
	}
	return nil
}

// countersKey is where the counters of commit h are kept: in the commits
// bucket, under h followed by countersSuffix, so that they sort right after
// the commit and share its page: writing them with a new commit dirties no
// page the commit did not.
func countersKey(h dag.Hash) []byte { return append(h[:], countersSuffix) }

const countersSuffix = 'c'

func isCountersKey(k []byte) bool {
	return len(k) == dag.HashSize+1 && k[dag.HashSize] == countersSuffix
}

func (t *boltTx) Counters(h dag.Hash) (Counters, bool, error) {
	v := t.lookup(true, countersKey(h))
	if v == nil {
		return Counters{}, false, nil
	}
	c, err := DecodeCounters(v)
	if err != nil {
		return Counters{}, false, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	return c, true, nil
}

func (t *boltTx) PutCounters(h dag.Hash, c Counters) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put counters %s: %w", h.Short(), err)
	}
	return t.put(spaceCommits, countersKey(h), c.Encode())
}

func (t *boltTx) DeleteCounters(h dag.Hash) error {
	return t.remove("counters", true, h, countersKey(h))
}

func (t *boltTx) ForEachCounters(fn func(dag.Hash, Counters) error) error {
	return t.forEach(true, func(k, v []byte) error {
		if !isCountersKey(k) {
			return nil
		}
		c, err := DecodeCounters(v)
		if err != nil {
			return fmt.Errorf("commit %s: %w", dag.Hash(k[:dag.HashSize]).Short(), err)
		}
		return fn(dag.Hash(k[:dag.HashSize]), c)
	})
}
