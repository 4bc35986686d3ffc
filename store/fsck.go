package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// Problem is one inconsistency Fsck found.
type Problem struct {
	// Object names what is wrong: "commit 1a2b3c4d", "ref refs/heads/main", "file".
	Object string `json:"object"`
	// Message says what is wrong with it.
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Object + ": " + p.Message }

// FsckReport is the result of Fsck.
type FsckReport struct {
	Commits       int `json:"commits"`
	Blobs         int `json:"blobs"`
	Refs          int `json:"refs"`
	ReflogEntries int `json:"reflog_entries"`
	// Counters is the number of derived-index entries checked.
	Counters int `json:"counters"`
	// Packs is the number of published packs the objects are spread over
	// besides the main buckets (Compact merges them).
	Packs int `json:"packs"`
	// UnfinishedImports is the number of unpublished packs: imports
	// running now, or killed before they finished (GC drops those). They
	// are not problems.
	UnfinishedImports int       `json:"unfinished_imports"`
	Problems          []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *FsckReport) OK() bool { return len(r.Problems) == 0 }

func (r *FsckReport) add(object, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Object: object, Message: fmt.Sprintf(format, args...)})
}

// Fsck re-derives the hash of every blob and commit, decodes every commit,
// ref and reflog entry, and checks that every parent, blob and ref target
// exists. For a bbolt store it also checks the file's length and page
// structure. It reports what it finds instead of stopping at the first
// problem, and turns panics and memory faults from a damaged file into
// problems. The error is non-nil only when the store cannot be read at all.
//
// On a bbolt store Fsck is an exclusive operation: it holds the file's
// write lock from start to end, so that what it checks is one state of the
// file. A file this process may only read is checked under a shared lock,
// without bbolt's page check (see checkBoltPages).
func Fsck(s Store) (*FsckReport, error) {
	b, ok := s.(*Bolt)
	if !ok {
		r := &FsckReport{}
		_, err := checkStore(s.View, r)
		return r, err
	}
	var r *FsckReport
	run := func(pages bool) func(db *bolt.DB) error {
		return func(db *bolt.DB) (err error) {
			r = &FsckReport{}
			structureOK := walkBolt(b.path, db, r)
			ok, err := checkStore(func(fn func(Tx) error) error { return b.view(db, fn) }, r)
			if err != nil {
				return err
			}
			if pages && structureOK && ok {
				checkBoltPages(db, r)
			}
			return nil
		}
	}
	err := ErrReadOnly
	if !b.readOnly {
		err = b.Exclusive(run(true))
	}
	switch {
	case errors.Is(err, ErrReadOnly):
		err = b.Shared(run(false))
	case errors.Is(err, ErrNotRepository):
		// bbolt could not open the file for writing (a damaged free list,
		// a truncated file): check what can still be read.
		openErr := err
		if err = b.Shared(run(false)); r != nil {
			r.add("file", "cannot be opened for writing: %v", openErr)
		}
	}
	if r != nil {
		sort.SliceStable(r.Problems, func(i, j int) bool { return r.Problems[i].Object < r.Problems[j].Object })
	}
	return r, err
}

// checkStore checks objects and refs in one read transaction run by view.
// ok is false when damaged data stopped the check.
func checkStore(view func(func(Tx) error) error, r *FsckReport) (ok bool, err error) {
	ok = true
	err = view(func(tx Tx) error {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				ok = false
				r.add("file", "reading stopped on damaged data: %v", p)
			}
		}()
		checkObjects(tx, r)
		checkRefs(tx, r)
		checkCounters(tx, r)
		if p, ok := tx.(PackTx); ok {
			var err error
			if r.Packs, err = p.PublishedPacks(); err != nil {
				r.add("packs", "%v", err)
			}
			infos, err := p.UnpublishedPacks()
			if err != nil {
				r.add("packs", "unpublished: %v", err)
			}
			r.UnfinishedImports = len(infos)
		}
		return nil
	})
	if errors.Is(err, ErrCorrupt) {
		r.add("file", "%v", err)
		return false, nil
	}
	return ok, err
}

// walkBolt checks that the file is as long as its metadata says and visits
// every bucket, key and value through bbolt's cursors, touching the first
// and last byte of each, in this goroutine where memory faults and bbolt's
// assertion panics are recovered. It reports whether the walk got through:
// only then may checkBoltPages run bbolt's own check, which reads the same
// pages in a goroutine of its own, where a fault would crash the process.
func walkBolt(path string, db *bolt.DB, r *FsckReport) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			ok = false
			r.add("file", "page walk stopped on damaged data: %v", p)
		}
	}()
	var sink byte
	var walk func(bk *bolt.Bucket)
	walk = func(bk *bolt.Bucket) {
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) > 0 {
				sink ^= k[0] ^ k[len(k)-1]
			}
			switch {
			case v == nil:
				if child := bk.Bucket(k); child != nil {
					walk(child)
				}
			case len(v) > 0:
				sink ^= v[0] ^ v[len(v)-1]
			}
		}
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if st, err := os.Stat(path); err == nil && st.Size() < tx.Size() {
			r.add("file", "is truncated: %d bytes, but its pages reach %d bytes", st.Size(), tx.Size())
			return nil
		}
		_ = tx.ForEach(func(_ []byte, bk *bolt.Bucket) error {
			walk(bk)
			return nil
		})
		ok = true
		return nil
	})
	_ = sink
	return ok
}

// checkBoltPages runs bbolt's page-structure check (pages freed twice,
// reachable pages on the free list, leaked pages, key order). It must only
// run after walkBolt got through: bbolt checks in a goroutine of its own,
// where a memory fault could not be recovered. It needs a writable
// session: a read-only one has not loaded its free list, and loading it
// would happen in that goroutine too.
func checkBoltPages(db *bolt.DB, r *FsckReport) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			r.add("file", "page structure check stopped on damaged data: %v", p)
		}
	}()
	_ = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			r.add("file", "page structure: %v", err)
		}
		return nil
	})
}

func checkObjects(tx Tx, r *FsckReport) {
	blobs := make(map[dag.Hash]bool)
	if err := tx.ForEachBlob(func(h dag.Hash, data []byte) error {
		r.Blobs++
		blobs[h] = true
		if got := dag.Sum(data); got != h {
			r.add("blob "+h.Short(), "content hashes to %s, not to its key", got.Short())
		}
		return nil
	}); err != nil {
		r.add("blobs", "cannot iterate: %v", err)
	}
	commits := make(map[dag.Hash]*dag.Commit)
	if err := tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
		r.Commits++
		obj := "commit " + h.Short()
		if got := dag.Sum(raw); got != h {
			r.add(obj, "encoding hashes to %s, not to its key", got.Short())
		}
		c, err := dag.Decode(raw)
		if err != nil {
			r.add(obj, "%v", err)
			return nil
		}
		if err := c.Verify(); err != nil {
			r.add(obj, "%v", err)
		}
		if enc, err := dag.Encode(c); err == nil && !bytes.Equal(enc, raw) {
			r.add(obj, "encoding is not canonical")
		}
		commits[h] = c
		return nil
	}); err != nil {
		r.add("commits", "cannot iterate: %v", err)
	}
	for h, c := range commits {
		obj := "commit " + h.Short()
		for _, p := range c.Parents {
			if _, ok := commits[p]; !ok {
				r.add(obj, "parent %s is missing", p.Short())
			}
		}
		if !blobs[c.Blob] {
			r.add(obj, "blob %s is missing", c.Blob.Short())
		}
	}
}

// checkCounters recomputes the counters of every commit that has an entry
// in the derived index from its first-parent chain, and reports entries that
// differ and entries whose commit is missing. A missing entry is not a
// problem: entries are added as commits become tips.
func checkCounters(tx Tx, r *FsckReport) {
	headers := make(map[dag.Hash]dag.Header)
	_ = tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
		if hd, err := dag.DecodeHeader(raw); err == nil {
			headers[h] = hd
		}
		return nil
	})
	memo := make(map[dag.Hash]Counters)
	// compute returns what h's chain adds up to; false when the chain is
	// broken (reported by checkObjects).
	compute := func(h dag.Hash) (Counters, bool) {
		var todo []dag.Hash
		var c Counters
		for cur := h; !cur.IsZero(); {
			if m, ok := memo[cur]; ok {
				c = m
				break
			}
			hd, ok := headers[cur]
			if !ok {
				return Counters{}, false
			}
			todo = append(todo, cur)
			cur = hd.Parent
		}
		for i := len(todo) - 1; i >= 0; i-- {
			hd := headers[todo[i]]
			var text []byte
			if hd.Kind.Compiled() {
				var err error
				if text, err = tx.Blob(hd.Blob); err != nil {
					return Counters{}, false
				}
			}
			c = c.Next(hd.Kind, text)
			memo[todo[i]] = c
		}
		return c, true
	}
	err := tx.ForEachCounters(func(h dag.Hash, stored Counters) error {
		r.Counters++
		obj := "counters " + h.Short()
		if _, ok := headers[h]; !ok {
			r.add(obj, "entry of a commit that is not stored")
			return nil
		}
		if want, ok := compute(h); ok && want != stored {
			r.add(obj, "stored depth %d, %d messages, %d tokens; the chain adds up to depth %d, %d messages, %d tokens",
				stored.Depth, stored.Messages, stored.Tokens, want.Depth, want.Messages, want.Tokens)
		}
		return nil
	})
	if err != nil {
		r.add("derived", "cannot read the index: %v", err)
	}
}

func checkRefs(tx Tx, r *FsckReport) {
	all, err := tx.Refs()
	if err != nil {
		r.add("refs", "cannot read: %v", err)
		return
	}
	names := make(map[string]bool, len(all))
	for _, ref := range all {
		names[ref.Name] = true
	}
	for _, ref := range all {
		r.Refs++
		obj := "ref " + ref.Name
		if ref.IsSymbolic() {
			if _, ok := refs.BranchName(ref.Target); !ok {
				r.add(obj, "points at %s, which is not a branch", ref.Target)
			}
			continue
		}
		if ok, _ := tx.HasCommit(ref.Hash); !ok {
			r.add(obj, "points at missing commit %s", ref.Hash.Short())
		}
	}
	if _, err := tx.Ref(refs.HEAD); err != nil {
		r.add("ref HEAD", "is missing")
	}
	logs, err := tx.ReflogNames()
	if err != nil {
		r.add("reflogs", "cannot read: %v", err)
		return
	}
	for _, name := range logs {
		es, err := tx.Reflog(name)
		if err != nil {
			r.add("reflog "+name, "%v", err)
			continue
		}
		for i, e := range es {
			r.ReflogEntries++
			for _, h := range []dag.Hash{e.Old, e.New} {
				if ok, _ := tx.HasCommit(h); !h.IsZero() && !ok {
					r.add("reflog "+name, "entry %d (%s) refers to missing commit %s", i+1, e.Action, h.Short())
				}
			}
		}
	}
}
