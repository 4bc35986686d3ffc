package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// Packs in the bbolt file (schema 3): two top-level buckets, created by the
// first pack, each holding one nested bucket per pack, named by its 8-byte
// big-endian id. A pack's bucket holds "blobs" and "commits" buckets laid
// out as the top-level ones, and "info" (encodePackInfo).
//
//	staging  packs being written: read by nothing but their writer
//	packs    published packs: searched after the top-level buckets
//
// Publishing moves a pack's bucket from staging to packs (bbolt moves the
// bucket's root, not its pages), so it costs the same whatever the pack's
// size.
var (
	bucketStaging = []byte("staging")
	bucketPacks   = []byte("packs")
	keyPackInfo   = []byte("info")
)

// schemaPacks is the schema of a file with a published pack.
const schemaPacks = 3

var _ PackTx = (*boltTx)(nil)

func packKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// layers returns every layer: the top-level buckets, then the published
// packs, largest first (a lookup finds most objects in the largest; a
// copy of an object in another is equal to it).
//
// What it reads of a pack besides its objects (its size, its filter) the
// session keeps (packMetas): a transaction then opens a pack's bucket
// only when a lookup's key passes the pack's filter.
func (t *boltTx) layers() []*layer {
	if t.all != nil {
		return t.all
	}
	t.all = []*layer{t.mainLayer()}
	pb := t.tx.Bucket(bucketPacks)
	if pb == nil {
		return t.all
	}
	type sized struct {
		l *layer
		n int64
	}
	var packs []sized
	c := pb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue
		}
		if m, ok := t.pmeta.get(k); ok {
			packs = append(packs, sized{&layer{parent: pb, id: m.id, filter: m.filter}, m.entries})
			continue
		}
		b := pb.Bucket(k)
		info, _ := decodePackInfo(0, b.Get(keyPackInfo)) // a bad info sorts last; fsck reports it
		l := &layer{pack: b}
		if v := b.Get(keyPackFilter); v != nil {
			l.filter, _ = decodePackFilter(v) // a bad filter is none; fsck reports it
		}
		t.notePackMeta(k, info.Entries, l.filter)
		packs = append(packs, sized{l, info.Entries})
	}
	slices.SortStableFunc(packs, func(a, b sized) int { return cmp.Compare(b.n, a.n) })
	for _, p := range packs {
		t.all = append(t.all, p.l)
	}
	return t.all
}

// packMetas keeps, for a session, what layers reads of each published
// pack besides its objects: its entry count and its filter (a copy). A
// published pack's are written by the transaction that creates or
// publishes it and never change after (a merge writes new packs; a
// delete leaves the filter a superset, as a filter may be), no id is
// used twice in a file, and the session holds the file's lock, so no
// compaction replaces the file under it. What a write transaction read
// is kept only once it has committed: a pack that a transaction rolled
// back wrote may come back under the same id with other contents.
type packMetas struct {
	mu sync.Mutex
	m  map[string]packMeta // by the pack's key in the packs bucket
}

// packMeta is what packMetas keeps of a pack.
type packMeta struct {
	id      []byte // the pack's key
	entries int64
	filter  packFilter
}

// get returns what p keeps of the pack of key. p may be nil.
func (p *packMetas) get(key []byte) (packMeta, bool) {
	if p == nil {
		return packMeta{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.m[string(key)]
	return m, ok
}

// add keeps ms.
func (p *packMetas) add(ms []packMeta) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]packMeta, len(ms))
	}
	for _, m := range ms {
		p.m[string(m.id)] = m
	}
}

// reset forgets everything p keeps.
func (p *packMetas) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m = nil
}

// notePackMeta keeps what layers read of the pack of key, in the
// session's packMetas: at once in a read-only transaction (it reads
// committed packs), once it commits in a write transaction.
func (t *boltTx) notePackMeta(key []byte, entries int64, f packFilter) {
	if t.pmeta == nil {
		return
	}
	m := packMeta{id: clone(key), entries: entries, filter: packFilter(clone(f))}
	if !t.tx.Writable() {
		t.pmeta.add([]packMeta{m})
		return
	}
	if t.pmetaRead == nil {
		t.tx.OnCommit(func() { t.pmeta.add(t.pmetaRead) })
	}
	t.pmetaRead = append(t.pmetaRead, m)
}

// deleteEverywhere deletes key from the commits (or blobs) bucket of every
// layer.
func (t *boltTx) deleteEverywhere(commits bool, key []byte) error {
	if len(t.layers()) > 1 {
		if err := t.dropMerges(); err != nil {
			return err
		}
	}
	// Not by the filters: a damaged one must not keep an erased text.
	for _, l := range t.layers() {
		if b := l.bucket(commits); b != nil {
			if err := b.Delete(key); err != nil {
				return err
			}
		}
	}
	return nil
}

// cursor returns a cursor over the commits (or blobs) buckets of every
// layer at once.
// layer at once, the journal's entries and the transaction's own first.
func (t *boltTx) cursor(commits bool) *mergedCursor {
	var cs []kvCursor
	if es := t.sortedEntries(spaceOf(commits)); len(es) > 0 {
		cs = append(cs, &sliceCursor{es: es})
	}
	for _, l := range t.layers() {
		if b := l.bucket(commits); b != nil {
			cs = append(cs, b.Cursor())
		}
	}
	return newMergedCursor(cs)
}

// kvCursor is what mergedCursor needs of a cursor: *bolt.Cursor's methods.
type kvCursor interface {
	First() (k, v []byte)
	Seek(key []byte) (k, v []byte)
	Next() (k, v []byte)
}

// newMergedCursor returns a cursor over cs at once.
func newMergedCursor(cs []kvCursor) *mergedCursor {
	return &mergedCursor{cs: cs, ks: make([][]byte, len(cs)), vs: make([][]byte, len(cs))}
}

// forEach calls fn for every key of the commits (or blobs) buckets of all
// layers, in key order, once per key.
func (t *boltTx) forEach(commits bool, fn func(k, v []byte) error) error {
	if ls := t.layers(); len(ls) == 1 && t.pend == nil && t.journal().idx == nil {
		return ls[0].bucket(commits).ForEach(func(k, v []byte) error {
			t.res.add(t.tx, len(k)+len(v))
			return fn(k, v)
		})
	}
	c := t.cursor(commits)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t.res.add(t.tx, len(k)+len(v))
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// mergedCursor walks several buckets as one, in key order. A key in more
// than one of them comes once, with the value of the first.
type mergedCursor struct {
	cs     []kvCursor
	ks, vs [][]byte
	last   []byte
}

// First moves to the first key.
func (m *mergedCursor) First() (k, v []byte) {
	for i, c := range m.cs {
		m.ks[i], m.vs[i] = c.First()
	}
	return m.pick()
}

// Seek moves to the first key at or after key.
func (m *mergedCursor) Seek(key []byte) (k, v []byte) {
	for i, c := range m.cs {
		m.ks[i], m.vs[i] = c.Seek(key)
	}
	return m.pick()
}

// Next moves past the current key.
func (m *mergedCursor) Next() (k, v []byte) {
	for i, c := range m.cs {
		if m.ks[i] != nil && bytes.Equal(m.ks[i], m.last) {
			m.ks[i], m.vs[i] = c.Next()
		}
	}
	return m.pick()
}

func (m *mergedCursor) pick() (k, v []byte) {
	at := -1
	for i, key := range m.ks {
		if key != nil && (at < 0 || bytes.Compare(key, m.ks[at]) < 0) {
			at = i
		}
	}
	if at < 0 {
		m.last = nil
		return nil, nil
	}
	m.last = m.ks[at]
	return m.ks[at], m.vs[at]
}

func (t *boltTx) CreatePack(now time.Time) (uint64, error) {
	if err := t.writable(); err != nil {
		return 0, fmt.Errorf("create pack: %w", err)
	}
	_, id, err := t.newPack(bucketStaging, now)
	t.wrote(id)
	return id, err
}

// wrote records that this transaction wrote to unpublished pack id.
func (t *boltTx) wrote(id uint64) {
	if t.packsWritten == nil {
		t.packsWritten = map[uint64]bool{}
	}
	t.packsWritten[id] = true
}

// newPack creates an empty pack in the top-level bucket named in (staging
// or packs) and returns its bucket and id. Ids come from the staging
// bucket's sequence, whichever bucket the pack starts in, so no two packs
// ever share one.
func (t *boltTx) newPack(in []byte, now time.Time) (*bolt.Bucket, uint64, error) {
	st, err := t.tx.CreateBucketIfNotExists(bucketStaging)
	if err != nil {
		return nil, 0, fmt.Errorf("create pack: %w", err)
	}
	id, err := st.NextSequence()
	if err != nil {
		return nil, 0, fmt.Errorf("create pack: %w", err)
	}
	parent, err := t.tx.CreateBucketIfNotExists(in)
	if err != nil {
		return nil, 0, fmt.Errorf("create pack %d: %w", id, err)
	}
	pb, err := parent.CreateBucket(packKey(id))
	if err != nil {
		return nil, 0, fmt.Errorf("create pack %d: %w", id, err)
	}
	for _, name := range [][]byte{bucketBlobs, bucketCommits} {
		if _, err := pb.CreateBucket(name); err != nil {
			return nil, 0, fmt.Errorf("create pack %d: %w", id, err)
		}
	}
	if err := pb.Put(keyPackInfo, encodePackInfo(PackInfo{ID: id, Updated: now})); err != nil {
		return nil, 0, fmt.Errorf("create pack %d: %w", id, err)
	}
	return pb, id, nil
}

// stagingPack returns the bucket of unpublished pack id.
func (t *boltTx) stagingPack(id uint64) (*bolt.Bucket, error) {
	if st := t.tx.Bucket(bucketStaging); st != nil {
		if pb := st.Bucket(packKey(id)); pb != nil {
			return pb, nil
		}
	}
	return nil, fmt.Errorf("pack %d: %w", id, ErrNotFound)
}

// appendingTo returns the bucket of unpublished pack id for a write that
// appends to it, noting the write (see wrote).
func (t *boltTx) appendingTo(id uint64) (*bolt.Bucket, error) {
	if err := t.writable(); err != nil {
		return nil, fmt.Errorf("append to pack %d: %w", id, err)
	}
	pb, err := t.stagingPack(id)
	if err != nil {
		return nil, err
	}
	t.wrote(id)
	return pb, nil
}

func (t *boltTx) AppendPack(id uint64, now time.Time, entries []PackEntry) error {
	pb, err := t.appendingTo(id)
	if err != nil {
		return err
	}
	if entries, err = t.storedEntries(entries); err != nil {
		return fmt.Errorf("append to pack %d: %w", id, err)
	}
	// The pages of the file's map this read (the end of the pack's
	// buckets, what storedEntries looked up) go back as it ends: the
	// next transaction reads the pages this one writes, and an import's
	// resident memory would gather what each read (about 1 MiB at
	// 100,000 messages, more in a larger file).
	defer dropMapped(t.tx)
	return appendToPack(pb, id, now, entries)
}

// boltKey returns where e is kept in a layer: the space of its bucket
// (spaceBlobs or spaceCommits) and its key there; ok is false for an
// unknown kind.
func (e PackEntry) boltKey() (space int, key []byte, ok bool) {
	switch e.Kind {
	case PackBlob:
		return spaceBlobs, e.Hash[:], true
	case PackCommit:
		return spaceCommits, e.Hash[:], true
	case PackCounters:
		return spaceCommits, countersKey(e.Hash), true
	}
	return 0, nil, false
}

// packEntryAt is the pack entry of value, kept under key in the bucket of
// space (spaceBlobs or spaceCommits): boltKey's inverse.
func packEntryAt(space int, key, value []byte) PackEntry {
	switch {
	case space == spaceBlobs:
		return PackEntry{Kind: PackBlob, Hash: dag.Hash(key), Value: value}
	case isCountersKey(key):
		return PackEntry{Kind: PackCounters, Hash: dag.Hash(key[:dag.HashSize]), Value: value}
	}
	return PackEntry{Kind: PackCommit, Hash: dag.Hash(key), Value: value}
}

// appendToPack appends entries to pack id, whose bucket is pb.
func appendToPack(pb *bolt.Bucket, id uint64, now time.Time, entries []PackEntry) error {
	info, err := decodePackInfo(id, pb.Get(keyPackInfo))
	if err != nil {
		return err
	}
	buckets := [2]*bolt.Bucket{pb.Bucket(bucketBlobs), pb.Bucket(bucketCommits)}
	var last [2][]byte
	for i, b := range buckets {
		// Appended keys fill their pages: nothing is inserted before them.
		b.FillPercent = 1.0
		last[i], _ = b.Cursor().Last()
		last[i] = clone(last[i])
	}
	for _, e := range entries {
		space, key, ok := e.boltKey()
		if !ok {
			return fmt.Errorf("append to pack %d: entry %s of unknown kind %d", id, e.Hash.Short(), e.Kind)
		}
		// Blobs sort before commits: no blob may follow a commit.
		if (last[space] != nil && bytes.Compare(key, last[space]) <= 0) || (space == 0 && last[1] != nil) {
			return fmt.Errorf("append to pack %d: entry %s is out of order", id, e.Hash.Short())
		}
		if err := buckets[space].Put(key, e.Value); err != nil { // kept until the transaction ends, as AppendPack says
			return fmt.Errorf("append to pack %d: %w", id, err)
		}
		last[space] = key
	}
	info.Updated = now
	info.Entries += int64(len(entries))
	return pb.Put(keyPackInfo, encodePackInfo(info))
}

func (t *boltTx) PublishPack(id uint64) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	pb, err := t.stagingPack(id)
	if err != nil {
		return err
	}
	if t.packsWritten[id] {
		// bbolt moves a bucket as its last commit left it: what this
		// transaction wrote to it would be lost.
		return fmt.Errorf("publish pack %d: %w", id, ErrPackWrittenInTx)
	}
	// The word index built beside the pack (see packWords), or the
	// commits for the transaction to index.
	staged := pb.Bucket(bucketWords) != nil
	use := packWordsDrop
	switch {
	case !staged || !t.indexing():
	case t.wordsEmpty():
		use = packWordsMove
	default:
		fresh, err := t.packCommitsNew(id)
		if err != nil {
			return fmt.Errorf("publish pack %d: %w", id, err)
		}
		if fresh {
			use = packWordsMerge
		}
	}
	if use == packWordsDrop {
		if err := t.notePackCommits(id); err != nil {
			return fmt.Errorf("publish pack %d: %w", id, err)
		}
	}
	packs, err := t.tx.CreateBucketIfNotExists(bucketPacks)
	if err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	if err := t.tx.MoveBucket(packKey(id), t.tx.Bucket(bucketStaging), packs); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	if staged {
		// Once moved: a change to the pack's bucket before would be lost.
		if err := t.publishPackWords(packs.Bucket(packKey(id)), use); err != nil {
			return fmt.Errorf("publish pack %d: word index: %w", id, err)
		}
	}
	// A tract that does not know packs would not find these objects.
	if err := raiseSchema(t.tx, schemaPacks); err != nil {
		return fmt.Errorf("publish pack %d: %w", id, err)
	}
	if err := t.publishRefset(id); err != nil {
		return err
	}
	t.all = nil // the new pack is a layer now
	return nil
}

func (t *boltTx) DropPack(id uint64) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	if _, err := t.stagingPack(id); err != nil {
		return nil
	}
	t.erased = true
	if err := t.tx.Bucket(bucketStaging).DeleteBucket(packKey(id)); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	if err := t.dropStagedRefs(id); err != nil {
		return fmt.Errorf("drop pack %d: %w", id, err)
	}
	return nil
}

func (t *boltTx) UnpublishedPacks() ([]PackInfo, error) {
	st := t.tx.Bucket(bucketStaging)
	if st == nil {
		return nil, nil
	}
	var out []PackInfo
	err := st.ForEachBucket(func(k []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("pack key of %d bytes: %w", len(k), dag.ErrBadEncoding)
		}
		id := binary.BigEndian.Uint64(k)
		info, err := decodePackInfo(id, st.Bucket(k).Get(keyPackInfo))
		if err != nil {
			return err
		}
		out = append(out, info)
		return nil
	})
	return out, err
}

// PublishedPacks counts the published packs; one whose info (its size,
// which merges go by) does not decode is an error wrapping
// dag.ErrBadEncoding, which Fsck reports.
func (t *boltTx) PublishedPacks() (n int, err error) {
	_ = t.eachPublishedPack(func(_ uint64, _ PackInfo, bad error) error {
		n++
		if err == nil {
			err = bad
		}
		return nil
	})
	return n, err
}
