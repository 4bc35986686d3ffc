package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
)

// Problem is one inconsistency Fsck found.
type Problem struct {
	// Object names what is wrong: "commit 1a2b3c4d", "ref refs/heads/main", "file".
	Object string `json:"object"`
	// Message says what is wrong with it.
	Message string `json:"message"`
}

// String returns the Problem as users see it.
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
	UnfinishedImports int `json:"unfinished_imports"`
	// SalvageBoundaries counts the commits whose parent was lost before
	// the repository was salvaged (see SalvageRecord): the roots of the
	// chains that survived. LostTexts counts the commits whose text was.
	// Neither is a problem: the salvage reported those losses.
	SalvageBoundaries int `json:"salvage_boundaries"`
	LostTexts         int `json:"lost_texts"`
	// WordIndex is the state of the word index (a file's: see bolt_words.go; another store's: WordIndexChecker):
	// WordIndexOK, WordIndexAbsent, WordIndexRebuilt or WordIndexWrong;
	// empty for a store without one, or a check that damage stopped.
	// WordIndexProblem says what was wrong with one rebuilt or wrong.
	WordIndex        string    `json:"word_index,omitempty"`
	WordIndexProblem string    `json:"word_index_problem"`
	Problems         []Problem `json:"problems"`
}

// newFsckReport returns an empty report: no problems, an empty list.
func newFsckReport() *FsckReport { return &FsckReport{Problems: []Problem{}} }

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
// A repository Salvage made counts the parents and texts its salvage
// record lists as lost (FsckReport.SalvageBoundaries, LostTexts) instead
// of reporting them. When damage stops the reads through bbolt, Fsck
// reads the rest of the file without it, as FsckFile does.
//
// On a bbolt store Fsck is an exclusive operation: it holds the file's
// write lock from start to end, so that what it checks is one state of the
// file. A file this process may only read is checked under a shared lock,
// without bbolt's page check (see checkBoltPages).
//
// A store that keeps a word index Fsck checks (the bbolt file, a
// WordIndexChecker) has it compared with its commits, and rebuilt when it
// does not match them and nothing else is wrong (FsckReport.WordIndex).
//
// ctx bounds the waits for the file's lock or the server's replies.
func Fsck(ctx context.Context, s Store, opts ...FsckOption) (*FsckReport, error) {
	var cfg fsckConfig
	for _, o := range opts {
		o(&cfg)
	}
	p := progress.Start(cfg.progress, 0)
	defer p.Stop()
	b, ok := s.(*Bolt)
	if !ok {
		r := newFsckReport()
		ok, err := checkStore(func(fn func(Tx) error) error { return s.View(ctx, fn) }, r, p)
		if err == nil && ok {
			err = fsckWordIndex(ctx, s, r)
		}
		return r, err
	}
	var r *FsckReport
	rebuilt := false
	run := func(pages bool) func(db *bolt.DB) error {
		return func(db *bolt.DB) (err error) {
			r = newFsckReport()
			metaOK := checkMetaPages(b.path, db.Info().PageSize, r)
			structureOK := walkBolt(b.path, db, r)
			ok, err := checkStore(func(fn func(Tx) error) error { return b.view(db, nil, fn) }, r, p)
			if err != nil {
				return err
			}
			if !ok {
				// Damage stopped the reads through bbolt: read on past
				// it, as FsckFile does a file bbolt cannot open.
				readPast(b.path, r)
			}
			if err := b.view(db, nil, func(tx Tx) error {
				checkJournal(tx.(*boltTx), r)
				if structureOK {
					checkPackFilters(tx.(*boltTx), r)
				}
				return nil
			}); errors.Is(err, ErrCorrupt) {
				// Damage the checks above reported already (a root page
				// gone, say) stops this read too.
				if ok && structureOK {
					r.add("file", "%v", err)
				}
			} else if err != nil {
				return err
			}
			if pages && metaOK && structureOK && ok {
				checkBoltPages(db, r)
			}
			if structureOK && ok {
				var err error
				if rebuilt, err = b.fsckWords(db, r, pages); err != nil {
					return err
				}
			}
			if pages {
				sortProblems(r) // the mark counts the problems as the report does
				recordDamage(db, r, time.Now())
			}
			return nil
		}
	}
	err := ErrReadOnly
	if !b.readOnly {
		err = b.Exclusive(ctx, run(true))
	}
	switch {
	case errors.Is(err, ErrReadOnly):
		err = b.Shared(ctx, run(false))
	case errors.Is(err, ErrNotRepository):
		// bbolt could not open the file for writing (a damaged free list,
		// a truncated file): check what can still be read.
		openErr := err
		if err = b.Shared(ctx, run(false)); r != nil {
			r.add("file", "%s cannot be opened for writing: %s", b.path, openFailure(openErr))
		}
	}
	if r != nil {
		sortProblems(r)
	}
	if err == nil && rebuilt {
		// The index replaced may hold words of texts erased since.
		err = b.completeErasure()
	}
	return r, err
}

// fsckWords checks the word index of db against its commits (see
// checkWords) and, when it is wrong and nothing else is, rebuilds it if
// rebuild is set (Fsck holds the file for writing). It reports whether it
// rebuilt the index.
func (b *Bolt) fsckWords(db *bolt.DB, r *FsckReport, rebuild bool) (rebuilt bool, err error) {
	var problem string
	present := false
	err = b.view(db, nil, func(tx Tx) error {
		problem, present = checkWords(tx.(*boltTx))
		return nil
	})
	switch {
	case errors.Is(err, ErrCorrupt):
		r.add("word index", "%v", err)
		return false, nil
	case err != nil:
		return false, err
	case !present:
		r.WordIndex = WordIndexAbsent
		return false, nil
	case problem == "":
		r.WordIndex = WordIndexOK
		return false, nil
	}
	r.WordIndexProblem = problem
	switch {
	case len(r.Problems) > 0:
		// Damage elsewhere: the index may well be right about what
		// the file held; a salvage builds a new one.
		r.WordIndex = WordIndexWrong
		return false, nil
	case !rebuild:
		r.WordIndex = WordIndexWrong
		r.add("word index", "%s (a check with write access rebuilds it)", problem)
		return false, nil
	}
	err = b.update0(db, func(t *boltTx) error { return t.rebuildWords() })
	if err != nil {
		return false, fmt.Errorf("rebuild the word index: %w", err)
	}
	r.WordIndex = WordIndexRebuilt
	return true, nil
}

// update0 runs fn in a write transaction of db, which the caller holds
// alone (see Exclusive), outside the journal and the write groups: for
// fsck's repairs. A transaction that erased records the erasure; the
// caller completes it.
func (b *Bolt) update0(db *bolt.DB, fn func(t *boltTx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer b.guard(&err)
	return db.Update(func(tx *bolt.Tx) error {
		t := b.tx(tx, nil)
		if err := fn(t); err != nil {
			return err
		}
		if t.erased {
			return markErasure(tx)
		}
		return nil
	})
}

// FsckOption configures Fsck.
type FsckOption func(*fsckConfig)

type fsckConfig struct {
	progress func(done, total int64)
}

// FsckProgress reports the objects (blobs and commits) checked so far to
// fn, about ten times a second from another goroutine, and once more at
// the end with done equal to total; the total is 0 (not known) before
// that. The calls are never concurrent, and the check never waits for
// them.
func FsckProgress(fn func(done, total int64)) FsckOption {
	return func(c *fsckConfig) { c.progress = fn }
}

// sortProblems orders r's problems by the object they are about, each
// said once.
func sortProblems(r *FsckReport) {
	sort.SliceStable(r.Problems, func(i, j int) bool { return r.Problems[i].Object < r.Problems[j].Object })
	r.Problems = slices.Compact(r.Problems)
}

// readPast counts and checks what the file at path holds by reading its
// pages without bbolt (see fsckRaw), for a file on whose damage the
// reads through bbolt stopped: the counts become what the raw read found.
func readPast(path string, r *FsckReport) {
	f, err := os.Open(path)
	if err != nil {
		r.add("file", "cannot be read past the damage: %v", err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		r.add("file", "cannot be read past the damage: %v", err)
		return
	}
	fsckRaw(f, st.Size(), r)
}

// checkStore checks objects and refs in one read transaction run by view.
// ok is false when damaged data stopped the check.
func checkStore(view func(func(Tx) error) error, r *FsckReport, p *progress.Counter) (ok bool, err error) {
	ok = true
	err = view(func(tx Tx) error {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				ok = false
				r.add("file", "reading stopped on damaged data: %s", damage(p))
			}
		}()
		g := checkObjects(tx, r, p)
		checkRefs(tx, r)
		checkCounters(tx, g, r)
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
			r.add("file", "page walk stopped on damaged data: %s", damage(p))
		}
	}()
	var sink byte
	var res residency // the walk touches every page: keep few resident
	var walk func(tx *bolt.Tx, bk *bolt.Bucket)
	walk = func(tx *bolt.Tx, bk *bolt.Bucket) {
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			res.add(tx, len(k)+len(v))
			if len(k) > 0 {
				sink ^= k[0] ^ k[len(k)-1]
			}
			switch {
			case v == nil:
				if child := bk.Bucket(k); child != nil {
					walk(tx, child)
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
			walk(tx, bk)
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
			r.add("file", "page structure check stopped on damaged data: %s", damage(p))
		}
	}()
	_ = db.View(func(tx *bolt.Tx) error {
		whileReleasing(tx, func() { checkTx(tx, r) })
		return nil
	})
}

// checkTx runs bbolt's check of every page in tx.
func checkTx(tx *bolt.Tx, r *FsckReport) {
	for err := range tx.Check() {
		// bbolt's check reports a panic it recovered as an error
		// "panic: assertion failed: …": say what it found instead.
		if msg, ok := strings.CutPrefix(err.Error(), "panic: "); ok {
			r.add("file", "page structure check stopped on damaged data: %s", rephraseAssertion(msg))
			continue
		}
		r.add("file", "page structure: %v", err)
	}
}

// checkObjects re-hashes every blob and commit and checks that every
// commit's parents and blob exist. It returns the graph of the commits
// that decode, for checkCounters.
func checkObjects(tx Tx, r *FsckReport, p *progress.Counter) *dag.Graph {
	g := &dag.Graph{}
	n := 0
	if err := tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }); err == nil {
		g.Grow(n) // the arrays made once, at their size
	}
	if err := tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
		r.Commits++
		p.Add(1)
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
		if err := g.Add(h, raw); err != nil {
			r.add(obj, "%v", err)
		}
		return nil
	}); err != nil {
		r.add("commits", "cannot iterate: %v", err)
	}
	g.Link()
	// A parent or text the salvage record lists was lost before this
	// repository was salvaged out of a damaged file: that is where its
	// history starts, not damage.
	lost := lostOf(tx)
	for _, m := range g.Missing() {
		if lost.commit(m.Parent) {
			r.SalvageBoundaries++
			continue
		}
		r.add("commit "+m.Commit.Short(), "parent %s is missing", m.Parent.Short())
	}
	// The blobs, in key order, against the commits ordered by the blob
	// they name: a position per commit (4 bytes) instead of a list of
	// every blob's hash.
	byBlob := make([]int32, g.Len())
	for i := range byBlob {
		byBlob[i] = int32(i)
	}
	slices.SortFunc(byBlob, func(a, b int32) int { return hashCompare(g.Blob(int(a)), g.Blob(int(b))) })
	missing := func(i int32) {
		b := g.Blob(int(i))
		if lost.blob(b) {
			r.LostTexts++
			return
		}
		r.add("commit "+g.Hash(int(i)).Short(), "blob %s is missing", b.Short())
	}
	next := byBlob
	if err := tx.ForEachBlob(func(h dag.Hash, data []byte) error {
		r.Blobs++
		p.Add(1)
		if got := dag.Sum(data); got != h {
			r.add("blob "+h.Short(), "content hashes to %s, not to its key", got.Short())
		}
		for len(next) > 0 && hashCompare(g.Blob(int(next[0])), h) < 0 {
			missing(next[0])
			next = next[1:]
		}
		for len(next) > 0 && g.Blob(int(next[0])) == h {
			next = next[1:]
		}
		return nil
	}); err != nil {
		r.add("blobs", "cannot iterate: %v", err)
	}
	for _, i := range next {
		missing(i)
	}
	if sr, ok := tx.(SalvageRecorder); ok {
		if _, err := sr.SalvageRecord(); err != nil {
			r.add("salvage record", "%v", err)
		}
	}
	return g
}

// fsckChunk is how many commits' texts checkCounters reads per call.
const fsckChunk = 1024

// checkCounters recomputes the counters of every commit that has an entry
// in the derived index from its first-parent chain, and reports entries that
// differ and entries whose commit is missing. A missing entry is not a
// problem: entries are added as commits become tips.
func checkCounters(tx Tx, g *dag.Graph, r *FsckReport) {
	memo := make([]Counters, g.Len())
	done := make([]bool, g.Len())
	// A commit whose first parent a salvage lost counts from itself, as
	// CountersOf counts it.
	lost, boundary := lostOf(tx), map[int]bool{}
	for _, m := range g.Missing() {
		if i, ok := g.Index(m.Commit); ok && lost.commit(m.Parent) {
			if c, err := tx.CommitHeader(m.Commit); err == nil && c.Parent == m.Parent {
				boundary[i] = true
			}
		}
	}
	// compute returns what commit i's chain adds up to; false when the
	// chain is broken (reported by checkObjects).
	compute := func(i int) (Counters, bool) {
		var todo []int
		var c Counters
		for cur := i; ; {
			if done[cur] {
				c = memo[cur]
				break
			}
			todo = append(todo, cur)
			p, ok := g.FirstParent(cur)
			if !ok {
				if !g.Root(cur) && !boundary[cur] {
					return Counters{}, false
				}
				break
			}
			cur = p
		}
		// Oldest first, reading the texts of a chunk of commits in one
		// call (ReadBlobs).
		for end := len(todo); end > 0; end -= fsckChunk {
			chunk := todo[max(end-fsckChunk, 0):end]
			var blobs []dag.Hash
			for _, at := range chunk {
				if g.Kind(at).Compiled() {
					blobs = append(blobs, g.Blob(at))
				}
			}
			texts, err := ReadBlobs(tx, blobs)
			if err != nil {
				return Counters{}, false
			}
			for k := len(chunk) - 1; k >= 0; k-- {
				at := chunk[k]
				var text []byte
				if g.Kind(at).Compiled() {
					if text, texts = texts[len(texts)-1], texts[:len(texts)-1]; text == nil {
						if !lost.blob(g.Blob(at)) {
							return Counters{}, false // reported by checkObjects
						}
						text = []byte(LostText(g.Blob(at)))
					}
				}
				c = c.Next(g.Kind(at), text)
				memo[at], done[at] = c, true
			}
		}
		return c, true
	}
	err := tx.ForEachCounters(func(h dag.Hash, stored Counters) error {
		r.Counters++
		obj := "counters " + h.Short()
		i, ok := g.Index(h)
		if !ok {
			r.add(obj, "entry of a commit that is not stored")
			return nil
		}
		if want, ok := compute(i); ok && want != stored {
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
				if h.IsZero() {
					continue // a ref's creation or deletion: no commit to look up
				}
				if ok, _ := tx.HasCommit(h); !ok {
					r.add("reflog "+name, "entry %d (%s) refers to missing commit %s", i+1, e.Action, h.Short())
				}
			}
		}
	}
}

// checkJournal reports the journal's records that do not decode: reads
// pass over them, so what they held is missing (Salvage says what).
func checkJournal(t *boltTx, r *FsckReport) {
	v := t.journal()
	if v.idx == nil {
		return
	}
	for _, name := range v.idx.bad {
		r.add(name, "does not decode: its objects and reflog entries cannot be read")
	}
}

// checkPackFilters reports a published pack's filter that does not decode
// (lookups then search the pack for every key, as if it had none) or that
// leaves out a key the pack holds (lookups would pass over that object):
// compact rewrites the file without either.
func checkPackFilters(t *boltTx, r *FsckReport) {
	_ = t.eachPublishedPack(func(id uint64, _ PackInfo, _ error) error {
		pb := t.tx.Bucket(bucketPacks).Bucket(packKey(id))
		if pb == nil || pb.Get(keyPackFilter) == nil {
			return nil // a bad key or info is reported with the packs
		}
		name := fmt.Sprintf("pack %d", id)
		f, err := decodePackFilter(pb.Get(keyPackFilter))
		if err != nil {
			r.add(name, "filter: %v", err)
			return nil
		}
		for _, bucket := range [][]byte{bucketBlobs, bucketCommits} {
			b := pb.Bucket(bucket)
			if b == nil {
				continue
			}
			c := b.Cursor()
			for key, _ := c.First(); key != nil; key, _ = c.Next() {
				if !f.mayHave(key) {
					r.add(name, "filter leaves out %s key %x: lookups pass over it until the file is compacted", bucket, key)
					return nil
				}
			}
		}
		return nil
	})
}
