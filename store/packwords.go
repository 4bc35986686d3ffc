package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/words"
)

// An import into a file that keeps a word index builds the index of its
// commits beside its pack instead of in the transaction that publishes
// it: bbolt holds what a transaction writes until it commits, and at
// 100,000 messages the index built there held about 24 MB (a node entry
// for each of its 103,000 keys, the posting lists, the commits added),
// and the texts it read back through the file's map 15 MB more; at a
// million, 460-570 MB in all. packWords gathers the words of the commits as the pack sorter
// takes them (their texts are in memory then), a chunk of documents at a
// time, as sorted runs of their posting lists; the pack's writer merges
// the runs into posting blocks, word by word, and appends them to a
// "words" bucket in the pack's, in bounded transactions, in ascending key
// order, its documents numbered from 0 in the order of the import (its
// commits' time order). When the file's index is still empty,
// PublishPack moves that bucket into place: it is the one that indexBulk
// would have written into an empty index, the same documents, numbers,
// keys and values. Otherwise it merges it into the file's index
// (mergePackWords), its documents numbered after the file's, reading
// neither a text nor more than a word's postings at a time; only when
// one of the pack's commits is stored already (its document is there) does
// it drop the bucket, and the publishing transaction indexes the commits
// the pack adds, as before.
type packWords struct {
	runs   sorter[wordEntry, wordCodec]
	budget int // bytes of a chunk's lists before they are written as a run

	ps     *postings // the chunk's lists
	adds   int       // words added to ps
	n      uint64    // documents added
	table  []byte    // the document table's block of the last document
	latest int64     // the latest commit time so far
	buf    []byte
	done   bool // the last chunk and block are in runs
}

// wordEntry is a run entry: a chunk's posting list of a word, under
// wordsRunWord, the word, a 0 byte and its first document (8 bytes,
// big-endian), holding the differences of the others as uvarints; or a
// block of the document table, under prefixDocs and the block's number
// (8 bytes), holding the block's value.
type wordEntry struct {
	key, value []byte
}

// wordsRunWord begins the keys of posting lists in packWords' runs; the
// posting blocks' keys begin with their level instead.
const wordsRunWord = 'w'

// wordEntryOverhead is what an entry, or a word in a chunk's map, costs
// in memory besides its bytes.
const wordEntryOverhead = 64

func newPackWords(dir string, budget int) *packWords {
	return &packWords{
		runs:   sorter[wordEntry, wordCodec]{dir: dir, budget: int(^uint(0) >> 1)}, // a run a chunk: see spill
		budget: budget,
		ps:     newPostings(),
		latest: -1 << 63,
	}
}

// add adds commit c, with text, as the next document.
func (w *packWords) add(c NewCommit, text []byte) error {
	id := w.n
	add := func(word []byte) {
		w.ps.addBytes(id, word)
		w.adds++
	}
	w.buf = words.AppendBytes(w.buf, text, add)
	if d := diagnosisOf(c.Commit); d != "" {
		w.buf = words.AppendBytes(w.buf, []byte(d), add)
	}
	if id%docsPerBlock == 0 {
		if err := w.flushTable(); err != nil {
			return err
		}
		w.table = make([]byte, 8, 8+docBytes*docsPerBlock)
	}
	w.table = append(w.table, c.Hash[:docBytes]...)
	w.latest = max(w.latest, c.Commit.Time.UnixNano())
	binary.BigEndian.PutUint64(w.table, uint64(w.latest))
	w.n++
	if len(w.ps.index)*wordEntryOverhead+w.adds*2 >= w.budget {
		return w.spill()
	}
	return nil
}

// flushTable hands the block of the document table being filled to the
// runs.
func (w *packWords) flushTable() error {
	if w.table == nil {
		return nil
	}
	block := (w.n - 1) / docsPerBlock
	err := w.runs.Add(wordEntry{key: docKey(prefixDocs, block), value: w.table})
	w.table = nil
	return err
}

// spill writes the chunk's posting lists as a run.
func (w *packWords) spill() error {
	for word, v := range w.ps.index {
		key := append(append([]byte{wordsRunWord}, word...), 0)
		e := wordEntry{}
		if v < 0 {
			e.key = binary.BigEndian.AppendUint64(key, uint64(-1-v))
		} else {
			p := &w.ps.lists[v]
			e.key, e.value = binary.BigEndian.AppendUint64(key, p.first), p.deltas
		}
		if err := w.runs.Add(e); err != nil {
			return err
		}
	}
	w.ps, w.adds = newPostings(), 0
	return w.runs.spill()
}

// finish writes the last chunk and block.
func (w *packWords) finish() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.flushTable(); err != nil {
		return err
	}
	return w.spill()
}

// blocks returns the keys and values of the index's bucket, in ascending
// key order but for the counters at the end: the document table, the
// posting blocks of level, then the counters indexBulk leaves in an
// empty index (after mergePending, and mergeRecent for the main level).
func (w *packWords) blocks(level byte) iter.Seq2[wordEntry, error] {
	return func(yield func(wordEntry, error) bool) {
		if err := w.finish(); err != nil {
			yield(wordEntry{}, err)
			return
		}
		var (
			word []byte
			list postingList
			have bool
			err  error
		)
		flush := func() bool {
			if !have {
				return true
			}
			ok := true
			err = list.blocks(func(first uint64, val []byte) error {
				key := binary.BigEndian.AppendUint64(postingPrefix(level, string(word)), first)
				if ok = yield(wordEntry{key: key, value: val}, nil); !ok {
					return errStopBlocks
				}
				return nil
			})
			if errors.Is(err, errStopBlocks) {
				err = nil
			}
			return ok && err == nil
		}
		for e, rerr := range w.runs.Sorted() {
			if rerr != nil {
				yield(wordEntry{}, rerr)
				return
			}
			if e.key[0] == prefixDocs {
				if !yield(e, nil) {
					return
				}
				continue
			}
			if len(e.key) < 11 || e.key[len(e.key)-9] != 0 {
				yield(wordEntry{}, fmt.Errorf("word index: bad run entry %q", e.key))
				return
			}
			wd, first := e.key[1:len(e.key)-9], binary.BigEndian.Uint64(e.key[len(e.key)-8:])
			if !have || !bytes.Equal(wd, word) {
				if !flush() {
					if err != nil {
						yield(wordEntry{}, err)
					}
					return
				}
				word, list, have = wd, postingList{first: first, last: first}, true
			} else {
				list.deltas = binary.AppendUvarint(list.deltas, first-list.last)
				list.last = first
			}
			for at := 0; at < len(e.value); {
				d, m := binary.Uvarint(e.value[at:])
				if m <= 0 {
					yield(wordEntry{}, fmt.Errorf("word index: bad run entry %q", e.key))
					return
				}
				list.deltas = binary.AppendUvarint(list.deltas, d)
				list.last += d
				at += m
			}
		}
		if !flush() {
			if err != nil {
				yield(wordEntry{}, err)
			}
			return
		}
		recent := w.n
		if level == prefixWord {
			recent = 0
		}
		for _, c := range []struct {
			key []byte
			v   uint64
		}{{keyWordsPending, 0}, {keyWordsRecent, recent}, {keyWordsNext, w.n}} {
			if !yield(wordEntry{key: c.key, value: binary.AppendUvarint(nil, c.v)}, nil) {
				return
			}
		}
	}
}

// errLevelRead rolls back the transaction that reads the level of a
// pack's word index (see writeWords).
var errLevelRead = errors.New("rolled back: the level of the word index was read")

// errStopBlocks ends a posting list's blocks early: the caller stopped.
var errStopBlocks = errors.New("stopped")

// wordCodec is packWords' sortCodec.
type wordCodec struct{}

func (wordCodec) compare(a, b wordEntry) int { return bytes.Compare(a.key, b.key) }
func (wordCodec) size(e wordEntry) int       { return len(e.key) + len(e.value) + wordEntryOverhead }

func (wordCodec) write(w *bufio.Writer, e wordEntry) error {
	hdr := binary.AppendUvarint(w.AvailableBuffer(), uint64(len(e.key))) // as packCodec's
	if _, err := w.Write(binary.AppendUvarint(hdr, uint64(len(e.value)))); err != nil {
		return err
	}
	if _, err := w.Write(e.key); err != nil {
		return err
	}
	_, err := w.Write(e.value)
	return err
}

func (wordCodec) read(r *bufio.Reader) (wordEntry, bool, error) {
	kn, err := binary.ReadUvarint(r)
	if err == io.EOF {
		return wordEntry{}, false, nil
	}
	var vn uint64
	if err == nil {
		vn, err = binary.ReadUvarint(r)
	}
	var b []byte
	if err == nil {
		b = make([]byte, kn+vn)
		_, err = io.ReadFull(r, b)
	}
	if err != nil {
		return wordEntry{}, false, err
	}
	return wordEntry{key: b[:kn:kn], value: b[kn:]}, true, nil
}

// IndexWords makes the sorter gather the word index of the commits
// AddChain adds, for PackBuilder to write beside the pack (see packWords).
// It is for a store whose StagesPackWords says so, and is called before
// the first AddChain.
func (s *PackSorter) IndexWords() {
	if s.words == nil {
		s.words = newPackWords(s.dir, s.budget)
	}
}

// StagesPackWords reports whether tx's store takes the word index of an
// import's commits built beside its pack (see PackSorter.IndexWords): a
// bbolt file that keeps a word index. tx is a write transaction.
func StagesPackWords(tx Tx) bool {
	t, ok := tx.(*boltTx)
	return ok && t.indexing()
}

// PackWordsMovedIn reports whether the word index built beside an
// import's pack would be moved into place whole as the pack is published,
// were it published in tx: a bbolt file whose word index has no documents
// yet. Into one with documents, the publishing transaction merges it into
// the file's (see mergePackWords). tx is a write transaction.
func PackWordsMovedIn(tx Tx) bool {
	t, ok := tx.(*boltTx)
	return ok && t.indexing() && t.wordsEmpty()
}

// wordsEmpty reports whether the word index has no documents: no key in
// its bucket but the counters, at zero, and none pending in the journal.
func (t *boltTx) wordsEmpty() bool {
	b := t.tx.Bucket(bucketWords)
	if b == nil || t.journal().wordDocCount() > 0 {
		return false
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		counter := bytes.Equal(k, keyWordsNext) || bytes.Equal(k, keyWordsPending) || bytes.Equal(k, keyWordsRecent)
		if !counter || wordsCounter(b, k) != 0 || v == nil {
			return false
		}
	}
	return true
}

// writeWords appends the index packWords gathered to the pack's words
// bucket, about batchBytes a transaction.
func (w *PackBuilder) writeWords(ctx context.Context, pw *packWords) error {
	// The level the publishing transaction would have written to, read
	// in a transaction rolled back: it writes nothing.
	var level byte
	err := w.update(ctx, func(tx Tx) error {
		t, ok := tx.(*boltTx)
		if !ok {
			return fmt.Errorf("the repository's store (%T) cannot take a pack's word index", tx)
		}
		level = prefixRecent
		if pw.n >= t.wpolicy.recent {
			level = prefixWord
		}
		return errLevelRead
	})
	if !errors.Is(err, errLevelRead) {
		return err
	}
	size := func(e wordEntry) int { return len(e.key) + len(e.value) }
	return inBatches(ctx, pw.blocks(level), w.batchBytes, size, wordEntryOverhead, func(batch []wordEntry) error {
		return w.update(ctx, func(tx Tx) error { return tx.(*boltTx).appendPackWords(w.pack, batch) })
	})
}

// appendPackWords puts entries into unpublished pack id's words bucket,
// which it creates the first time. The entries of the document table and
// posting blocks come in ascending key order, after those put before.
func (t *boltTx) appendPackWords(id uint64, entries []wordEntry) error {
	pb, err := t.appendingTo(id)
	if err != nil {
		return err
	}
	defer dropMapped(t.tx) // as AppendPack
	b, err := pb.CreateBucketIfNotExists(bucketWords)
	if err != nil {
		return fmt.Errorf("append to pack %d: %w", id, err)
	}
	b.FillPercent = 1.0 // appended: nothing is inserted before them
	for _, e := range entries {
		if err := b.Put(e.key, e.value); err != nil { // the values are kept until the transaction ends
			return fmt.Errorf("append to pack %d: word index: %w", id, err)
		}
	}
	return nil
}

// How the publication of a pack takes the word index built beside it
// (see packWords).
const (
	packWordsDrop  = iota // dropped: the publishing transaction indexes the pack's commits
	packWordsMove         // moved into place: the file's index is empty (see wordsEmpty)
	packWordsMerge        // merged into the file's index (see mergePackWords)
)

// publishPackWords takes the word index built beside pack pb, just
// published, as use says, and drops what is left of it.
func (t *boltTx) publishPackWords(pb *bolt.Bucket, use int) error {
	switch use {
	case packWordsMove:
		if err := t.tx.DeleteBucket(bucketWords); err != nil {
			return err
		}
		return t.tx.MoveBucket(bucketWords, pb, nil)
	case packWordsMerge:
		if err := t.mergePackWords(pb.Bucket(bucketWords)); err != nil {
			return err
		}
	}
	return pb.DeleteBucket(bucketWords)
}

// packCommitsNew reports whether none of the commits of unpublished pack
// id is stored yet: its documents, built beside it, are then the ones the
// publication would add to the index.
func (t *boltTx) packCommitsNew(id uint64) (bool, error) {
	fresh := true
	err := t.eachPackCommit(id, func(_ dag.Hash, stored bool) bool {
		fresh = !stored
		return fresh
	})
	return fresh && err == nil, err
}

// mergePackWords merges pw, the word index built beside a pack none of
// whose commits the file held (see packWords), into the file's index,
// which has documents: as indexBulk would index the pack's commits, it
// merges the pending documents first, then numbers the pack's after
// every document, in their order, and appends them to the recent posting
// blocks (to the main ones, after the recent ones, when they make
// policy.recent with those). It reads pw a key at a time, and holds one
// word's postings at once, never a text: what the transaction holds
// besides is bbolt's, the pages it writes. The document table keeps, for
// each block, the latest commit time of its documents and those before
// them, which searches take as a bound; pw keeps that for its own blocks,
// and a block here that ends within one of pw's takes the bound of pw's
// whole block: no earlier than its documents', as a bound must be.
func (t *boltTx) mergePackWords(pw *bolt.Bucket) error {
	b := t.tx.Bucket(bucketWords)
	if b == nil || pw == nil {
		return fmt.Errorf("no index to merge into, or none built")
	}
	n := wordsCounter(pw, keyWordsNext)
	level, err := t.bulkLevel(b, n)
	if err != nil {
		return err
	}
	base := wordsCounter(b, keyWordsNext)
	var (
		docs []indexDoc
		word []byte
		ids  []uint64
		read int
	)
	flush := func() error {
		if word == nil {
			return nil
		}
		err := appendPostings(b, level, string(word), ids)
		ids = ids[:0]
		return err
	}
	c := pw.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if read++; read%buildChunk == 0 {
			dropMapped(t.tx) // as indexBulk
		}
		switch {
		case len(k) == 1: // a counter
		case k[0] == prefixDocs:
			if len(k) != 9 || len(v) < 8 || (len(v)-8)%docBytes != 0 {
				return fmt.Errorf("the index built beside the pack: document block %x is malformed", k)
			}
			first := binary.BigEndian.Uint64(k[1:]) * docsPerBlock
			bound := int64(binary.BigEndian.Uint64(v))
			docs = docs[:0]
			for at := 8; at < len(v); at += docBytes {
				var h dag.Hash // the table keeps its first docBytes
				copy(h[:], v[at:at+docBytes])
				docs = append(docs, indexDoc{id: base + first + uint64(at-8)/docBytes, hash: h, time: bound})
			}
			if err := appendDocTable(b, docs); err != nil {
				return err
			}
		case (k[0] == prefixRecent || k[0] == prefixWord) && len(k) >= 11 && k[len(k)-9] == 0:
			if w := k[1 : len(k)-9]; !bytes.Equal(w, word) {
				if err := flush(); err != nil {
					return err
				}
				word = clone(w)
			}
			err := eachPosting(binary.BigEndian.Uint64(k[len(k)-8:]), v, func(id uint64) { ids = append(ids, base+id) })
			if err != nil {
				return fmt.Errorf("the index built beside the pack: the postings of %q: %w", word, err)
			}
		default:
			return fmt.Errorf("the index built beside the pack: key %q is not one it makes", k)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return bulkCounted(b, level, n, base+n)
}
