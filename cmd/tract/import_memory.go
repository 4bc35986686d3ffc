package main

import (
	"context"
	"runtime/debug"

	"github.com/tractdag/tract"
)

// importBatchBytes is how much text 'tract import' into a repository
// file without commits (see boundedImport) holds in memory before it
// sorts it into its runs, and about how
// much each transaction of its pack writes (see tract.ImportBatch): a
// quarter of the library's default. At 100,000 messages of about 300
// bytes (go run ./bench -generate) the live heap stays at about 6 MB,
// in the same time (about 60 transactions instead of 15).
const importBatchBytes = 768 << 10

// importMemoryLimit is the soft memory limit of a process whose import
// finds its memory bounded (see importMemory): a little over twice what
// an import with importBatchBytes holds live, whatever the size of its
// input.
const importMemoryLimit = 16 << 20

// importMemory sets the memory limit of a process that imports into a
// repository file to importMemoryLimit, once the import finds its memory
// bounded (tract.ImportBounded: a repository without commits, whose word
// index the import builds beside its pack). The collector then runs
// before the heap doubles what is live (Go's default, GOGC=100) and hands
// the memory it frees back at once: at 100,000 messages the process
// peaked at 37-43 MB resident without the limit and 29-31 MB with it,
// for about 3% more CPU time (see "Memory of an import" in
// docs/performance.md). An import into a repository with commits merges
// the index of its commits into the file's in the transaction that
// publishes them, which holds tens of MB at 100,000 (more at a
// million): under this limit the collector runs all through it, so it
// gets no limit. A message larger than the limit makes the
// collector run more often while it is held, in at most about half the
// CPU time (the runtime bounds it). A GOGC or GOMEMLIMIT in the
// environment is the user's choice, and is left to the runtime.
func importMemory(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(importMemoryLimit)
}

// boundedImport reports whether an import into t should be one in
// bounded memory, in batches of importBatchBytes: t is a repository file
// and no branch has commits (its word index, likely empty, is then built
// beside the import's pack: see tract.ImportBounded, which has the last
// word). An import into a repository with commits merges the index of
// its commits into the file's as it publishes them, whatever its
// batches, and keeps the library's: with the small ones and the limit
// it peaked at 44 MiB instead of 61-66 at 100,000, still growing with
// the input, for 8% more time.
func boundedImport(ctx context.Context, t *tract.Tract) (bool, error) {
	if tract.IsDatabaseURL(t.Path()) {
		return false, nil
	}
	branches, err := t.Branches(ctx)
	if err != nil {
		return false, err
	}
	for _, b := range branches {
		if !b.Hash.IsZero() {
			return false, nil
		}
	}
	return true, nil
}
