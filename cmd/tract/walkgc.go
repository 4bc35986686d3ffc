package main

import (
	"os"
	"runtime/debug"
)

// walkGCPercent is the collector's target for a command that walks the
// whole history: it collects once the heap has grown by a fifth over
// what was live, rather than doubled (Go's default, GOGC=100).
const walkGCPercent = 20

// collectForWalk sets the collector's target for a whole-history walk
// (log --all, fsck), unless GOGC says otherwise. Such a walk keeps an
// outline of every commit live to the end (about 115 bytes a commit at a
// million), and at the default the heap reached twice that before each
// collection, in a peak of 2.4 times what was live; the outline holds
// no pointers, so the collections it adds cost little (see "Memory of
// whole-history commands" in docs/performance.md).
func collectForWalk() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(walkGCPercent)
	}
}
