package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// The journal (schema 4) is where a small write transaction puts what it
// adds: its objects and reflog entries become one record, appended to one
// top-level bucket under the next 8-byte big-endian sequence number.
//
// bbolt rewrites every page a transaction touches, and the pages of a
// blob, a commit and two reflog entries are four places in four B+trees:
// a durable commit wrote about thirteen pages. An append to the journal
// touches its last page (and that page's parent), so a commit writes about
// six, which is what a one-key bbolt update costs.
//
// Readers find the journal's entries through an index of keys to record
// positions, kept per session and brought up to date at the start of each
// transaction by reading the records appended since (see journalIndex).
// Once the journal holds journalRecords records or journalBytes bytes, the
// transaction that appended the last one checkpoints it: the objects
// become a pack (WritePack, which merges packs in tiers), the reflog
// entries go to the reflogs bucket, and the records are deleted. A
// transaction that deletes objects or rewrites a reflog checkpoints first,
// so deletes only ever reach the buckets and packs. A transaction whose
// additions outgrow one record writes them to the top-level buckets, as
// before the journal.
//
// A record is a sequence of entries, each
//
//	space byte (0 blob, 1 commit or counters, 2 reflog entry,
//	           3 word-index document)
//	uvarint key length, key   (the key the entry has in its bucket:
//	                           a hash, countersKey, or a ref name; a
//	                           document's commit hash)
//	uvarint value length, value
//
// A word-index document (schema 8) is a commit's entry in the word
// index, pending: the value a pending document has in the words bucket
// (see bolt_words.go). A transaction that writes a few commits puts their
// documents in its record rather than in the words bucket, whose pages
// (a leaf of pending documents, the leaves of its two counters, and
// their parent) it would otherwise rewrite for every commit; a
// checkpoint moves them to the words bucket, numbered in journal order,
// after the pending documents there.
var bucketJournal = []byte("journal")

// schemaJournal is the schema of a file whose journal has been written.
const schemaJournal = 4

// schemaJournalWords is the schema of a file whose journal has held
// word-index documents: a tract that does not know them would refuse
// its records, or check them in. It is the word index's own schema
// (Rice-coded postings came with it), which every write already keeps.
const schemaJournalWords = schemaWords

// spaceOf returns the space of the commits (or blobs) bucket.
func spaceOf(commits bool) int {
	if commits {
		return spaceCommits
	}
	return spaceBlobs
}

// Entry spaces: where an entry would live without the journal.
const (
	spaceBlobs   = 0
	spaceCommits = 1
	spaceReflogs = 2
	spaceWords   = 3
)

// journalPolicy says how large the journal and its records grow.
type journalPolicy struct {
	// records and bytes bound the journal: reaching either checkpoints it.
	records int
	bytes   int
	// recordBytes bounds one transaction's record: a transaction that adds
	// more writes to the top-level buckets instead.
	recordBytes int
	// carryBytes bounds the reflog entries a checkpoint may keep in the
	// journal (see carried).
	carryBytes int
}

// defaultJournalPolicy checkpoints the journal every 64 records or 256
// KiB: a checkpoint is part of the write transaction that appended the
// last record, and every write queued meanwhile waits for it, so its
// pack is kept to a few hundred entries, about a millisecond to build
// and write (256 records or a MiB took 6–12 ms). The packs, four times
// as many, are merged in steps of their own (see defaultPackPolicy). A
// record takes up to 256 KiB: the writes of a group of concurrent
// callers (64 calls of a proxy, say, 100 KiB) are one record, where
// writing them to the buckets would rewrite a page for nearly each
// object.
//
// A checkpoint keeps up to 64 KiB of reflog entries in the journal (see
// carried): a proxy's checkpoint of 64 records moved about 110 entries
// of 100 refs, 130 of the 200 pages it wrote.
func defaultJournalPolicy() journalPolicy {
	return journalPolicy{records: 64, bytes: 256 << 10, recordBytes: 256 << 10, carryBytes: 64 << 10}
}

// journalEntry is one entry of a record.
type journalEntry struct {
	space      byte
	key, value []byte
}

func appendJournalEntry(rec []byte, e journalEntry) []byte {
	rec = append(rec, e.space)
	rec = binary.AppendUvarint(rec, uint64(len(e.key)))
	rec = append(rec, e.key...)
	rec = binary.AppendUvarint(rec, uint64(len(e.value)))
	return append(rec, e.value...)
}

// decodeJournalRecord calls fn with each entry of rec and the offset of
// its value in rec. The slices are rec's own.
func decodeJournalRecord(rec []byte, fn func(e journalEntry, off int) error) error {
	for i := 0; i < len(rec); {
		space := rec[i]
		if space > spaceWords {
			return fmt.Errorf("entry at byte %d: unknown space %d: %w", i, space, dag.ErrBadEncoding)
		}
		i++
		var parts [2][]byte
		var off int
		for p := range parts {
			n, w := binary.Uvarint(rec[i:])
			if w <= 0 || n > uint64(len(rec)-i-w) {
				return fmt.Errorf("entry at byte %d: bad length: %w", i, dag.ErrBadEncoding)
			}
			i += w
			parts[p], off = rec[i:i+int(n)], i
			i += int(n)
		}
		if !journalKeyOK(space, parts[0]) {
			return fmt.Errorf("entry ending at byte %d: a key of %d bytes: %w", i, len(parts[0]), dag.ErrBadEncoding)
		}
		if err := fn(journalEntry{space, parts[0], parts[1]}, off); err != nil {
			return err
		}
	}
	return nil
}

// journalKeyOK reports whether key can be the key of an entry of space.
func journalKeyOK(space byte, key []byte) bool {
	switch space {
	case spaceBlobs:
		return len(key) == dag.HashSize
	case spaceCommits:
		return len(key) == dag.HashSize || isCountersKey(key)
	case spaceWords:
		return len(key) == dag.HashSize
	}
	return len(key) > 0
}

func journalKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// jpos is where a value is: in record seq, n bytes at off.
type jpos struct {
	seq    uint64
	off, n uint32
}

// journalIndex maps the keys of a journal's entries to their positions.
// It describes records first..last of one file; a transaction sees the
// records of its snapshot, first'..last', and uses the index when first'
// is first, after reading any records past last. Sequence numbers are
// never reused (a checkpoint deletes records, and a later record gets the
// next number), so an entry whose record is past a transaction's last is
// simply one it cannot see. A key written again (counters rewritten, an
// object stored twice) maps to its latest position; the earlier ones are
// kept in older, for transactions that cannot see the latest.
//
// A session keeps the index of the newest journal it has seen
// (journalIndexes): a session holds the file's lock, so no compaction
// replaces the file under it.
type journalIndex struct {
	mu          sync.RWMutex
	first, last uint64
	objects     [2]map[string]jpos
	older       [2]map[string][]jpos
	reflogs     map[string][]jpos
	words       []jpos // the word-index documents, in journal order
	bytes       int
	records     int
	bad         []string // records that do not decode, named (Fsck reports them)
}

// newJournalIndex returns an empty index of a journal whose first record
// is first.
func newJournalIndex(first uint64) *journalIndex {
	return &journalIndex{
		first: first, last: first - 1,
		objects: [2]map[string]jpos{{}, {}},
		older:   [2]map[string][]jpos{{}, {}},
		reflogs: map[string][]jpos{},
	}
}

// add indexes record seq.
func (x *journalIndex) add(seq uint64, rec []byte) {
	x.last, x.records, x.bytes = seq, x.records+1, x.bytes+len(rec)
	// A small write's record has a few entries: room for them without
	// growing (on the stack, as they do not outlive the call).
	found := make([]jpos, 0, 8)
	keys := make([]journalEntry, 0, 8)
	err := decodeJournalRecord(rec, func(e journalEntry, off int) error {
		found = append(found, jpos{seq: seq, off: uint32(off), n: uint32(len(e.value))})
		keys = append(keys, e)
		return nil
	})
	if err != nil {
		x.bad = append(x.bad, fmt.Sprintf("journal record %d", seq))
		return
	}
	for i, e := range keys {
		p := found[i]
		if e.space == spaceWords {
			x.words = append(x.words, p)
			continue
		}
		if e.space == spaceReflogs {
			x.reflogs[string(e.key)] = append(x.reflogs[string(e.key)], p)
			continue
		}
		if prev, ok := x.objects[e.space][string(e.key)]; ok {
			x.older[e.space][string(e.key)] = append(x.older[e.space][string(e.key)], prev)
		}
		x.objects[e.space][string(e.key)] = p
	}
}

// journalView is one transaction's view of the journal.
type journalView struct {
	b           *bolt.Bucket
	idx         *journalIndex
	first, last uint64 // last < first: the journal is empty
	// cur is reused to read records in a read-only transaction, as
	// layer.get does.
	writable bool
	cur      *bolt.Cursor
}

// journal returns the transaction's view of the journal, reading the
// records the index has not seen.
func (t *boltTx) journal() *journalView {
	if t.jv != nil {
		return t.jv
	}
	t.jv = &journalView{}
	b := t.tx.Bucket(bucketJournal)
	if b == nil {
		return t.jv
	}
	*t.jv = journalView{b: b, writable: t.tx.Writable()}
	// Keys are 8 bytes; Fsck reports any other (index skips them).
	c := b.Cursor()
	fk, _ := c.First()
	for fk != nil && len(fk) != 8 {
		fk, _ = c.Next()
	}
	lk, _ := c.Last()
	for lk != nil && len(lk) != 8 {
		lk, _ = c.Prev()
	}
	if fk == nil || lk == nil {
		return t.jv
	}
	t.jv.first, t.jv.last = binary.BigEndian.Uint64(fk), binary.BigEndian.Uint64(lk)
	t.jv.idx = t.index(b, t.jv.first, t.jv.last)
	return t.jv
}

// journalIndexes keeps a session's index of the journal.
type journalIndexes struct {
	mu  sync.Mutex
	cur *journalIndex
}

// current returns the index of a journal whose first record is first: the
// session's, or a new one that replaces it (the journal was checkpointed
// since; transactions still using the old one keep it), or one of the
// caller's own for an older snapshot or without a session (s nil). An
// index's first is set before it is shared and never changes.
func (s *journalIndexes) current(first uint64) *journalIndex {
	if s == nil {
		return newJournalIndex(first)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.cur != nil && first == s.cur.first:
		return s.cur
	case s.cur != nil && first < s.cur.first:
		return newJournalIndex(first)
	}
	s.cur = newJournalIndex(first)
	return s.cur
}

// index returns an index that has records first..last of b, reading the
// records it lacks.
func (t *boltTx) index(b *bolt.Bucket, first, last uint64) *journalIndex {
	x := t.jidx.current(first)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.last < last {
		c := b.Cursor()
		for k, v := c.Seek(journalKey(x.last + 1)); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				x.bad = append(x.bad, fmt.Sprintf("journal key %x", k))
				continue
			}
			seq := binary.BigEndian.Uint64(k)
			if seq > last {
				break
			}
			x.add(seq, v)
		}
	}
	return x
}

// value returns the bytes at p, or nil when the transaction cannot see p.
func (v *journalView) value(p jpos) []byte {
	if p.seq < v.first || p.seq > v.last {
		return nil
	}
	rec := v.record(p.seq)
	if uint64(p.off)+uint64(p.n) > uint64(len(rec)) {
		return nil
	}
	return rec[p.off : p.off+p.n : p.off+p.n]
}

// record returns record seq, or nil.
func (v *journalView) record(seq uint64) []byte {
	key := journalKey(seq)
	if v.writable {
		return v.b.Get(key)
	}
	if v.cur == nil {
		v.cur = v.b.Cursor()
	}
	k, rec := v.cur.Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return rec
}

// get returns the value of key in space, or nil.
func (v *journalView) get(space int, key []byte) []byte {
	if v.idx == nil {
		return nil
	}
	v.idx.mu.RLock()
	p, ok := v.visible(space, string(key))
	v.idx.mu.RUnlock()
	if !ok {
		return nil
	}
	return v.value(p)
}

// visible returns the latest position of key in space the transaction can
// see. The caller holds v.idx.mu.
func (v *journalView) visible(space int, key string) (jpos, bool) {
	p, ok := v.idx.objects[space][key]
	if ok && p.seq > v.last {
		ok = false
		older := v.idx.older[space][key]
		for i := len(older) - 1; i >= 0 && !ok; i-- {
			p, ok = older[i], older[i].seq <= v.last
		}
	}
	return p, ok
}

// entries returns the entries of space the transaction sees, in no
// order.
func (v *journalView) entries(space int) []journalEntry {
	if v.idx == nil {
		return nil
	}
	type found struct {
		key string
		p   jpos
	}
	v.idx.mu.RLock()
	fs := make([]found, 0, len(v.idx.objects[space]))
	for k := range v.idx.objects[space] {
		if p, ok := v.visible(space, k); ok {
			fs = append(fs, found{k, p})
		}
	}
	v.idx.mu.RUnlock()
	var out []journalEntry
	for _, f := range fs {
		if val := v.value(f.p); val != nil {
			out = append(out, journalEntry{byte(space), []byte(f.key), val})
		}
	}
	return out
}

// reflog returns the encoded entries of ref name the transaction sees,
// oldest first.
func (v *journalView) reflog(name string) [][]byte {
	if v.idx == nil {
		return nil
	}
	v.idx.mu.RLock()
	ps := slices.Clone(v.idx.reflogs[name])
	v.idx.mu.RUnlock()
	return v.values(ps)
}

// values returns the values at ps (a copy taken under the index's lock)
// that the transaction sees, in their order.
func (v *journalView) values(ps []jpos) [][]byte {
	var out [][]byte
	for _, p := range ps {
		if raw := v.value(p); raw != nil {
			out = append(out, raw)
		}
	}
	return out
}

// reflogNames returns the refs with reflog entries the transaction sees.
func (v *journalView) reflogNames() []string {
	if v.idx == nil {
		return nil
	}
	v.idx.mu.RLock()
	defer v.idx.mu.RUnlock()
	var out []string
	for name, ps := range v.idx.reflogs {
		for _, p := range ps {
			if p.seq >= v.first && p.seq <= v.last {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// wordDocs returns the values of the word-index documents the
// transaction sees, in journal order.
func (v *journalView) wordDocs() [][]byte {
	if v.idx == nil {
		return nil
	}
	v.idx.mu.RLock()
	ps := slices.Clone(v.idx.words)
	v.idx.mu.RUnlock()
	return v.values(ps)
}

// wordDocCount returns how many word-index documents the transaction
// sees in the journal.
func (v *journalView) wordDocCount() int {
	if v.idx == nil {
		return 0
	}
	v.idx.mu.RLock()
	defer v.idx.mu.RUnlock()
	n := 0
	for _, p := range v.idx.words {
		if p.seq >= v.first && p.seq <= v.last {
			n++
		}
	}
	return n
}

// size reports how many records and bytes the transaction sees.
func (v *journalView) size() (records, bytes int) {
	if v.idx == nil {
		return 0, 0
	}
	v.idx.mu.RLock()
	defer v.idx.mu.RUnlock()
	return v.idx.records, v.idx.bytes
}

// pending is what a transaction adds to the journal: written as one
// record when it commits.
type pending struct {
	entries []journalEntry
	objects [2]map[string][]byte
	bytes   int
}

// objectsIn returns the objects of space the transaction added (a nil
// map when it added none).
func (p *pending) objectsIn(space int) map[string][]byte {
	if p == nil {
		return nil
	}
	return p.objects[space]
}

func (p *pending) get(space int, key []byte) []byte { return p.objectsIn(space)[string(key)] }

// reflog returns the encoded entries the transaction added to the reflog
// of name (every ref's when name is empty), with their names.
func (p *pending) reflog(name string) (names []string, raws [][]byte) {
	if p == nil {
		return nil, nil
	}
	for _, e := range p.entries {
		if e.space == spaceReflogs && (name == "" || string(e.key) == name) {
			names, raws = append(names, string(e.key)), append(raws, e.value)
		}
	}
	return names, raws
}

// put adds an entry to the transaction's writes: to its journal record,
// or to the buckets once it writes there. value is kept until the
// transaction ends.
func (t *boltTx) put(space byte, key, value []byte) error {
	if t.direct {
		return t.putDirect(journalEntry{space, key, value})
	}
	if t.pend == nil {
		// A commit adds its blob, commit, counters, word-index
		// document and two reflog entries.
		t.pend = &pending{objects: [2]map[string][]byte{{}, {}}, entries: make([]journalEntry, 0, 8)}
	}
	e := journalEntry{space, key, value}
	t.pend.entries = append(t.pend.entries, e)
	t.pend.bytes += entryBytes(e)
	if space == spaceBlobs || space == spaceCommits {
		t.pend.objects[space][string(key)] = value
	}
	if t.pend.bytes > t.jpolicy.recordBytes {
		return t.writeDirect()
	}
	return nil
}

// putDirect writes e to the top-level buckets (or the reflogs bucket).
func (t *boltTx) putDirect(e journalEntry) error {
	switch e.space {
	case spaceBlobs:
		return t.blobBucket().Put(e.key, e.value)
	case spaceCommits:
		return t.commitBucket().Put(e.key, e.value)
	case spaceWords:
		return t.addPendingDocs([][]byte{e.value})
	}
	return appendNext(t.bucket(bucketReflogs), e.key, e.value)
}

// appendNext puts v under the next 8-byte big-endian sequence number of
// bucket name in parent (a ref's reflog in the reflogs bucket), creating
// it if need be.
func appendNext(parent *bolt.Bucket, name, v []byte) error {
	b, err := parent.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	b.FillPercent = 1.0 // sequence numbers only grow
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(journalKey(seq), v)
}

// writeDirect makes the rest of the transaction write to the buckets. It
// checkpoints the journal first, then writes what the transaction has
// added so far: a ref's reflog entries in the reflogs bucket then all
// come before the journal's, and deletes (which call it first) only ever
// need to reach the buckets and packs.
func (t *boltTx) writeDirect() error {
	if t.direct {
		return nil
	}
	t.direct = true
	if err := t.checkpoint(time.Now(), false); err != nil {
		return err
	}
	if t.pend == nil {
		return nil
	}
	es := t.pend.entries
	t.pend = nil
	for _, e := range es {
		if err := t.putDirect(e); err != nil {
			return err
		}
	}
	return nil
}

// commitJournal appends the transaction's record, and checkpoints the
// journal when it has grown to the policy's bounds. Update calls it
// after the caller's closure succeeded.
func (t *boltTx) commitJournal(now time.Time) error {
	if t.pend == nil || len(t.pend.entries) == 0 {
		return nil
	}
	rec := make([]byte, 0, t.pend.bytes) // bytes bounds the record's length
	words := false
	for _, e := range t.pend.entries {
		rec = appendJournalEntry(rec, e)
		words = words || e.space == spaceWords
	}
	records, size := t.journal().size()
	b, err := t.tx.CreateBucketIfNotExists(bucketJournal)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	b.FillPercent = 1.0 // keys only grow
	seq, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := b.Put(journalKey(seq), rec); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	// What the transaction reads of the journal from here on, it indexes
	// itself: the session's index holds committed records only, or a
	// transaction that rolled back after reading its own record would
	// leave it there, under the number the next record takes.
	t.jidx, t.jv = nil, nil
	// A tract that does not know the journal would not find these.
	schema := uint64(schemaJournal)
	if words {
		schema = schemaJournalWords
	}
	if err := raiseSchema(t.tx, schema); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	t.pend = nil
	if records+1 < t.jpolicy.records && size+len(rec) < t.jpolicy.bytes {
		return nil
	}
	if (t.wordsMerged || t.crowded) && records+1 < 2*t.jpolicy.records && size+len(rec) < 2*t.jpolicy.bytes {
		// The transaction merged the word index's pending documents,
		// or other writes wait for it: a transaction of the handle's
		// background checkpoints (see bolt_upkeep.go), so that no
		// write waits for both, nor many for one.
		t.upkeepDue = true
		return nil
	}
	t.checkpointed = true
	return t.checkpoint(now, true)
}

// checkpoint moves every record of the journal to a pack, the reflogs
// bucket and the word index's pending documents, and deletes them. With
// carry, the reflog entries may stay in the journal instead, as one
// record after the deletes (see carried).
func (t *boltTx) checkpoint(now time.Time, carry bool) error {
	jb := t.tx.Bucket(bucketJournal)
	if jb == nil {
		return nil
	}
	// Keys are 8 bytes; Fsck reports any other, and a journal of none
	// but those is left as it is.
	c := jb.Cursor()
	k, _ := c.First()
	for k != nil && len(k) != 8 {
		k, _ = c.Next()
	}
	if k == nil {
		return nil
	}
	var objects []PackEntry
	var reflogs []journalEntry
	var docs [][]byte
	for k, rec := c.First(); k != nil; k, rec = c.Next() {
		err := decodeJournalRecord(rec, func(e journalEntry, _ int) error {
			// bbolt's slices die with the deletes below: copy.
			switch e.space {
			case spaceWords:
				docs = append(docs, clone(e.value))
			case spaceReflogs:
				reflogs = append(reflogs, journalEntry{e.space, clone(e.key), clone(e.value)})
			default:
				objects = append(objects, packEntryAt(int(e.space), clone(e.key), clone(e.value)))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("checkpoint the journal: record %x: %w", k, err)
		}
	}
	for k, _ := c.First(); k != nil; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return fmt.Errorf("checkpoint the journal: %w", err)
		}
	}
	t.jv = &journalView{}
	carry = carry && t.carried(reflogs)
	if !carry {
		for _, e := range reflogs {
			if err := t.putDirect(e); err != nil {
				return fmt.Errorf("checkpoint the journal: %w", err)
			}
		}
	}
	if err := t.addPendingDocs(docs); err != nil {
		return fmt.Errorf("checkpoint the journal: %w", err)
	}
	if objects = SortPackEntries(objects); len(objects) > 0 {
		// The journal keeps its texts as they are (see stored): they
		// are compressed here, an encoder's start paid once a
		// checkpoint.
		if err := t.compressTexts(objects); err != nil {
			return fmt.Errorf("checkpoint the journal: %w", err)
		}
		if err := t.writePack(now, objects); err != nil {
			return fmt.Errorf("checkpoint the journal: %w", err)
		}
	}
	if !carry {
		return nil
	}
	// Last: a read of the journal in this transaction builds its view
	// again, with the record.
	rec := make([]byte, 0, reflogBytes(reflogs))
	for _, e := range reflogs {
		rec = appendJournalEntry(rec, e)
	}
	seq, err := jb.NextSequence()
	if err == nil {
		err = jb.Put(journalKey(seq), rec)
	}
	if err != nil {
		return fmt.Errorf("checkpoint the journal: %w", err)
	}
	t.jidx, t.jv = nil, nil // see commitJournal
	return nil
}

// carried reports whether a checkpoint keeps reflog entries es in the
// journal, as one record that the next checkpoint reads again: while
// they take up to the policy's carryBytes, and writing that record takes
// fewer pages than appending each ref's entries to its reflog in the
// reflogs bucket (a page of its own, and its header's, for any but the
// smallest). A proxy's conversations each move a ref of their own: a
// checkpoint of theirs moved 110 entries of 100 refs, 130 pages, where
// the record of a few checkpoints' entries takes a few; the refs then
// share the pages of one move, once every few checkpoints. Entries of
// fewer than carryRefs refs always move: a handle that moves a branch
// and HEAD writes four pages.
func (t *boltTx) carried(es []journalEntry) bool {
	size := reflogBytes(es)
	if len(es) < carryRefs || size > t.jpolicy.carryBytes {
		return false
	}
	names := make(map[string]bool)
	for _, e := range es {
		names[string(e.key)] = true
	}
	page := t.tx.DB().Info().PageSize
	return len(names) >= carryRefs && size/page+1 < 2*len(names)
}

// carryRefs is how many refs' reflog entries a checkpoint must hold to
// keep them in the journal (see carried).
const carryRefs = 8

// reflogBytes bounds the length of the record of entries es.
func reflogBytes(es []journalEntry) int {
	n := 0
	for _, e := range es {
		n += entryBytes(e)
	}
	return n
}

// entryBytes bounds the length of entry e in a record (see
// appendJournalEntry).
func entryBytes(e journalEntry) int {
	return 1 + 2*binary.MaxVarintLen32 + len(e.key) + len(e.value)
}

// sortedEntries returns the journal's and the transaction's entries of
// space, in key order: a layer for cursors over every object.
func (t *boltTx) sortedEntries(space int) []journalEntry {
	es := t.journal().entries(space)
	for k, v := range t.pend.objectsIn(space) {
		es = append(es, journalEntry{byte(space), []byte(k), v})
	}
	slices.SortFunc(es, func(a, b journalEntry) int { return bytes.Compare(a.key, b.key) })
	return es
}

// sliceCursor is a cursor over entries sorted by key.
type sliceCursor struct {
	es []journalEntry
	i  int
}

func (s *sliceCursor) at() (k, v []byte) {
	if s.i >= len(s.es) {
		return nil, nil
	}
	return s.es[s.i].key, s.es[s.i].value
}

func (s *sliceCursor) First() (k, v []byte) { s.i = 0; return s.at() }

func (s *sliceCursor) Next() (k, v []byte) { s.i++; return s.at() }

func (s *sliceCursor) Seek(key []byte) (k, v []byte) {
	s.i, _ = slices.BinarySearchFunc(s.es, key, func(e journalEntry, key []byte) int { return bytes.Compare(e.key, key) })
	return s.at()
}
