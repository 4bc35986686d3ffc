package store

import "context"

// WithoutJournal makes b's transactions write to the buckets directly, as
// before the journal, for tests that plant damage in those buckets.
func WithoutJournal(b *Bolt) { b.journal.recordBytes = 0 }

// SetJournalPolicy bounds b's journal to records records and bytes bytes,
// and a transaction's record to recordBytes; a checkpoint keeps up to a
// quarter of bytes of reflog entries in the journal, as the default
// policy does.
func SetJournalPolicy(b *Bolt, records, bytes, recordBytes int) {
	b.journal = journalPolicy{records: records, bytes: bytes, recordBytes: recordBytes, carryBytes: bytes / 4}
}

// JournalReflogEntries returns how many reflog entries b's journal holds.
func JournalReflogEntries(b *Bolt) (n int, err error) {
	err = b.View(context.Background(), func(tx Tx) error {
		v := tx.(*boltTx).journal()
		for _, name := range v.reflogNames() {
			n += len(v.reflog(name))
		}
		return nil
	})
	return n, err
}

// SetWordsPolicy makes b's word index merge its pending documents once
// merge are pending, a transaction of more than direct new commits merge
// them at once, and the recent posting blocks move into the main ones
// once they hold recent documents.
func SetWordsPolicy(b *Bolt, merge uint64, direct int, recent uint64) {
	b.words = wordsPolicy{merge: merge, direct: direct, recent: recent, step: b.words.step, stepPostings: b.words.stepPostings}
}

// SetRecentStep makes each write transaction of b move the recent
// posting blocks of step words, and of about postings postings at most,
// into the main ones while a move is under way.
func SetRecentStep(b *Bolt, step, postings int) { b.words.step, b.words.stepPostings = step, postings }

// MovingRecent reports whether b's file has a move of the recent posting
// blocks into the main ones under way.
func MovingRecent(b *Bolt) (moving bool, err error) {
	err = b.View(context.Background(), func(tx Tx) error {
		if w := tx.(*boltTx).tx.Bucket(bucketWords); w != nil {
			moving = w.Get(keyWordsMoving) != nil
		}
		return nil
	})
	return moving, err
}

// PostingIDs decodes a posting block of the word index that starts at
// first.
func PostingIDs(first uint64, val []byte) ([]uint64, error) {
	var ids []uint64
	err := eachPosting(first, val, func(id uint64) { ids = append(ids, id) })
	return ids, err
}
