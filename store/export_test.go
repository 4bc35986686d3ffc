package store

// WithoutJournal makes b's transactions write to the buckets directly, as
// before the journal, for tests that plant damage in those buckets.
func WithoutJournal(b *Bolt) { b.journal.recordBytes = 0 }
