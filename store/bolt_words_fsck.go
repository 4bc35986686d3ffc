package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"

	"github.com/tractdag/tract/dag"
)

// The word index's states in FsckReport.WordIndex.
const (
	// WordIndexOK: the index holds the words of every commit, and
	// nothing else.
	WordIndexOK = "ok"
	// WordIndexAbsent: the file has no index yet (a file of an older
	// tract, or one a salvage wrote): its next write builds it, and
	// searches read every text until then.
	WordIndexAbsent = "absent"
	// WordIndexRebuilt: the index did not match the commits, and Fsck
	// built it again (FsckReport.WordIndexProblem says what was wrong).
	WordIndexRebuilt = "rebuilt"
	// WordIndexWrong: the index does not match the commits, and Fsck
	// could not rebuild it (a read-only check, or a damaged file); it is
	// also one of the report's problems.
	WordIndexWrong = "wrong"
)

// checkWords compares the word index t's file holds with the words of
// its commits: each posting and pending word, as a pair (word, start of
// the document's commit hash), is summed through a hash, and so is each
// pair the commits' texts and diagnoses give, as is each document's and
// commit's hash; equal sums and counts are the same sets (but for odds
// of 2^-64). It returns what is wrong, "" when nothing is, and whether
// the file has an index at all.
func checkWords(t *boltTx) (problem string, present bool) {
	if !wordIndexCurrent(t.tx) {
		return "", false // none, or one of schema 7: the next write builds it
	}
	b := t.tx.Bucket(bucketWords)
	seed := maphash.MakeSeed()
	pair := func(w string, doc uint64) uint64 { return mix64(maphash.String(seed, w) ^ mix64(doc)) }
	next := wordsCounter(b, keyWordsNext)
	if v := b.Get(keyWordsNext); v == nil {
		return "its document counter is missing", true
	}
	if next > 1<<40 {
		return fmt.Sprintf("its document counter (%d) is out of range", next), true
	}
	docs := make([]uint64, next) // the start of each document's hash; 0: none
	var indexed, expected struct{ pairs, pairSum, docs, docSum uint64 }
	setDoc := func(id, p uint64) string {
		switch {
		case id >= next:
			return fmt.Sprintf("document %d is past its counter (%d)", id, next)
		case docs[id] != 0:
			return fmt.Sprintf("document %d is there twice", id)
		}
		docs[id] = p
		indexed.docs++
		indexed.docSum += mix64(p)
		return ""
	}
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixDocs}); k != nil && k[0] == prefixDocs; k, v = c.Next() {
		if len(k) != 9 || len(v) < 8 || (len(v)-8)%docBytes != 0 {
			return fmt.Sprintf("document block %x is malformed", k), true
		}
		first := binary.BigEndian.Uint64(k[1:]) * docsPerBlock
		for at := 8; at < len(v); at += docBytes {
			if p := binary.BigEndian.Uint64(v[at:]); p != 0 {
				if msg := setDoc(first+uint64(at-8)/docBytes, p); msg != "" {
					return msg, true
				}
			}
		}
	}
	pending := uint64(0)
	for k, v := c.Seek([]byte{prefixPending}); k != nil && k[0] == prefixPending; k, v = c.Next() {
		h, _, ws, ok := decodePending(v)
		if len(k) != 9 || !ok {
			return fmt.Sprintf("pending document %x is malformed", k), true
		}
		p := binary.BigEndian.Uint64(h[:docBytes])
		if msg := setDoc(binary.BigEndian.Uint64(k[1:]), p); msg != "" {
			return msg, true
		}
		for _, w := range pendingWords(ws) {
			indexed.pairs++
			indexed.pairSum += pair(w, p)
		}
		pending++
	}
	if n := wordsCounter(b, keyWordsPending); n != pending {
		return fmt.Sprintf("it counts %d pending documents and holds %d", n, pending), true
	}
	// The journal's documents, numbered when it is checkpointed.
	for _, v := range t.journal().wordDocs() {
		h, _, ws, ok := decodePending(v)
		if !ok {
			return fmt.Sprintf("a pending document in the journal (%x) is malformed", v[:min(len(v), dag.HashSize)]), true
		}
		p := binary.BigEndian.Uint64(h[:docBytes])
		indexed.docs++
		indexed.docSum += mix64(p)
		for _, w := range pendingWords(ws) {
			indexed.pairs++
			indexed.pairSum += pair(w, p)
		}
	}
	for k, v := c.Seek([]byte{prefixRecent}); k != nil && (k[0] == prefixRecent || k[0] == prefixWord); k, v = c.Next() {
		if len(k) < 11 || k[len(k)-9] != 0 || bytes.IndexByte(k[1:len(k)-9], 0) >= 0 {
			return fmt.Sprintf("posting key %q is malformed", k), true
		}
		w := string(k[1 : len(k)-9])
		var bad string
		err := eachPosting(binary.BigEndian.Uint64(k[len(k)-8:]), v, func(id uint64) {
			if bad != "" {
				return
			}
			if id >= next || docs[id] == 0 {
				bad = fmt.Sprintf("the postings of %q name document %d, which it does not hold", w, id)
				return
			}
			indexed.pairs++
			indexed.pairSum += pair(w, docs[id])
		})
		switch {
		case err != nil:
			return fmt.Sprintf("the postings of %q: %v", w, err), true
		case bad != "":
			return bad, true
		}
	}
	err := t.ForEachCommit(func(h dag.Hash, raw []byte) error {
		cm, err := dag.Decode(raw)
		if err != nil {
			return nil // checkObjects reports it
		}
		p := binary.BigEndian.Uint64(h[:docBytes])
		expected.docs++
		expected.docSum += mix64(p)
		text, _ := t.textOf(cm)
		for _, w := range CommitWords(cm, text) {
			expected.pairs++
			expected.pairSum += pair(w, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Sprintf("reading the commits: %v", err), true
	}
	switch {
	case indexed.docs != expected.docs:
		return fmt.Sprintf("it holds %d documents for %d commits", indexed.docs, expected.docs), true
	case indexed.docSum != expected.docSum:
		return "its documents are not the commits", true
	case indexed.pairs != expected.pairs || indexed.pairSum != expected.pairSum:
		return fmt.Sprintf("it holds %d words of commits where their texts and diagnoses have %d, or not the same ones", indexed.pairs, expected.pairs), true
	}
	return "", true
}

// mix64 is SplitMix64's finaliser: it spreads x's bits over the result.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
