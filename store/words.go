package store

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/words"
)

// WordTerm is one term of a word search: a word as words.Spans makes
// them (lower-case letters and digits), or, with Prefix, the start of
// the words it matches.
type WordTerm struct {
	Word   string
	Prefix bool
}

// WordIndexTx is implemented by transactions of stores that keep a word
// index: for every commit, the words of its text and of its diagnosis
// (see CommitWords), kept in the transaction that writes the commit and
// dropped in the one that deletes it.
type WordIndexTx interface {
	// WordMatches calls fn with the hash of each commit whose words hold
	// every term (at least one word matching each), in the index's order:
	// roughly newest first, and bound is no earlier than the time of that
	// commit and of every commit fn is called with after it. A commit may
	// come more than once. fn returns false to stop. ok is false when
	// the store holds no index (a file not yet upgraded): the caller
	// reads the commits instead.
	WordMatches(terms []WordTerm, fn func(h dag.Hash, bound time.Time) (more bool, err error)) (ok bool, err error)
}

// diagnosisKey is the metadata key of a failed attempt's diagnosis
// (record.KeyDiagnosis, which package store does not import; a test of
// package search holds them equal), quoted as JSON writes it: metadata
// without it has no diagnosis, and need not be decoded.
var diagnosisKey = []byte(`"diagnosis"`)

// CommitWords returns the words of commit c, whose text is text: the
// distinct words of its text and of its diagnosis (the string under
// record.KeyDiagnosis in its metadata), sorted. These are what the word
// index holds for c, and what a word search matches.
func CommitWords(c *dag.Commit, text string) []string {
	if d := diagnosisOf(c); d != "" {
		return words.Set(text, d)
	}
	return words.Set(text)
}

// diagnosisOf returns the diagnosis of commit c ("" for none).
func diagnosisOf(c *dag.Commit) string {
	if len(c.Meta) == 0 || !bytes.Contains(c.Meta, diagnosisKey) {
		return ""
	}
	var m map[string]json.RawMessage // a key's exact spelling, as record.Field reads it
	var d string
	if json.Unmarshal(c.Meta, &m) != nil || json.Unmarshal(m["diagnosis"], &d) != nil {
		return ""
	}
	return d
}

// termMatches reports whether the sorted, distinct ws hold a word that t
// matches.
func termMatches(t WordTerm, ws []string) bool {
	i, found := searchStrings(ws, t.Word)
	if found {
		return true
	}
	return t.Prefix && i < len(ws) && len(ws[i]) >= len(t.Word) && ws[i][:len(t.Word)] == t.Word
}

// searchStrings is slices.BinarySearch for strings.
func searchStrings(ws []string, w string) (int, bool) {
	lo, hi := 0, len(ws)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ws[m] < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ws) && ws[lo] == w
}
