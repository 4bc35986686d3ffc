package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/words"
)

// The word index in the bbolt file (schema 8): one top-level bucket,
// "words", built by the first write transaction of a tract that knows
// it (see upgrade) and kept by every write transaction after: it indexes
// the commits the transaction writes, and drops those it deletes, as it
// ends. Every commit is a document, numbered in the order it was
// indexed (a bulk write and a rebuild number theirs by commit time).
// Keys begin with a byte that says what they hold:
//
//	"n"                  the next document number (uvarint)
//	"c"                  how many documents are pending (uvarint)
//	"m"                  how many documents the recent posting blocks
//	                     took since they last moved (uvarint)
//	'p' doc              a pending document: its commit's hash (32), its
//	                     time (8: Unix nanoseconds, big-endian), and its
//	                     words, each after a 0 byte, then a 0 byte
//	'd' block            documents block*248 to block*248+247: the latest
//	                     commit time of every document up to the block's
//	                     last (8), then the first 8 bytes of each
//	                     document's commit hash (zeros for one deleted),
//	                     which a seek in the commits completes
//	'r' word 0 first     a recent posting block: documents holding word,
//	                     from first (8, big-endian) on, ascending; the
//	                     value codes the ones after first (see
//	                     bolt_words_rice.go) in about postingBlockBytes
//	'w' word 0 first     a main posting block, the same: every document
//	                     of the main blocks is older than every one of
//	                     the recent blocks, and those than the pending
//
// doc and block are 8 bytes, big-endian. A transaction that writes a few
// commits adds them as pending documents: entries of its journal record
// (see bolt_journal.go), which the journal's checkpoint appends here,
// one key each (or, when the transaction writes to the buckets, here at
// once). Once
// 2,048 are pending, the transaction that adds the last merges them into
// the recent posting blocks, a block appended to per word; once those
// took 65,536, it moves them into the main blocks. A merge rewrites the
// last block of most words of its level, so the recent level keeps the
// frequent merges small. A transaction that writes many (a pack, a
// batch) merges the pending ones and then its own at once.
var bucketWords = []byte("words")

const (
	// docsPerBlock is how many documents a block of the document table
	// holds: two blocks fill a page of 4 KiB (bbolt's page and element
	// headers, 16 bytes each, a 9-byte key, 8 bytes of time and 8 a
	// document: 4,050 bytes), where two of 256 documents took a page
	// each, half of it empty.
	docsPerBlock = 248
	// docBytes is how much of its commit's hash the document table keeps
	// of a document: a seek in the commits finds the rest. Two commits
	// whose hashes start alike are told apart by their words (see
	// WordMatches) and by a rebuild of the index when one is deleted
	// (see dropDocs).
	docBytes = 8
	// postingBlockBytes bounds a posting block's value: merging appends
	// to the last block of a word until it is this long.
	postingBlockBytes = 512
	// buildChunk is how many documents a bulk merge tokenises before it
	// writes them into the document table and gives back the pages of
	// the file's map it read (see dropMapped). The texts are read in
	// commit time order, all over the file, and the system maps the
	// pages around each page read: fewer would keep fewer resident (at
	// 100,000 texts, 512 kept about 20 MB of the map where 4,096 keep
	// 35) but fault them in again more often (twice the page faults, a
	// quarter more time).
	buildChunk = 4096
)

// wordsPolicy says when pending documents are merged.
type wordsPolicy struct {
	// merge is how many pending documents the transaction that adds the
	// last merges into the posting blocks.
	merge uint64
	// direct is the most commits a transaction adds as pending
	// documents; with more, it merges them (and the pending ones)
	// straight into the posting blocks.
	direct int
	// recent is how many documents the recent posting blocks take
	// before they move into the main ones.
	recent uint64
	// step is how many words' recent blocks one write transaction moves
	// into the main ones while a move is under way (see stepRecent); 0
	// means defaultRecentStep. stepPostings bounds the postings a step
	// moves (0: recentStepPostings).
	step, stepPostings int
}

// defaultRecentStep bounds the share of a move of the recent posting
// blocks into the main ones that one write transaction carries: 256
// words' blocks, neighbours in key order, so a few dozen pages of each
// level, well under a millisecond; the move of 65,536 documents' blocks
// whole, which nearly every main page takes part in, held a
// transaction (and every write queued behind it) 35–40 ms.
const defaultRecentStep = 256

// recentStepPostings bounds the postings one step of a move of the
// recent blocks takes, whatever their words: a word of nearly every
// document has 65,536 in the recent blocks, coded in about a bit each,
// and nine such words, one step of 256 words, took 46 ms to decode and
// code again; 8,192 take about a millisecond.
const recentStepPostings = 8192

// defaultWordsPolicy merges the pending documents about every 512
// commits, into the recent blocks, and those into the main ones about
// every 65,536: what a search reads besides the posting blocks stays
// small, a merge of pending documents rewrites the last recent block of
// the words of 512 documents (a transaction of a few milliseconds at
// most: 2,048 took 4–7, sometimes 18, and every write queued behind it
// waited as long), and the main blocks, which every move into them
// touches nearly all of, are rewritten once every 65,536 commits, a
// step of defaultRecentStep words a transaction.
func defaultWordsPolicy() wordsPolicy {
	return wordsPolicy{merge: 512, direct: 256, recent: 65536, step: defaultRecentStep}
}

var (
	keyWordsNext    = []byte("n")
	keyWordsPending = []byte("c")
	keyWordsRecent  = []byte("m")
	// keyWordsMoving is there while the recent posting blocks move into
	// the main ones a step at a time: its value is the key, less its
	// prefix, of the recent block the next step starts at (see
	// stepRecent).
	keyWordsMoving = []byte("g")
)

const (
	prefixPending = 'p'
	prefixDocs    = 'd'
	prefixRecent  = 'r'
	prefixWord    = 'w'
)

// levels are the prefixes of the two sets of posting blocks: those of
// the documents merged since the last merge into the main ones, and the
// main ones.
var levels = [2]byte{prefixRecent, prefixWord}

// wordsTx is what a write transaction did that the word index must
// follow: commits added and deleted.
type wordsTx struct {
	// added holds the commits put that were not stored before, in order.
	added []dag.Hash
	// dropped holds the commits of added deleted again in the
	// transaction.
	dropped map[dag.Hash]bool
	// deleted holds the stored commits deleted, with their words (nil
	// when their text could not be read: the index is searched for
	// them).
	deleted map[dag.Hash][]string
	// deletedBlobs holds the texts of the blobs deleted, for the
	// commits deleted after them.
	deletedBlobs map[dag.Hash]string
	// ahead holds the documents of commits whose words their writer
	// gave with them (NewCommit.Words), by hash: finishWords takes them
	// from here instead of reading and tokenising the commits' texts.
	ahead map[dag.Hash]indexDoc
}

// indexing reports whether the file has a word index to keep.
func (t *boltTx) indexing() bool {
	return t.tx.Writable() && wordIndexCurrent(t.tx)
}

func (t *boltTx) wordsState() *wordsTx {
	if t.words == nil {
		t.words = &wordsTx{}
	}
	return t.words
}

// noteAdded records that commit h, not stored before, is being put.
func (t *boltTx) noteAdded(h dag.Hash) {
	w := t.wordsState()
	w.added = append(w.added, h)
	delete(w.dropped, h)
}

// noteCommitPut records commit h for the index when it is not stored
// yet. It is called before the put.
func (t *boltTx) noteCommitPut(h dag.Hash) {
	if t.indexing() && t.getCommit(h) == nil {
		t.noteAdded(h)
	}
}

// noteBlobDeleted keeps the text of blob h, about to be deleted, for a
// commit deleted after it.
func (t *boltTx) noteBlobDeleted(h dag.Hash) {
	if !t.indexing() {
		return
	}
	if v := t.textAt(h); v != nil {
		w := t.wordsState()
		if w.deletedBlobs == nil {
			w.deletedBlobs = map[dag.Hash]string{}
		}
		w.deletedBlobs[h] = string(v)
	}
}

// noteCommitDeleted records that commit h is about to be deleted, with
// its words.
func (t *boltTx) noteCommitDeleted(h dag.Hash) {
	if !t.indexing() {
		return
	}
	raw := t.getCommit(h)
	if raw == nil {
		return
	}
	w := t.wordsState()
	if slices.Contains(w.added, h) && !w.dropped[h] {
		if w.dropped == nil {
			w.dropped = map[dag.Hash]bool{}
		}
		w.dropped[h] = true
		return
	}
	if w.deleted == nil {
		w.deleted = map[dag.Hash][]string{}
	}
	var ws []string
	if c, err := dag.Decode(raw); err == nil {
		if text, ok := t.textOrDeleted(c, true); ok {
			ws = CommitWords(c, text)
			if ws == nil {
				ws = []string{}
			}
		}
	}
	w.deleted[h] = ws
}

// textOf returns the text of commit c as the index reads it: its blob,
// or a salvage's LostText; ok is false when it has neither.
func (t *boltTx) textOf(c *dag.Commit) (string, bool) { return t.textOrDeleted(c, false) }

// textOrDeleted is textOf that, with deleted set, also reads a text
// deleted in this transaction: what a commit deleted after its text had.
func (t *boltTx) textOrDeleted(c *dag.Commit, deleted bool) (string, bool) {
	if v := t.textAt(c.Blob); v != nil {
		return string(v), true
	}
	if deleted && t.words != nil {
		if s, ok := t.words.deletedBlobs[c.Blob]; ok {
			return s, true
		}
	}
	if lostOf(t).blob(c.Blob) {
		return LostText(c.Blob), true
	}
	return "", false
}

// indexDoc is one document on its way into the index.
type indexDoc struct {
	id    uint64
	hash  dag.Hash
	time  int64
	words []string
}

// finishWords brings the word index up to date with what the
// transaction wrote, as it ends.
func (t *boltTx) finishWords() error {
	w := t.words
	t.words = nil
	if w == nil {
		return nil
	}
	b := t.tx.Bucket(bucketWords)
	if b == nil {
		return nil
	}
	if len(w.deleted) > 0 {
		// A transaction that deletes checkpointed the journal first
		// (writeDirect); this is for one that did not.
		if err := t.checkpointWordDocs(); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
		rebuild, err := t.dropDocs(b, w.deleted)
		if err != nil {
			return fmt.Errorf("word index: %w", err)
		}
		if rebuild {
			return t.rebuildWords()
		}
	}
	added := w.added
	if len(added) > t.wpolicy.direct {
		// indexBulk orders them by time: drop the repeats in place, by
		// hash, without a set of them.
		slices.SortFunc(added, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		added = slices.Compact(added)
		added = slices.DeleteFunc(added, func(h dag.Hash) bool { return w.dropped[h] })
	} else {
		added = added[:0:0]
		seen := make(map[dag.Hash]bool, len(w.added))
		for _, h := range w.added {
			if !w.dropped[h] && !seen[h] {
				seen[h] = true
				added = append(added, h)
			}
		}
	}
	if len(added) == 0 {
		return nil
	}
	if len(added) > t.wpolicy.direct {
		level, err := t.bulkLevel(b, uint64(len(added)))
		if err != nil {
			return fmt.Errorf("word index: %w", err)
		}
		return t.indexBulk(b, added, level)
	}
	// A few documents: in the transaction's journal record (see
	// bolt_journal.go), unless it writes to the buckets or they make
	// enough pending documents in the words bucket to merge. The
	// journal's own documents stay there: numbered when it is
	// checkpointed, after these, they are still pending documents (a
	// search's bounds hold whatever order documents are numbered in),
	// and the journal's bounds bound them.
	toJournal := !t.direct && wordsCounter(b, keyWordsPending)+uint64(len(added)) < t.wpolicy.merge
	docs := make([][]byte, 0, len(added))
	for _, h := range added {
		d, ok := w.ahead[h]
		var err error
		if !ok {
			if d, err = t.readDoc(h); err != nil {
				return fmt.Errorf("word index: %w", err)
			}
		}
		if toJournal {
			err = t.put(spaceWords, h[:], encodePending(d))
		} else {
			docs = append(docs, encodePending(d))
		}
		if err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	if err := t.addPendingDocs(docs); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	// The upkeep of the index is a bounded share of the transaction's
	// work: the pending documents merged once there are enough (a
	// checkpoint, which moves the journal's there, is left to a
	// transaction of the handle's background then: see commitJournal),
	// unless other writes wait for this one and they are fewer than
	// twice that (see crowded: that transaction merges them then), else
	// a step of a move of the recent blocks (left to the background too
	// when others wait).
	if pending := wordsCounter(b, keyWordsPending); pending >= t.wpolicy.merge {
		if t.crowded && pending < 2*t.wpolicy.merge {
			t.upkeepDue = true // see bolt_upkeep.go
		} else {
			t.wordsMerged = true
			if err := t.mergePending(b); err != nil {
				return fmt.Errorf("word index: %w", err)
			}
			return nil
		}
	}
	if t.crowded {
		// A step of a move under way goes to the background too.
		t.upkeepDue = t.upkeepDue || b.Get(keyWordsMoving) != nil
		return nil
	}
	if err := t.stepRecent(b); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	return nil
}

// addPendingDocs appends docs, encoded pending documents, to the pending
// documents of the words bucket, numbered from its counter on; the next
// transaction that indexes a commit merges them into the posting blocks
// once there are enough (see finishWords). A file without the bucket
// drops them: its next write builds the index from every commit.
func (t *boltTx) addPendingDocs(docs [][]byte) error {
	b := t.tx.Bucket(bucketWords)
	if b == nil || len(docs) == 0 {
		return nil
	}
	next, pending := wordsCounter(b, keyWordsNext), wordsCounter(b, keyWordsPending)
	for _, d := range docs {
		if err := b.Put(docKey(prefixPending, next), d); err != nil {
			return err
		}
		next++
		pending++
	}
	if err := putWordsCounter(b, keyWordsNext, next); err != nil {
		return err
	}
	return putWordsCounter(b, keyWordsPending, pending)
}

// checkpointWordDocs checkpoints the journal when it holds word-index
// documents: for the work on the words bucket that must see every
// pending document there (deletes, a rebuild).
func (t *boltTx) checkpointWordDocs() error {
	if t.journal().wordDocCount() == 0 {
		return nil
	}
	return t.checkpoint(time.Now(), false)
}

// wordsAhead keeps the words of commit c (hash h), which its writer
// gave with it, for finishWords: nothing when the file has no index to
// keep.
func (t *boltTx) wordsAhead(h dag.Hash, c *dag.Commit, words []string) {
	if !t.indexing() {
		return
	}
	w := t.wordsState()
	if w.ahead == nil {
		w.ahead = map[dag.Hash]indexDoc{}
	}
	w.ahead[h] = indexDoc{hash: h, time: c.Time.UnixNano(), words: words}
}

// readDoc reads commit h's time and words.
func (t *boltTx) readDoc(h dag.Hash) (indexDoc, error) {
	raw := t.getCommit(h)
	if raw == nil {
		return indexDoc{}, notFound("commit", h)
	}
	c, err := dag.Decode(raw)
	if err != nil {
		return indexDoc{}, fmt.Errorf("commit %s: %w", h.Short(), err)
	}
	text, _ := t.textOf(c) // a commit without its text is found by its diagnosis, as a scan finds it
	return indexDoc{hash: h, time: c.Time.UnixNano(), words: CommitWords(c, text)}, nil
}

// indexBulk numbers the commits hs (stored, not indexed) by commit time
// and merges them into the posting blocks of level (prefixRecent, or
// prefixWord when the recent ones are empty), reading their texts a
// chunk at a time. It holds the posting lists it builds, encoded, and
// a time and two hashes a commit; the pages of the file it reads are
// given back a chunk at a time (see dropMapped).
func (t *boltTx) indexBulk(b *bolt.Bucket, hs []dag.Hash, level byte) error {
	// A commit on its way: 48 bytes, of which the document table keeps
	// the start of its hash; the few diagnoses are kept apart.
	type timed struct {
		t    int64
		h    [docBytes]byte
		blob dag.Hash
	}
	order := make([]timed, len(hs))
	diagnoses := map[timed]string{}
	for i, h := range hs {
		raw := t.getCommit(h)
		if raw == nil {
			return fmt.Errorf("word index: %w", notFound("commit", h))
		}
		c, err := dag.Decode(raw)
		if err != nil {
			return fmt.Errorf("word index: commit %s: %w", h.Short(), err)
		}
		order[i] = timed{h: [docBytes]byte(h[:docBytes]), blob: c.Blob, t: c.Time.UnixNano()}
		if d := diagnosisOf(c); d != "" {
			diagnoses[order[i]] = d
		}
		if (i+1)%buildChunk == 0 {
			dropMapped(t.tx)
		}
	}
	dropMapped(t.tx)
	slices.SortFunc(order, func(a, b timed) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if c := bytes.Compare(a.h[:], b.h[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.blob[:], b.blob[:])
	})
	next := wordsCounter(b, keyWordsNext)
	ps := newPostings()
	var buf []byte
	docs := make([]indexDoc, 0, min(buildChunk, len(order)))
	for start := 0; start < len(order); start += buildChunk {
		chunk := order[start:min(start+buildChunk, len(order))]
		docs = docs[:0]
		for _, o := range chunk {
			id := next
			add := func(w []byte) { ps.addBytes(id, w) } // a document once a word: see add
			if v := t.textAt(o.blob); v != nil {
				buf = words.AppendBytes(buf, v, add)
			} else if text, ok := t.textOf(&dag.Commit{Blob: o.blob}); ok {
				buf = words.AppendBytes(buf, []byte(text), add)
			}
			if d, ok := diagnoses[o]; ok {
				buf = words.AppendBytes(buf, []byte(d), add)
			}
			var h dag.Hash // the table keeps its first docBytes
			copy(h[:], o.h[:])
			docs = append(docs, indexDoc{id: id, hash: h, time: o.t})
			next++
		}
		dropMapped(t.tx)
		if err := appendDocTable(b, docs); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
		if w := t.wbuild; w != nil {
			counted := len(chunk)
			if start+buildChunk >= len(order) {
				counted-- // the last counts once its transaction committed (see Bolt.endBuild)
				w.held.Store(true)
			}
			w.count.Add(int64(counted))
		}
	}
	if err := ps.write(b, level); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	if err := bulkCounted(b, level, uint64(len(hs)), next); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	return nil
}

// bulkLevel readies b for a bulk write of n documents, numbered after
// every document, and returns the level of posting blocks they go to: it
// merges the pending documents (the journal's, if any, stay there:
// numbered when it is checkpointed, after these, they are still the
// pending ones; a search's bounds hold whatever order documents are
// numbered in), and, when they would make policy.recent recent
// documents, moves the recent blocks into the main ones, where they go
// too (a bulk write rewrites the main blocks anyway: the recent ones go
// with it, at once, a move under way too).
func (t *boltTx) bulkLevel(b *bolt.Bucket, n uint64) (byte, error) {
	if err := t.mergePending(b); err != nil {
		return 0, err
	}
	if wordsCounter(b, keyWordsRecent)+n < t.wpolicy.recent {
		return prefixRecent, nil
	}
	return prefixWord, mergeRecent(b)
}

// bulkCounted counts the n documents a bulk write added to level of b,
// next being the number after the last.
func bulkCounted(b *bolt.Bucket, level byte, n, next uint64) error {
	if level == prefixRecent {
		if err := putWordsCounter(b, keyWordsRecent, wordsCounter(b, keyWordsRecent)+n); err != nil {
			return err
		}
	}
	return putWordsCounter(b, keyWordsNext, next)
}

// rebuildWords builds the word index afresh from every commit the
// transaction sees, replacing the one the file has, and marks the file
// schema 8 (schemaWords).
func (t *boltTx) rebuildWords() error {
	// The journal's documents would be indexed again when it is
	// checkpointed: move them out first (with no bucket, it drops them).
	if err := t.checkpointWordDocs(); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	if t.tx.Bucket(bucketWords) != nil {
		// The old index may hold the words of texts erased since (it
		// is being rebuilt because it is wrong): wipe its pages.
		t.erased = true
		if err := t.tx.DeleteBucket(bucketWords); err != nil {
			return fmt.Errorf("word index: %w", err)
		}
	}
	b, err := t.tx.CreateBucket(bucketWords)
	if err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	var hs []dag.Hash
	err = t.ForEachCommit(func(h dag.Hash, _ []byte) error {
		hs = append(hs, h)
		return nil
	})
	if err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	if t.wbuild != nil {
		t.wbuild.count.SetTotal(int64(len(hs)))
	}
	if err := putWordsCounter(b, keyWordsNext, 0); err != nil {
		return fmt.Errorf("word index: %w", err)
	}
	if err := t.indexBulk(b, hs, prefixWord); err != nil {
		return err
	}
	return raiseSchema(t.tx, schemaWords)
}

// wordsCounter reads counter key of the index (0 when missing or bad:
// fsck checks it).
func wordsCounter(b *bolt.Bucket, key []byte) uint64 {
	v, n := binary.Uvarint(b.Get(key))
	if n <= 0 {
		return 0
	}
	return v
}

func putWordsCounter(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.AppendUvarint(nil, v))
}

// docKey is the key of document (or block) n under prefix p.
func docKey(p byte, n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{p}, n) }

// postingPrefix is what the keys of word's posting blocks of level
// (prefixRecent or prefixWord) start with.
func postingPrefix(level byte, word string) []byte {
	k := make([]byte, 0, len(word)+10)
	k = append(k, level)
	k = append(k, word...)
	return append(k, 0)
}

// encodePending encodes a pending document.
func encodePending(d indexDoc) []byte {
	n := 32 + 8 + 1
	for _, w := range d.words {
		n += len(w) + 1
	}
	v := make([]byte, 0, n)
	v = append(v, d.hash[:]...)
	v = binary.BigEndian.AppendUint64(v, uint64(d.time))
	for _, w := range d.words {
		v = append(v, 0)
		v = append(v, w...)
	}
	return append(v, 0)
}

// decodePending decodes a pending document's value: its hash, time, and
// words, each after a 0 byte and the last followed by one. ok is false
// for a value too short.
func decodePending(v []byte) (h dag.Hash, t int64, words []byte, ok bool) {
	if len(v) < 41 || v[40] != 0 || v[len(v)-1] != 0 {
		return h, 0, nil, false
	}
	return dag.Hash(v[:32]), int64(binary.BigEndian.Uint64(v[32:40])), v[40:], true
}

// pendingWords splits the words of a pending document.
func pendingWords(ws []byte) []string {
	if len(ws) < 2 {
		return nil
	}
	var out []string
	for _, w := range bytes.Split(ws[1:len(ws)-1], []byte{0}) {
		if len(w) > 0 {
			out = append(out, string(w))
		}
	}
	return out
}

// pendingMatch reports whether the words of a pending document hold
// every term.
func pendingMatch(ws []byte, terms []WordTerm) bool {
	for _, t := range terms {
		needle := make([]byte, 0, len(t.Word)+2)
		needle = append(append(needle, 0), t.Word...)
		if !t.Prefix {
			needle = append(needle, 0)
		}
		if !bytes.Contains(ws, needle) {
			return false
		}
	}
	return true
}

// mergePending merges the pending documents into the recent posting
// blocks, and those into the main ones when they have enough.
func (t *boltTx) mergePending(b *bolt.Bucket) error {
	var docs []indexDoc
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixPending}); k != nil && k[0] == prefixPending; k, v = c.Next() {
		keys = append(keys, clone(k))
		h, tm, ws, ok := decodePending(v)
		if len(k) != 9 || !ok {
			continue // fsck reports it
		}
		docs = append(docs, indexDoc{id: binary.BigEndian.Uint64(k[1:]), hash: h, time: tm, words: pendingWords(ws)})
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	if err := putWordsCounter(b, keyWordsPending, 0); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	if err := appendDocs(b, docs, prefixRecent); err != nil {
		return err
	}
	recent := wordsCounter(b, keyWordsRecent) + uint64(len(docs))
	if recent >= t.wpolicy.recent && b.Get(keyWordsMoving) == nil {
		// The move starts: the write transactions from this one on each
		// carry a step of it (stepRecent). The recent blocks count the
		// documents merged into them from now on; those of the words
		// still to move are counted again (a move then comes a little
		// early), never lost.
		if err := b.Put(keyWordsMoving, []byte{}); err != nil {
			return err
		}
		recent = 0
	}
	return putWordsCounter(b, keyWordsRecent, recent)
}

// stepRecent carries the next step of a move of the recent posting
// blocks into the main ones, when one is under way: the recent blocks
// from the key keyWordsMoving names on, in key order, up to policy.step
// words or policy.stepPostings postings, whichever comes first. A word of
// many documents (a word of nearly every message has as many blocks as
// a thousand rare ones together) may be cut between two steps: its first
// blocks move, and its others, of later documents, stay recent until
// the next step. Each step is a part of the write transaction that
// carries it, all or nothing, and leaves each document of a word in one
// level or the other, which searches read both of: a move cut short (a
// killed process, a write that failed) is invisible to them, and the
// next write goes on with it. A word whose recent blocks moved may get
// new ones before the move ends: they wait for the next move, as the
// documents merged after it would.
func (t *boltTx) stepRecent(b *bolt.Bucket) error {
	from := b.Get(keyWordsMoving)
	if from == nil {
		return nil
	}
	step, stepPostings := t.wpolicy.step, t.wpolicy.stepPostings
	if step <= 0 {
		step = defaultRecentStep
	}
	if stepPostings <= 0 {
		stepPostings = recentStepPostings
	}
	type list struct {
		word string
		ids  []uint64
	}
	var lists []list
	var keys [][]byte
	postings := 0
	c := b.Cursor()
	k, v := c.Seek(append([]byte{prefixRecent}, from...))
	for ; k != nil && k[0] == prefixRecent; k, v = c.Next() {
		if len(k) < 10 || k[len(k)-9] != 0 {
			keys = append(keys, clone(k)) // fsck reports it
			continue
		}
		w := string(k[1 : len(k)-9])
		if postings >= stepPostings {
			break
		}
		if len(lists) == 0 || lists[len(lists)-1].word != w {
			if len(lists) == step {
				break
			}
			lists = append(lists, list{word: w})
		}
		keys = append(keys, clone(k))
		l := &lists[len(lists)-1]
		if err := eachPosting(binary.BigEndian.Uint64(k[len(k)-8:]), v, func(id uint64) { l.ids = append(l.ids, id); postings++ }); err != nil {
			return fmt.Errorf("posting block %q: %w", k, err)
		}
	}
	var next []byte
	if k != nil && k[0] == prefixRecent {
		next = clone(k[1:])
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	for _, l := range lists {
		if err := appendPostings(b, prefixWord, l.word, l.ids); err != nil {
			return err
		}
	}
	if next == nil {
		return b.Delete(keyWordsMoving)
	}
	return b.Put(keyWordsMoving, next)
}

// mergeRecent moves the recent posting blocks into the main ones: it
// appends each word's recent documents to its main blocks.
func mergeRecent(b *bolt.Bucket) error {
	type list struct {
		word string
		ids  []uint64
	}
	var lists []list
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixRecent}); k != nil && k[0] == prefixRecent; k, v = c.Next() {
		keys = append(keys, clone(k))
		if len(k) < 10 || k[len(k)-9] != 0 {
			continue // fsck reports it
		}
		w := string(k[1 : len(k)-9])
		if len(lists) == 0 || lists[len(lists)-1].word != w {
			lists = append(lists, list{word: w})
		}
		l := &lists[len(lists)-1]
		if err := eachPosting(binary.BigEndian.Uint64(k[len(k)-8:]), v, func(id uint64) { l.ids = append(l.ids, id) }); err != nil {
			return fmt.Errorf("posting block %q: %w", k, err)
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	// The merge grows the last block of nearly every word: the
	// transaction rewrites nearly every page of the main blocks, and
	// packs them full as it commits.
	b.FillPercent = 1.0
	for _, l := range lists {
		if err := appendPostings(b, prefixWord, l.word, l.ids); err != nil {
			return err
		}
	}
	if err := b.Delete(keyWordsMoving); err != nil {
		return err
	}
	return putWordsCounter(b, keyWordsRecent, 0)
}

// appendDocs writes docs, in ascending order of their numbers, all past
// every document of the posting blocks, into the document table and the
// posting blocks of level.
func appendDocs(b *bolt.Bucket, docs []indexDoc, level byte) error {
	if err := appendDocTable(b, docs); err != nil {
		return err
	}
	ps := newPostings()
	for _, d := range docs {
		ps.add(d)
	}
	return ps.write(b, level)
}

// appendDocTable writes docs, in ascending order of their numbers, all
// past every document of the table, into the document table.
func appendDocTable(b *bolt.Bucket, docs []indexDoc) error {
	if len(docs) == 0 {
		return nil
	}
	latest := int64(-1 << 63)
	c := b.Cursor()
	first := docs[0].id / docsPerBlock
	if k, v := c.Seek(docKey(prefixDocs, first)); k != nil && bytes.Equal(k, docKey(prefixDocs, first)) && len(v) >= 8 {
		latest = int64(binary.BigEndian.Uint64(v))
	} else if k, v := prevKey(c, k); k != nil && k[0] == prefixDocs && len(v) >= 8 {
		latest = int64(binary.BigEndian.Uint64(v))
	}
	for i := 0; i < len(docs); {
		block := docs[i].id / docsPerBlock
		key := docKey(prefixDocs, block)
		v := clone(b.Get(key))
		if len(v) < 8 {
			v = make([]byte, 8, 8+docBytes*docsPerBlock)
		}
		for ; i < len(docs) && docs[i].id/docsPerBlock == block; i++ {
			d := docs[i]
			at := 8 + docBytes*int(d.id%docsPerBlock)
			if len(v) < at+docBytes {
				v = append(v, make([]byte, at+docBytes-len(v))...)
			}
			copy(v[at:at+docBytes], d.hash[:])
			latest = max(latest, d.time)
		}
		binary.BigEndian.PutUint64(v, uint64(latest))
		if err := b.Put(key, v); err != nil {
			return err
		}
	}
	return nil
}

// postings gathers the posting lists of documents numbered in ascending
// order, encoded as posting blocks are: memory in proportion to the
// index they make, not to the documents' words. A word of one document
// (most of a history's distinct words: names, numbers, typos) costs its
// entry in index, and a list is made for a word once a second document
// has it.
type postings struct {
	// index finds a word's list in lists (a value of 0 or more), or
	// the one document that has it so far (-1-id).
	index map[string]int64
	lists []postingList
}

// postingList is one word's: its documents from first to last, the
// differences of those after first as uvarints in deltas. write cuts it
// into posting blocks.
type postingList struct {
	first, last uint64
	deltas      []byte
}

func newPostings() *postings { return &postings{index: make(map[string]int64)} }

// add adds document d, numbered after every document added before, to
// the lists of its words.
func (ps *postings) add(d indexDoc) {
	for _, w := range d.words {
		if v, ok := ps.index[w]; ok {
			ps.addTo(v, w, d.id)
			continue
		}
		ps.index[strings.Clone(w)] = -1 - int64(d.id) // not a piece of the text, which would stay with it
	}
}

// addBytes adds document id, numbered after every document added
// before and in order with those added with it, to the list of word w.
func (ps *postings) addBytes(id uint64, w []byte) {
	if v, ok := ps.index[string(w)]; ok { // looked up without a copy
		if v < 0 && uint64(-1-v) < id {
			ps.addTo(v, string(w), id) // a second document: a list, and a copy of the word
		} else if v >= 0 {
			ps.lists[v].add(id)
		}
		return
	}
	ps.index[string(w)] = -1 - int64(id)
}

// addTo adds document id to word w, whose entry in index is v.
func (ps *postings) addTo(v int64, w string, id uint64) {
	if v >= 0 {
		ps.lists[v].add(id)
		return
	}
	first := uint64(-1 - v)
	if id <= first {
		return // a document once a word
	}
	ps.index[w] = int64(len(ps.lists))
	ps.lists = append(ps.lists, postingList{first: first, last: first})
	ps.lists[len(ps.lists)-1].add(id)
}

// add adds document id to p unless p has it: a document once a word.
func (p *postingList) add(id uint64) {
	if id <= p.last {
		return
	}
	p.deltas = binary.AppendUvarint(p.deltas, id-p.last)
	p.last = id
}

// blocks calls fn with each posting block of p, in order, coded with
// the parameter that suits p's differences (see cutBlocks).
func (p *postingList) blocks(fn func(first uint64, val []byte) error) error {
	var n, sum uint64
	for at := 0; at < len(p.deltas); {
		d, m := binary.Uvarint(p.deltas[at:])
		n, sum, at = n+1, sum+d-1, at+m
	}
	k := riceK(n, sum, func(k uint) uint64 {
		c := n * uint64(k+1)
		for at := 0; at < len(p.deltas); {
			d, m := binary.Uvarint(p.deltas[at:])
			c, at = c+(d-1)>>k, at+m
		}
		return c
	})
	id, at := p.first, -1
	return cutRun(k, func() (uint64, bool) {
		if at < 0 {
			at = 0
			return id, true
		}
		if at == len(p.deltas) {
			return 0, false
		}
		d, m := binary.Uvarint(p.deltas[at:])
		id, at = id+d, at+m
		return id, true
	}, fn)
}

// ids returns the documents of p, ascending.
func (p *postingList) ids() []uint64 {
	out := []uint64{p.first}
	for at, id := 0, p.first; at < len(p.deltas); {
		d, n := binary.Uvarint(p.deltas[at:])
		id, at = id+d, at+n
		out = append(out, id)
	}
	return out
}

// write appends the lists to the posting blocks of level in b, word by
// word in key order: the blocks of a word that has none yet go in as they
// are, the others top its last block up first (see topUp). When
// b has no posting block yet, every key goes in in ascending order, and
// the transaction fills its pages.
func (ps *postings) write(b *bolt.Bucket, level byte) error {
	type entry struct {
		word string
		v    int64
	}
	entries := make([]entry, 0, len(ps.index))
	for w, v := range ps.index {
		entries = append(entries, entry{w, v})
	}
	ps.index = nil
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.word, b.word) })
	c := b.Cursor()
	if k, _ := c.Seek([]byte{prefixRecent}); k == nil {
		b.FillPercent = 1.0 // bbolt reads it as the transaction commits
	}
	for _, e := range entries {
		p := &postingList{first: uint64(-1 - e.v)}
		if e.v >= 0 {
			p = &ps.lists[e.v]
		}
		prefix := postingPrefix(level, e.word)
		var err error
		if k, v := lastBlock(c, prefix); k != nil {
			err = topUp(b, prefix, k, v, p.ids())
		} else {
			err = p.blocks(func(first uint64, val []byte) error {
				return b.Put(binary.BigEndian.AppendUint64(prefix, first), val) // Put copies the key
			})
		}
		if err != nil {
			return err
		}
		// Its blocks are values of their own: the list goes, and the
		// memory the transaction holds as it commits is the index's
		// pages, not the lists too.
		*p = postingList{}
	}
	ps.lists = nil
	return nil
}

// prevKey steps back from where a Seek left c (k nil: past the end).
func prevKey(c *bolt.Cursor, k []byte) ([]byte, []byte) {
	if k == nil {
		return c.Last()
	}
	return c.Prev()
}

// appendPostings appends ids, ascending and past every document in the
// posting blocks of word in level, to them: to the last block while it
// has room, then to new ones.
func appendPostings(b *bolt.Bucket, level byte, word string, ids []uint64) error {
	prefix := postingPrefix(level, word)
	if k, v := lastBlock(b.Cursor(), prefix); k != nil {
		return topUp(b, prefix, k, v, ids)
	}
	return putBlocks(b, prefix, ascending(ids, 0, false))
}

// lastBlock returns the key and value of the last posting block whose
// key starts with prefix (a level's and a word's), nil when it has none.
func lastBlock(c *bolt.Cursor, prefix []byte) (k, v []byte) {
	end := append(prefix[:len(prefix):len(prefix)], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	k, v = c.Seek(end)
	k, v = prevKey(c, k)
	if k != nil && len(k) == len(prefix)+8 && bytes.HasPrefix(k, prefix) {
		return k, v
	}
	return nil, nil
}

// topUp appends ids, ascending, to a word's posting blocks, the last of
// which, under key k, holds v (prefix is the level's and the word's):
// those not past its last document are there already. The new codes go
// after the block's own, coded with its parameter, until it is full, and
// the rest into new blocks; only when that parameter would code them in
// too many bits is the block cut again with the new documents, with one
// that suits them all.
func topUp(b *bolt.Bucket, prefix, k, v []byte, ids []uint64) error {
	first := binary.BigEndian.Uint64(k[len(prefix):])
	last, codeBits, err := postingsEnd(first, v)
	if err != nil {
		return fmt.Errorf("posting block of %q: %w", prefix[1:len(prefix)-1], err)
	}
	ids = ascending(ids, last, true)
	if len(ids) == 0 {
		return nil
	}
	if len(v) == 0 || !riceFits(uint(v[0]), last, ids) {
		var all []uint64
		if err := eachPosting(first, v, func(id uint64) { all = append(all, id) }); err != nil {
			return fmt.Errorf("posting block of %q: %w", prefix[1:len(prefix)-1], err)
		}
		// The last block goes in again under its key, cut again, and
		// the blocks after it under theirs.
		return putBlocks(b, prefix, append(all, ids...))
	}
	var w riceWriter
	w.resume(v, codeBits)
	n := 0
	for prev := last; n < len(ids) && w.bytes() < postingBlockBytes; n++ {
		w.add(ids[n] - prev)
		prev = ids[n]
	}
	if n > 0 { // else the block was full already: left as it is
		if err := b.Put(k, w.finish()); err != nil { // Put copies the key
			return err
		}
	}
	return putBlocks(b, prefix, ids[n:])
}

// ascending returns the documents of ids (ascending, repeats allowed)
// past last (with past; all of them without), once each.
func ascending(ids []uint64, last uint64, past bool) []uint64 {
	out := make([]uint64, 0, len(ids))
	for _, id := range ids {
		if (past || len(out) > 0) && id <= last {
			continue // indexed already
		}
		out = append(out, id)
		last, past = id, true
	}
	return out
}

// putBlocks puts the posting blocks of ids (ascending; none for none)
// under prefix, a level's and a word's.
func putBlocks(b *bolt.Bucket, prefix []byte, ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	return cutBlocks(ids, func(first uint64, val []byte) error {
		return b.Put(binary.BigEndian.AppendUint64(clone(prefix), first), val)
	})
}

// dropDocs removes the documents of the commits deleted (with their
// words; nil when unknown) from the index. The document table keeps the
// start of each commit's hash: a deleted commit whose hash starts as a
// stored one's does leaves the document it finds ambiguous, and the
// index is rebuilt instead (rebuild is set), an event of odds 2^-64 a
// pair of commits.
func (t *boltTx) dropDocs(b *bolt.Bucket, deleted map[dag.Hash][]string) (rebuild bool, err error) {
	byPrefix := make(map[[docBytes]byte]dag.Hash, len(deleted))
	commits := t.cursor(true)
	for h := range deleted {
		p := [docBytes]byte(h[:docBytes])
		if len(t.commitsStarting(commits, p[:])) > 0 {
			return true, nil
		}
		byPrefix[p] = h
	}
	byWord := make(map[string][]uint64)
	var unknown []uint64
	var pendingKeys [][]byte
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixPending}); k != nil && k[0] == prefixPending; k, v = c.Next() {
		if h, _, _, ok := decodePending(v); ok {
			if _, del := deleted[h]; del {
				pendingKeys = append(pendingKeys, clone(k))
			}
		}
	}
	type rewrite struct{ k, v []byte }
	var blocks []rewrite
	for k, v := c.Seek([]byte{prefixDocs}); k != nil && k[0] == prefixDocs; k, v = c.Next() {
		if len(k) != 9 || len(v) < 8 {
			continue
		}
		var nv []byte
		for at := 8; at+docBytes <= len(v); at += docBytes {
			h, del := byPrefix[[docBytes]byte(v[at:at+docBytes])]
			if !del {
				continue
			}
			ws := deleted[h]
			if nv == nil {
				nv = clone(v)
			}
			clear(nv[at : at+docBytes])
			id := binary.BigEndian.Uint64(k[1:])*docsPerBlock + uint64(at-8)/docBytes
			if ws == nil {
				unknown = append(unknown, id)
			}
			for _, w := range ws {
				byWord[w] = append(byWord[w], id)
			}
		}
		if nv != nil {
			blocks = append(blocks, rewrite{clone(k), nv})
		}
	}
	for _, k := range pendingKeys {
		if err := b.Delete(k); err != nil {
			return false, err
		}
	}
	if len(pendingKeys) > 0 {
		n := wordsCounter(b, keyWordsPending)
		if err := putWordsCounter(b, keyWordsPending, n-min(n, uint64(len(pendingKeys)))); err != nil {
			return false, err
		}
	}
	for _, r := range blocks {
		if err := b.Put(r.k, r.v); err != nil {
			return false, err
		}
	}
	for w, ids := range byWord {
		for _, level := range levels {
			if err := removePostings(b, postingPrefix(level, w), ids); err != nil {
				return false, err
			}
		}
	}
	if len(unknown) > 0 {
		return false, removeEverywhere(b, unknown)
	}
	return false, nil
}

// removePostings removes ids from the posting blocks whose keys start
// with prefix (one word's).
func removePostings(b *bolt.Bucket, prefix []byte, ids []uint64) error {
	slices.Sort(ids)
	drop := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	type block struct{ k, v []byte }
	var found []block
	c := b.Cursor()
	for _, id := range ids {
		key := binary.BigEndian.AppendUint64(clone(prefix), id)
		k, v := c.Seek(key)
		if !bytes.Equal(k, key) {
			k, v = prevKey(c, k)
		}
		if k == nil || len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
			continue
		}
		if len(found) > 0 && bytes.Equal(found[len(found)-1].k, k) {
			continue
		}
		found = append(found, block{clone(k), clone(v)})
	}
	for _, bl := range found {
		if err := rewriteBlock(b, prefix, bl.k, bl.v, drop); err != nil {
			return err
		}
	}
	return nil
}

// rewriteBlock writes the posting block k (value v) again without the
// documents of drop: under the key of its new first document, or not at
// all when none is left.
func rewriteBlock(b *bolt.Bucket, prefix, k, v []byte, drop map[uint64]bool) error {
	var kept []uint64
	changed := false
	err := eachPosting(binary.BigEndian.Uint64(k[len(prefix):]), v, func(id uint64) {
		if drop[id] {
			changed = true
		} else {
			kept = append(kept, id)
		}
	})
	if err != nil || !changed {
		return err
	}
	if err := b.Delete(k); err != nil {
		return err
	}
	if len(kept) == 0 {
		return nil
	}
	return b.Put(binary.BigEndian.AppendUint64(clone(prefix), kept[0]), encodePostings(kept))
}

// removeEverywhere removes ids from every posting block: for documents
// whose words are not known.
func removeEverywhere(b *bolt.Bucket, ids []uint64) error {
	drop := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	type block struct{ prefix, k, v []byte }
	var hit []block
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixRecent}); k != nil && (k[0] == prefixRecent || k[0] == prefixWord); k, v = c.Next() {
		if len(k) < 10 {
			continue
		}
		prefix := k[:len(k)-8]
		has := false
		_ = eachPosting(binary.BigEndian.Uint64(k[len(prefix):]), v, func(id uint64) { has = has || drop[id] })
		if has {
			hit = append(hit, block{clone(prefix), clone(k), clone(v)})
		}
	}
	for _, bl := range hit {
		if err := rewriteBlock(b, bl.prefix, bl.k, bl.v, drop); err != nil {
			return err
		}
	}
	return nil
}

var _ WordIndexTx = (*boltTx)(nil)

// WordMatches reads the pending documents, newest first, then the
// posting blocks of each term into a bit set, intersects them, and
// reads the document table from the newest match down.
func (t *boltTx) WordMatches(terms []WordTerm, fn func(h dag.Hash, bound time.Time) (bool, error)) (bool, error) {
	if !wordIndexCurrent(t.tx) || len(terms) == 0 {
		return false, nil // none, or one of schema 7, which the next write builds again
	}
	b := t.tx.Bucket(bucketWords)
	if t.words != nil && (len(t.words.added) > 0 || len(t.words.deleted) > 0) {
		return false, nil // the index follows this transaction's writes only as it ends
	}
	next := wordsCounter(b, keyWordsNext)
	// The newest time of the merged documents: the last block's.
	latest := int64(-1 << 63)
	c := b.Cursor()
	k, _ := c.Seek([]byte{prefixDocs + 1})
	if k, v := prevKey(c, k); k != nil && k[0] == prefixDocs && len(v) >= 8 {
		latest = int64(binary.BigEndian.Uint64(v))
	}
	type match struct {
		h     dag.Hash
		bound int64
	}
	var pend []match
	pendingDoc := func(v []byte) {
		h, tm, ws, ok := decodePending(v)
		if !ok {
			return
		}
		latest = max(latest, tm)
		if pendingMatch(ws, terms) {
			pend = append(pend, match{h, latest})
		}
	}
	for k, v := c.Seek([]byte{prefixPending}); k != nil && k[0] == prefixPending; k, v = c.Next() {
		pendingDoc(v)
	}
	// The journal's documents come after the bucket's.
	for _, v := range t.journal().wordDocs() {
		pendingDoc(v)
	}
	for i := len(pend) - 1; i >= 0; i-- {
		if more, err := fn(pend[i].h, time.Unix(0, pend[i].bound)); err != nil || !more {
			return true, err
		}
	}
	var set []uint64
	for i, term := range terms {
		s, err := postingSet(b, term, next)
		if err != nil {
			return true, err
		}
		if i == 0 {
			set = s
			continue
		}
		left := uint64(0)
		for j := range set {
			set[j] &= s[j]
			left |= set[j]
		}
		if left == 0 {
			return true, nil
		}
	}
	block, bv := ^uint64(0), []byte(nil)
	var commits *mergedCursor
	for wi := len(set) - 1; wi >= 0; wi-- {
		for word := set[wi]; word != 0; {
			bit := 63 - bits.LeadingZeros64(word)
			word &^= 1 << bit
			id := uint64(wi)*64 + uint64(bit)
			if id/docsPerBlock != block {
				block = id / docsPerBlock
				bv = b.Get(docKey(prefixDocs, block))
			}
			at := 8 + docBytes*int(id%docsPerBlock)
			if len(bv) < at+docBytes {
				continue
			}
			p := bv[at : at+docBytes]
			if bytes.Equal(p, make([]byte, docBytes)) {
				continue // deleted
			}
			if commits == nil {
				commits = t.cursor(true)
			}
			hs := t.commitsStarting(commits, p)
			if len(hs) > 1 {
				// Hashes that start alike: the commits whose words
				// match are (at least) this document's.
				hs = slices.DeleteFunc(hs, func(h dag.Hash) bool { return !t.commitMatches(h, terms) })
			}
			for _, h := range hs {
				if more, err := fn(h, time.Unix(0, int64(binary.BigEndian.Uint64(bv)))); err != nil || !more {
					return true, err
				}
			}
		}
	}
	return true, nil
}

// postingSet returns the documents of the posting blocks term matches,
// as a bit set of next bits.
func postingSet(b *bolt.Bucket, term WordTerm, next uint64) ([]uint64, error) {
	set := make([]uint64, (next+63)/64)
	c := b.Cursor()
	for _, level := range levels {
		prefix := []byte{level}
		prefix = append(prefix, term.Word...)
		if !term.Prefix {
			prefix = append(prefix, 0)
		}
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) < 10 || k[len(k)-9] != 0 {
				continue
			}
			err := eachPosting(binary.BigEndian.Uint64(k[len(k)-8:]), v, func(id uint64) {
				if id < next {
					set[id/64] |= 1 << (id % 64)
				}
			})
			if err != nil {
				return nil, fmt.Errorf("word index: posting block %q: %w", k, err)
			}
		}
	}
	return set, nil
}

// notePackCommits records for the index the commits of unpublished pack
// id that are not stored elsewhere: PublishPack makes them visible.
func (t *boltTx) notePackCommits(id uint64) error {
	if !t.indexing() {
		return nil
	}
	return t.eachPackCommit(id, func(h dag.Hash, stored bool) bool {
		if !stored {
			t.noteAdded(h)
		}
		return true
	})
}

// eachPackCommit calls fn with each commit of unpublished pack id and
// whether the file stores it already, until fn returns false.
func (t *boltTx) eachPackCommit(id uint64, fn func(h dag.Hash, stored bool) bool) error {
	pb, err := t.stagingPack(id)
	if err != nil {
		return err
	}
	cb := pb.Bucket(bucketCommits)
	if cb == nil {
		return nil
	}
	c := cb.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) == dag.HashSize && !fn(dag.Hash(k), t.getCommit(dag.Hash(k)) != nil) {
			return nil
		}
	}
	return nil
}

// commitsStarting returns the stored commits whose hashes start with p,
// through c (a cursor over the commits, which a caller that seeks often
// keeps; nil: a new one).
func (t *boltTx) commitsStarting(c *mergedCursor, p []byte) []dag.Hash {
	if c == nil {
		c = t.cursor(true)
	}
	var out []dag.Hash
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		if len(k) == dag.HashSize {
			out = append(out, dag.Hash(k))
		}
	}
	return out
}

// commitMatches reports whether the words of commit h hold every term.
func (t *boltTx) commitMatches(h dag.Hash, terms []WordTerm) bool {
	d, err := t.readDoc(h)
	if err != nil {
		return false
	}
	for _, term := range terms {
		if !termMatches(term, d.words) {
			return false
		}
	}
	return true
}
