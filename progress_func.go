package tract

import "github.com/tractdag/tract/internal/progress"

// Progress reports how far a long operation is: import (messages read),
// Fsck (objects checked), Stats (commits read), GC (commits deleted) and
// Copy (objects copied). An operation given a ProgressFunc through its
// option (ImportProgress, FsckProgress, StatsFilter.Progress, GCProgress,
// CopyProgress; compression reports
// each summary through OnGroup) calls it about ten times a second while
// its count changes, from a goroutine of its own, never with a
// transaction or the file lock held by the caller's goroutine waiting on
// it, and once more when it ends, with Done equal to Total. Calls are
// never concurrent and Done never decreases. The counting costs the
// operation one atomic addition per unit.
type Progress struct {
	// Done is the number of units done so far.
	Done int64 `json:"done"`
	// Total is the number of units in all, 0 while it is not known.
	Total int64 `json:"total"`
	// Unit names what is counted: "messages", "objects" or "commits".
	Unit string `json:"unit"`
}

// ProgressFunc receives the Progress of an operation.
type ProgressFunc func(Progress)

// start returns a counter reporting to fn in unit; nil when fn is nil.
func (fn ProgressFunc) start(unit string, total int64) *progress.Counter {
	if fn == nil {
		return nil
	}
	return progress.Start(fn.report(unit), total)
}

// report adapts fn to the counter's callback.
func (fn ProgressFunc) report(unit string) func(done, total int64) {
	if fn == nil {
		return nil
	}
	return func(done, total int64) { fn(Progress{Done: done, Total: total, Unit: unit}) }
}

// WithFsckProgress reports the objects FsckFile checks to fn, as
// FsckProgress does for Fsck. It is an option of FsckFile, which opens
// the file itself; Open ignores it.
func WithFsckProgress(fn ProgressFunc) Option { return func(c *config) { c.fsckProgress = fn } }

// WithIndexProgress reports to fn the build of the word index of a
// repository file that has none this tract reads: one written by a tract
// older than the index, or than its format, or by a salvage. Reads work
// without it (a search reads every text); the first write transaction
// builds it, from every commit the file holds, before its own work: a
// few seconds at a million commits. fn hears the commits indexed (Unit
// "commits"; Total is 0 until they are counted) as Progress says, the
// last report once that transaction ended (Done equal to Total), and
// nothing when no build happens. A database builds its word index when
// Migrate brings it to the index's schema, and ignores it.
func WithIndexProgress(fn ProgressFunc) Option { return func(c *config) { c.indexProgress = fn } }
