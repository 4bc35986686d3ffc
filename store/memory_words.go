package store

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
)

// memWords is a Memory's word index: the commits holding each word, and
// each commit's words (to take it out again).
type memWords struct {
	postings map[string]map[dag.Hash]struct{}
	of       map[dag.Hash][]string
}

func newMemWords() memWords {
	return memWords{postings: make(map[string]map[dag.Hash]struct{}), of: make(map[dag.Hash][]string)}
}

// wordChanges returns the words of the commits tx puts, read through tx
// before its writes are applied (a text deleted in tx is no text), and
// the commits it deletes.
func (t *memTx) wordChanges() (added map[dag.Hash][]string, deleted []dag.Hash) {
	added = make(map[dag.Hash][]string, len(t.commits.set))
	for h, raw := range t.commits.set {
		if _, ok := t.m.commits[h]; ok {
			continue // stored already: indexed
		}
		c, err := dag.Decode(raw)
		if err != nil {
			continue // fsck reports it
		}
		text, _ := t.blobs.get(t.m.blobs, c.Blob)
		added[h] = CommitWords(c, string(text))
	}
	for h := range t.commits.del {
		if _, ok := t.m.commits[h]; ok {
			deleted = append(deleted, h)
		}
	}
	return added, deleted
}

// apply takes the commits deleted out of the index and puts those added
// in.
func (w memWords) apply(added map[dag.Hash][]string, deleted []dag.Hash) {
	for _, h := range deleted {
		for _, word := range w.of[h] {
			if set := w.postings[word]; set != nil {
				delete(set, h)
				if len(set) == 0 {
					delete(w.postings, word)
				}
			}
		}
		delete(w.of, h)
	}
	for h, ws := range added {
		w.of[h] = ws
		for _, word := range ws {
			set := w.postings[word]
			if set == nil {
				set = make(map[dag.Hash]struct{})
				w.postings[word] = set
			}
			set[h] = struct{}{}
		}
	}
}

var _ WordIndexTx = (*memTx)(nil)

// WordMatches intersects the commits of each term's words and yields
// them newest first, each time the bound of those after it. In an Update
// that has written commits it reports no index: the index follows them
// only as the Update ends.
func (t *memTx) WordMatches(terms []WordTerm, fn func(h dag.Hash, bound time.Time) (bool, error)) (bool, error) {
	if err := t.check(false); err != nil {
		return false, err
	}
	if t.writable && (len(t.commits.set) > 0 || len(t.commits.del) > 0) || len(terms) == 0 {
		return false, nil
	}
	var hits map[dag.Hash]struct{}
	for i, term := range terms {
		matched := make(map[dag.Hash]struct{})
		for word, set := range t.m.words.postings {
			if word == term.Word || term.Prefix && strings.HasPrefix(word, term.Word) {
				for h := range set {
					if _, ok := hits[h]; i == 0 || ok {
						matched[h] = struct{}{}
					}
				}
			}
		}
		hits = matched
	}
	type hit struct {
		h dag.Hash
		t time.Time
	}
	out := make([]hit, 0, len(hits))
	for h := range hits {
		c, err := dag.Decode(t.m.commits[h])
		if err != nil {
			continue
		}
		out = append(out, hit{h, c.Time})
	}
	slices.SortFunc(out, func(a, b hit) int {
		if c := b.t.Compare(a.t); c != 0 {
			return c
		}
		return bytes.Compare(a.h[:], b.h[:])
	})
	for _, x := range out {
		if more, err := fn(x.h, x.t); err != nil || !more {
			return true, err
		}
	}
	return true, nil
}
