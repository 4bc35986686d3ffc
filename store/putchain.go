package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tractdag/tract/dag"
)

// NewCommit is a commit a batch writes (PutChain), hashed already.
type NewCommit struct {
	Hash   dag.Hash
	Commit *dag.Commit
	// Raw is dag.Encode of Commit, when the caller made it (nil: PutChain
	// encodes it).
	Raw []byte
	// Counters are set by PutChain.
	Counters Counters
	// Words, when not nil, are CommitWords of Commit and its blob's
	// text, computed by the caller before the transaction (see
	// WordsAheadOf): a store that indexes words as it writes takes them
	// instead of tokenising the text in its one writer. nil: the store
	// does.
	Words []string
}

// WordsAheadOf sets the Words of commits, a chain of up to
// wordsAheadMax built before its transaction (blobs[i] is commits[i]'s
// text), when s indexes words as it writes (a Bolt file): they are
// tokenised in the caller's goroutine, not in the transaction, which
// holds the file's one writer. A longer chain's words are indexed in
// bulk, a chunk at a time, and another store's need none.
func WordsAheadOf(s Store, commits []NewCommit, blobs []NewBlob) {
	if _, ok := s.(*Bolt); !ok || len(commits) > wordsAheadMax || len(blobs) != len(commits) {
		return
	}
	for i := range commits {
		commits[i].Words = CommitWords(commits[i].Commit, string(blobs[i].Data))
	}
}

// wordsAheadMax is the longest chain WordsAheadOf tokenises: a server's
// calls, a few messages each.
const wordsAheadMax = 16

// wordsTaker is a transaction that takes a commit's words from its
// writer (see NewCommit.Words).
type wordsTaker interface {
	wordsAhead(h dag.Hash, c *dag.Commit, words []string)
}

// NewBlob is a blob a batch writes (PutChain), hashed already.
type NewBlob struct {
	Hash dag.Hash
	Data []byte
}

// PutChain stores commits and blobs in key order, each commit with its
// counters, in tx. bbolt keeps the pages a
// transaction touches in memory until it commits, and inserting random keys
// into them shifts ever longer slices; sorted keys append instead, which
// makes a 100,000-commit import about 100 times faster, and let the store
// fill its pages (SortedPacker), which halves the file.
//
// commits come in chain order (each commit's first parent is stored or
// comes earlier), so their counters are computed on the way and each is
// put right after its commit: the key order the store keeps them in.
func PutChain(tx Tx, now time.Time, commits []NewCommit, blobs []NewBlob) error {
	if err := chainCounters(tx, commits, blobs); err != nil {
		return err
	}
	if pw, ok := tx.(PackWriter); ok && len(commits) >= PackMin {
		return writeChainPack(pw, now, commits, blobs)
	}
	if p, ok := tx.(SortedPacker); ok && len(commits) > 1 {
		p.PackSorted()
	}
	hp, hashed := tx.(HashedPutter) // the batch is hashed already
	slices.SortFunc(blobs, func(a, b NewBlob) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	for i, b := range blobs {
		if i > 0 && b.Hash == blobs[i-1].Hash {
			continue
		}
		var err error
		if hashed {
			err = hp.PutHashedBlob(b.Hash, b.Data)
		} else {
			_, err = tx.PutBlob(b.Data)
		}
		if err != nil {
			return err
		}
	}
	sorted := slices.Clone(commits)
	slices.SortFunc(sorted, func(a, b NewCommit) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	for _, c := range sorted {
		var err error
		if hashed && c.Raw != nil {
			err = hp.PutEncodedCommit(c.Hash, c.Raw)
		} else {
			_, err = tx.PutCommit(c.Commit)
		}
		if err != nil {
			return err
		}
		if err := tx.PutCounters(c.Hash, c.Counters); err != nil {
			return err
		}
		if wt, ok := tx.(wordsTaker); ok && c.Words != nil {
			wt.wordsAhead(c.Hash, c.Commit, c.Words)
		}
	}
	return nil
}

// PackMin is the smallest batch of commits PutChain writes as a pack of
// its own on a store that takes them (PackWriter).
const PackMin = 64

// writeChainPack stores commits (with their counters) and blobs as one pack.
// It does not look for objects stored already: that would cost a lookup
// in every pack per object, and a copy of an object is harmless (readers
// take the first they find; merges and compaction keep one).
func writeChainPack(pw PackWriter, now time.Time, commits []NewCommit, blobs []NewBlob) error {
	entries := make([]PackEntry, 0, len(blobs)+2*len(commits))
	for _, b := range blobs {
		entries = append(entries, PackEntry{Kind: PackBlob, Hash: b.Hash, Value: b.Data})
	}
	for _, c := range commits {
		raw := c.Raw
		if raw == nil {
			var err error
			if raw, err = dag.Encode(c.Commit); err != nil {
				return err
			}
		}
		entries = append(entries,
			PackEntry{Kind: PackCommit, Hash: c.Hash, Value: raw},
			PackEntry{Kind: PackCounters, Hash: c.Hash, Value: c.Counters.Encode()})
	}
	return pw.WritePack(now, SortPackEntries(entries))
}

// chainCounters sets the counters of commits, given in chain order: from
// each one's first parent, the commit before it in the batch (the usual
// case: a chain), another in the batch, or one already stored. blobs holds
// the texts of the batch's new blobs, in the same order as commits.
func chainCounters(tx Tx, commits []NewCommit, blobs []NewBlob) error {
	var index map[dag.Hash]int // of commits, built only if a parent is not the previous one
	for i := range commits {
		hc := &commits[i]
		parent := hc.Commit.Parent()
		var base Counters
		switch {
		case i > 0 && commits[i-1].Hash == parent:
			base = commits[i-1].Counters
		default:
			if index == nil {
				index = make(map[dag.Hash]int, len(commits))
				for j, c := range commits {
					index[c.Hash] = j
				}
			}
			if j, ok := index[parent]; ok && j < i {
				base = commits[j].Counters
			} else {
				var err error
				if base, err = CountersOf(context.Background(), tx, parent, true); err != nil {
					return err
				}
			}
		}
		var text []byte
		if hc.Commit.Kind.Compiled() {
			if i < len(blobs) && blobs[i].Hash == hc.Commit.Blob {
				text = blobs[i].Data
			} else {
				var err error
				if text, err = blobText(tx, blobs, hc.Commit.Blob); err != nil {
					return fmt.Errorf("commit %s: %w", hc.Hash.Short(), err)
				}
			}
		}
		hc.Counters = base.Next(hc.Commit.Kind, text)
	}
	return nil
}

// blobText returns the text of blob h: from the batch's blobs, else as
// stored in tx.
func blobText(tx Tx, blobs []NewBlob, h dag.Hash) ([]byte, error) {
	for _, b := range blobs {
		if b.Hash == h {
			return b.Data, nil
		}
	}
	return tx.Blob(h)
}
