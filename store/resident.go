package store

import (
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A long read (a walk of every commit, fsck, gc, compact) touches every
// page of the file through bbolt's memory map, and each page it touched
// counts in the process's resident memory until the map is dropped, though
// the kernel keeps the file's pages in its cache either way: a walk of a
// 500 MiB file would hold 500 MiB. residency counts what sequential reads
// (a cursor over a whole bucket) have touched since the map's pages were
// last released, and releases them (dropMapped) once that passes
// releaseEvery: the process then holds about that much of what they read,
// whatever the file's size. A page read again afterwards comes back from
// the kernel's cache.
//
// Lookups do not count: they land on pages at random (keys are hashes),
// and a page released under them is mapped again at the next lookup that
// lands there. At a million commits, releasing under log --all's lookups
// of every text took 2.8 times the CPU time (a page fault per lookup).
type residency struct {
	touched atomic.Int64
}

// releaseEvery is how much a read may touch (by touched's estimate)
// before the map's pages are released: a release walks the map's page
// table, and a read of a whole file releases a few times per 8 MiB of
// values (fsck at a million commits spent about 0.3 s more system time).
const releaseEvery = 8 << 20

// add counts n bytes read in tx, and releases the pages of tx's map
// once releaseEvery bytes were read since the last release. r may be nil.
func (r *residency) add(tx *bolt.Tx, n int) {
	if r == nil || r.touched.Add(int64(n)) < releaseEvery {
		return
	}
	r.touched.Store(0)
	dropMapped(tx)
}

// whileReleasing runs fn, releasing the pages of tx's map every
// releaseTick while it runs: for reads that cannot count what they touch
// (bbolt's own check of every page). The releases end before it returns,
// while tx is still open.
func whileReleasing(tx *bolt.Tx, fn func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(releaseTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				dropMapped(tx)
			}
		}
	}()
	defer func() {
		close(done)
		wg.Wait()
	}()
	fn()
}

// releaseTick is how often whileReleasing releases: a read from the
// kernel's cache touches some tens of megabytes in that time.
const releaseTick = 20 * time.Millisecond
