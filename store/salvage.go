package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// SalvageReport says what Salvage copied into the new repository and what
// it could not.
type SalvageReport struct {
	Blobs         int `json:"blobs"`
	Commits       int `json:"commits"`
	Refs          int `json:"refs"`
	ReflogEntries int `json:"reflog_entries"`
	// UnreadablePages counts the pages of the damaged file that could not
	// be read: whatever they held is lost.
	UnreadablePages int `json:"unreadable_pages"`
	// Lost says what was not copied, and why.
	Lost []Problem `json:"lost"`
	// Boundaries are the salvaged commits whose parent was not recovered,
	// oldest first, with that parent: each is now the root of the chain
	// that survived above the loss.
	Boundaries []SalvageBoundary `json:"boundaries"`
	// LostTexts counts the salvaged commits whose text was not recovered.
	LostTexts int `json:"lost_texts"`
	// SalvagedRefs names the refs Salvage made, refs/salvaged/ and the
	// short hash of the tip, for chains that no restored ref reaches.
	SalvagedRefs []string `json:"salvaged_refs"`
}

// salvaged is what survives in a damaged file, as read by scanRaw.
type salvaged struct {
	texts   rawTexts
	blobs   map[dag.Hash]bool
	commits map[dag.Hash]salvagedCommit // the commits that verify
	refs    []refs.Ref
	reflogs map[string][]refs.Entry
	lost    []Problem
	file    *rawFile
}

// salvagedCommit is a commit that verifies: its encoding, and what the
// salvage needs of it, decoded once.
type salvagedCommit struct {
	raw     []byte
	parents []dag.Hash
	blob    dag.Hash
	time    time.Time
}

// addCommit records the commit h, whose encoding raw hashes to h, unless
// it does not decode.
func (s *salvaged) addCommit(h dag.Hash, raw []byte) error {
	if _, ok := s.commits[h]; ok {
		return nil
	}
	c, err := dag.Decode(raw)
	if err != nil {
		return err
	}
	s.commits[h] = salvagedCommit{raw: bytes.Clone(raw), parents: c.Parents, blob: c.Blob, time: c.Time}
	return nil
}

func (s *salvaged) lose(object, format string, args ...any) {
	s.lost = append(s.lost, Problem{Object: object, Message: fmt.Sprintf(format, args...)})
}

// Salvage copies what still verifies in the repository file at src into
// a new repository at dst, reading src without bbolt, so that it works on
// files bbolt cannot open: every blob whose content hashes to its key,
// every commit whose encoding does (even one whose parent or text was
// lost: it becomes the root of the chain that survived, a boundary), the
// refs (one whose commit was lost set to the newest surviving commit on
// its chain), a ref refs/salvaged/<tip> for each chain no ref reaches,
// and the reflog entries that name only salvaged commits. dst keeps a
// SalvageRecord of the lost parents and texts, so that the rest of tract
// treats the boundaries as the ends of their chains, not as damage.
// Objects that fail their hash, pages that cannot be read and what was
// lost are listed in the report. Unpublished packs (imports that never
// finished) are not copied. dst must not exist. src is read under a
// shared lock, as a reader; it is not changed.
//
// Salvage holds the encodings of the recovered commits in memory (about
// 150 bytes each) and streams blobs into dst. ctx bounds the wait for
// src's lock.
func Salvage(ctx context.Context, src, dst string) (*SalvageReport, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, ErrExists)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", src, err)
	}
	defer f.Close()
	if err := queueLock(ctx, f, false, time.Now().Add(DefaultLockTimeout)); err != nil {
		return nil, fmt.Errorf("salvage %s: lock: %w", src, err)
	}
	defer unlockQueue(f)
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", src, err)
	}

	out, err := OpenBolt(dst, BoltOptions{Create: true})
	if err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	w := &blobWriter{st: out}
	s := scanRaw(f, st.Size(), w.add)
	rep, err := (*SalvageReport)(nil), w.flush()
	if err == nil {
		rep, err = s.write(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Half a salvage is no repository to use: leave no file behind,
		// so that the salvage can be run again.
		os.Remove(dst)
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	return rep, nil
}

// blobWriter copies verified blobs into a store a few MiB per transaction.
type blobWriter struct {
	st      Store
	pending map[dag.Hash][]byte
	bytes   int
	err     error
}

const salvageBatchBytes = 4 << 20

func (w *blobWriter) add(h dag.Hash, data []byte) {
	if w.err != nil {
		return
	}
	if w.pending == nil {
		w.pending = map[dag.Hash][]byte{}
	}
	w.pending[h] = data
	if w.bytes += len(data); w.bytes >= salvageBatchBytes {
		w.err = w.flush()
	}
}

func (w *blobWriter) flush() error {
	if w.err != nil || len(w.pending) == 0 {
		return w.err
	}
	err := w.st.Update(context.Background(), func(tx Tx) error {
		hp := tx.(HashedPutter)
		for h, data := range w.pending {
			if err := hp.PutHashedBlob(h, data); err != nil {
				return err
			}
		}
		return nil
	})
	w.pending, w.bytes = nil, 0
	return err
}

// scanRaw reads everything that verifies in the file r of size bytes,
// handing each verified blob to blob.
func scanRaw(r io.ReaderAt, size int64, blob func(dag.Hash, []byte)) *salvaged {
	s := &salvaged{blobs: map[dag.Hash]bool{}, commits: map[dag.Hash]salvagedCommit{}, reflogs: map[string][]refs.Entry{}}
	f, meta, ok := openRaw(r, size)
	s.file = f
	if !ok {
		ps, bolt := guessPageSize(r, size)
		if !bolt {
			s.lose("file", "neither meta page is valid: the file is not a bbolt database, or both of its headers are damaged")
			return s
		}
		// Without a meta page there is no root to walk from: look for
		// objects and refs page by page, as behind an unreadable page.
		s.lose("file", "neither meta page is valid: objects and refs were looked for page by page "+
			"(each ref is set to the newest commit a copy of it names); the reflog is lost")
		f.pageSize = ps
		s.scanLoose(blob)
		return s
	}
	// The file's symbol tables first: its texts may be compressed with
	// them (see blobcodec.go).
	// A walk of its own, so that the main walk below does not find the
	// pages it reads reached twice.
	pre := &rawFile{r: f.r, size: f.size, pageSize: f.pageSize, seen: map[uint64]bool{}, unreadable: map[uint64]string{}, budget: f.budget}
	pre.each(rawBucket{root: meta.root}, func(k, _ []byte, b *rawBucket) {
		if b != nil && string(k) == string(bucketDicts) {
			pre.each(*b, func(k, v []byte, child *rawBucket) {
				if child == nil && len(k) == 4 {
					if s.texts.dicts == nil {
						s.texts.dicts = map[uint32][]byte{}
					}
					s.texts.dicts[binary.BigEndian.Uint32(k)] = bytes.Clone(v)
				}
			})
		}
	})
	object := func(k, v []byte, commits bool) {
		if len(k) != dag.HashSize {
			return // counters entries and other keys are derived
		}
		h := dag.Hash(k)
		kind := "blob"
		if commits {
			kind = "commit"
		} else if text, ok := s.texts.text(h, v); ok {
			v = text
		}
		if got := dag.Sum(v); got != h {
			s.lose(kind+" "+h.Short(), "content hashes to %s, not to its key", got.Short())
			return
		}
		if !commits {
			if !s.blobs[h] {
				s.blobs[h] = true
				blob(h, append([]byte(nil), v...))
			}
			return
		}
		if err := s.addCommit(h, v); err != nil {
			s.lose(kind+" "+h.Short(), "%v", err)
		}
	}
	objects := func(b *rawBucket, commits bool) {
		f.each(*b, func(k, v []byte, child *rawBucket) {
			if child == nil {
				object(k, v, commits)
			}
		})
	}
	// The journal's reflog entries come after the reflogs bucket's.
	journalReflogs := map[string][]refs.Entry{}
	f.each(rawBucket{root: meta.root}, func(k, _ []byte, b *rawBucket) {
		if b == nil {
			return
		}
		switch string(k) {
		case string(bucketStaging), string(bucketRefStaging), string(bucketContexts), string(bucketWords):
			// Unfinished imports, compiled-context records and the word
			// index (derived: the salvaged file does without, and its
			// first write builds the index): walked only so that
			// scanLoose skips them.
			f.each(*b, func([]byte, []byte, *rawBucket) {})
		case string(bucketRefsets):
			// Refs published with a pack, not yet folded into refs and
			// reflogs (their reflog entries come after the reflogs
			// bucket's, which the walk visited before).
			f.each(*b, func(_, _ []byte, set *rawBucket) {
				if set == nil {
					return
				}
				f.each(*set, func(k, _ []byte, b *rawBucket) {
					switch {
					case b == nil:
					case string(k) == string(keyRefsetRefs):
						f.each(*b, func(k, v []byte, child *rawBucket) {
							if child != nil {
								return
							}
							r, err := refs.DecodeRef(string(k), v)
							if err != nil {
								s.lose("ref "+string(k), "%v", err)
								return
							}
							s.refs = append(s.refs, r)
						})
					case string(k) == string(keyRefsetReflog):
						f.each(*b, func(k, v []byte, child *rawBucket) {
							if child != nil || len(k) < 10 || k[len(k)-9] != 0 {
								return
							}
							name := string(k[:len(k)-9])
							e, err := refs.DecodeEntry(v)
							if err != nil {
								s.lose("reflog "+name, "%v", err)
								return
							}
							s.reflogs[name] = append(s.reflogs[name], e)
						})
					}
				})
			})
		case string(bucketJournal):
			f.each(*b, func(k, rec []byte, child *rawBucket) {
				if child != nil {
					return
				}
				err := decodeJournalRecord(rec, func(e journalEntry, _ int) error {
					if e.space == spaceWords {
						return nil // the salvaged file's first write indexes every commit
					}
					if e.space != spaceReflogs {
						object(e.key, e.value, e.space == spaceCommits)
						return nil
					}
					re, err := refs.DecodeEntry(e.value)
					if err != nil {
						s.lose("reflog "+string(e.key), "%v", err)
						return nil
					}
					journalReflogs[string(e.key)] = append(journalReflogs[string(e.key)], re)
					return nil
				})
				if err != nil {
					s.lose(fmt.Sprintf("journal record %x", k), "%v", err)
				}
			})
		case string(bucketBlobs):
			objects(b, false)
		case string(bucketCommits):
			objects(b, true)
		case string(bucketPacks):
			f.each(*b, func(_, _ []byte, pack *rawBucket) {
				if pack == nil {
					return
				}
				f.each(*pack, func(k, _ []byte, b *rawBucket) {
					switch {
					case b == nil:
					case string(k) == string(bucketBlobs):
						objects(b, false)
					case string(k) == string(bucketCommits):
						objects(b, true)
					}
				})
			})
		case string(bucketRefs):
			f.each(*b, func(k, v []byte, child *rawBucket) {
				if child != nil {
					return
				}
				r, err := refs.DecodeRef(string(k), v)
				if err != nil {
					s.lose("ref "+string(k), "%v", err)
					return
				}
				s.refs = append(s.refs, r)
			})
		case string(bucketReflogs):
			f.each(*b, func(name, _ []byte, log *rawBucket) {
				if log == nil {
					return
				}
				f.each(*log, func(_, v []byte, child *rawBucket) {
					if child != nil {
						return
					}
					e, err := refs.DecodeEntry(v)
					if err != nil {
						s.lose("reflog "+string(name), "%v", err)
						return
					}
					s.reflogs[string(name)] = append(s.reflogs[string(name)], e)
				})
			})
		}
	})
	for name, es := range journalReflogs {
		s.reflogs[name] = append(s.reflogs[name], es...)
	}
	if len(f.unreadable) > 0 {
		s.scanLoose(blob)
	}
	return s
}

// scanLoose looks for objects and refs in the pages the walk from the root
// did not reach, when some page could not be read: the subtrees below an
// unreadable page, and older copies of pages bbolt has freed. Objects
// found there verify by their hash like any other; a ref found there is
// an older or newer copy of one, used only when the walk found none of
// that name, and then the copy naming the newest commit wins. Records of
// the journal are read for their objects. Reflog entries cannot be placed
// without their bucket and are not looked for.
func (s *salvaged) scanLoose(blob func(dag.Hash, []byte)) {
	f := s.file
	found := map[string][]refs.Ref{}
	// Pages outside the tree are mostly free space: what cannot be read
	// there is not news, so it is not reported.
	quiet := &rawFile{r: f.r, size: f.size, pageSize: f.pageSize, seen: f.seen, unreadable: map[uint64]string{}, budget: f.budget}
	var visit func(k, v []byte, child *rawBucket)
	visit = func(k, v []byte, child *rawBucket) {
		switch {
		case child != nil:
			if child.root == 0 {
				quiet.leaf(0, child.inline, visit)
			}
		case len(k) == dag.HashSize && dag.Sum(v) == dag.Hash(k):
			h := dag.Hash(k)
			_ = s.addCommit(h, v) // a blob, if it does not decode as a commit
			if !s.blobs[h] {
				s.blobs[h] = true
				blob(h, append([]byte(nil), v...))
			}
		case len(k) == dag.HashSize:
			// A text in a stored form (a commit never has one).
			h := dag.Hash(k)
			if text, ok := s.texts.text(h, v); ok && !s.blobs[h] {
				s.blobs[h] = true
				blob(h, append([]byte(nil), text...))
			}
		case string(k) == refs.HEAD || strings.HasPrefix(string(k), "refs/"):
			if r, err := refs.DecodeRef(string(k), v); err == nil {
				found[r.Name] = append(found[r.Name], r)
			}
		case len(k) == 8:
			// Perhaps a journal record (see bolt_journal.go): its entries
			// say which objects are blobs and which commits.
			_ = decodeJournalRecord(v, func(e journalEntry, _ int) error {
				if len(e.key) != dag.HashSize || e.space > spaceCommits {
					return nil
				}
				if e.space == spaceBlobs {
					if text, ok := s.texts.text(dag.Hash(e.key), e.value); ok {
						e.value = text
					}
				}
				if dag.Sum(e.value) != dag.Hash(e.key) {
					return nil
				}
				h := dag.Hash(e.key)
				if e.space == spaceCommits {
					_ = s.addCommit(h, e.value)
				} else if !s.blobs[h] {
					s.blobs[h] = true
					blob(h, append([]byte(nil), e.value...))
				}
				return nil
			})
		}
	}
	for id := uint64(2); id < uint64(f.size/f.pageSize); id++ {
		if f.seen[id] {
			continue
		}
		p, err := quiet.page(id)
		if err != nil {
			continue // most pages outside the tree are free space
		}
		if binary.LittleEndian.Uint16(p[8:]) == rawFlagLeaf {
			quiet.leaf(id, p, visit)
		}
		id += uint64(len(p))/uint64(f.pageSize) - 1
	}
	have := map[string]bool{}
	for _, r := range s.refs {
		have[r.Name] = true
	}
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if have[name] {
			continue
		}
		best, bestTime := refs.Ref{}, time.Time{}
		for _, r := range found[name] {
			if r.IsSymbolic() {
				best = r
				break
			}
			if c, ok := s.commits[r.Hash]; ok && (best.Name == "" || c.time.After(bestTime)) {
				best, bestTime = r, c.time
			}
		}
		if best.Name != "" {
			s.refs = append(s.refs, best)
		}
	}
}

// SalvageBoundary is a salvaged commit whose parent was not recovered: the
// root of the chain that survived above the loss. Its own bytes, which
// name the lost parent, are unchanged (they are its hash).
type SalvageBoundary struct {
	Commit     dag.Hash `json:"commit"`
	LostParent dag.Hash `json:"lost_parent"`
}

// salvagePlan is what write makes of what scanRaw found.
type salvagePlan struct {
	boundaries  []SalvageBoundary
	lostCommits map[dag.Hash][]dag.Hash // lost parent → its salvaged children
	lostBlobs   map[dag.Hash][]dag.Hash // lost text → the salvaged commits that have it
	children    map[dag.Hash][]dag.Hash // salvaged commit → its salvaged children
	refs        []refs.Ref              // to restore, some moved
	salvaged    []refs.Ref              // refs/salvaged/… for chains no ref reaches
	unreached   []refs.Ref              // refs whose commit was lost, as they were
	notes       []Problem               // what became of those
}

// plan works out, from the commits that verify, where history was lost,
// where each ref goes and which chains need a ref of their own.
func (s *salvaged) plan() *salvagePlan {
	p := &salvagePlan{lostCommits: map[dag.Hash][]dag.Hash{}, lostBlobs: map[dag.Hash][]dag.Hash{}, children: map[dag.Hash][]dag.Hash{}}
	hs := make([]dag.Hash, 0, len(s.commits))
	for h := range s.commits {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return s.older(hs[i], hs[j]) })
	for _, h := range hs {
		c := s.commits[h]
		for _, par := range c.parents {
			if _, ok := s.commits[par]; ok {
				p.children[par] = append(p.children[par], h)
				continue
			}
			p.boundaries = append(p.boundaries, SalvageBoundary{Commit: h, LostParent: par})
			p.lostCommits[par] = append(p.lostCommits[par], h)
		}
		if !s.blobs[c.blob] {
			p.lostBlobs[c.blob] = append(p.lostBlobs[c.blob], h)
		}
	}

	// Refs whose commit survived are restored as they were; the others
	// wait for the reachability of those.
	var moved []refs.Ref
	for _, r := range s.refs {
		if _, ok := s.commits[r.Hash]; ok || r.IsSymbolic() {
			p.refs = append(p.refs, r)
		} else {
			moved = append(moved, r)
		}
	}
	reached := map[dag.Hash]bool{}
	reach := func(from dag.Hash) {
		stack := []dag.Hash{from}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c, ok := s.commits[h]
			if !ok || reached[h] {
				continue
			}
			reached[h] = true
			stack = append(stack, c.parents...)
		}
	}
	for _, r := range p.refs {
		if !r.IsSymbolic() {
			reach(r.Hash)
		}
	}
	var tips []dag.Hash // surviving commits without a surviving child
	for _, h := range hs {
		if len(p.children[h]) == 0 {
			tips = append(tips, h)
		}
	}
	p.unreached = moved
	for _, r := range moved {
		to, ok := s.newestOnChain(p, r.Name)
		if !ok {
			// Nothing of its reflog survived: a ref whose chain is the
			// one chain no ref reaches goes to its newest commit.
			var free []dag.Hash
			for _, t := range tips {
				if !reached[t] {
					free = append(free, t)
				}
			}
			if len(free) != 1 {
				p.note("ref "+r.Name, "not restored: its commit %s was not recovered, nor any commit its reflog names; "+
					"the chains no ref reaches are under refs/salvaged/", r.Hash.Short())
				continue
			}
			to = free[0]
		}
		p.note("ref "+r.Name, "its commit %s was not recovered: set to %s, the newest commit that survived on its chain", r.Hash.Short(), to.Short())
		p.refs = append(p.refs, refs.Ref{Name: r.Name, Hash: to})
		reach(to)
	}

	// A tip no ref reaches and no surviving reflog entry names would be
	// found by nothing and dropped by gc: it gets a ref of its own.
	named := map[dag.Hash]bool{}
	for _, es := range s.reflogs {
		for _, e := range es {
			named[e.Old], named[e.New] = true, true
		}
	}
	taken := map[string]bool{}
	for _, r := range p.refs {
		taken[r.Name] = true
	}
	for _, t := range tips {
		if reached[t] || named[t] {
			continue
		}
		name := refs.SalvagedPrefix + t.Short()
		if taken[name] {
			name = refs.SalvagedPrefix + t.String()
		}
		taken[name] = true
		p.salvaged = append(p.salvaged, refs.Ref{Name: name, Hash: t})
		reach(t)
	}
	return p
}

func (p *salvagePlan) note(object, format string, args ...any) {
	p.notes = append(p.notes, Problem{Object: object, Message: fmt.Sprintf(format, args...)})
}

// older orders commits by time, then by hash.
func (s *salvaged) older(a, b dag.Hash) bool {
	ta, tb := s.commits[a].time, s.commits[b].time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return string(a[:]) < string(b[:])
}

// newestOnChain returns where the ref name goes when its commit was lost:
// the newest surviving commit that descends from the newest commit its
// reflog names that survived. ok is false when none of them did.
func (s *salvaged) newestOnChain(p *salvagePlan, name string) (dag.Hash, bool) {
	es := s.reflogs[name]
	for i := len(es) - 1; i >= 0; i-- {
		from := es[i].New
		if _, ok := s.commits[from]; !ok {
			continue
		}
		best := from
		seen := map[dag.Hash]bool{}
		stack := []dag.Hash{from}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[h] {
				continue
			}
			seen[h] = true
			if s.older(best, h) {
				best = h
			}
			stack = append(stack, p.children[h]...)
		}
		return best, true
	}
	return dag.Hash{}, false
}

// record returns the salvage record of the plan, or nil when nothing was
// lost that a commit refers to.
func (p *salvagePlan) record(now time.Time) *SalvageRecord {
	if len(p.lostCommits) == 0 && len(p.lostBlobs) == 0 {
		return nil
	}
	r := &SalvageRecord{Time: now.UTC(), LostCommits: []dag.Hash{}, LostBlobs: []dag.Hash{}}
	for h := range p.lostCommits {
		r.LostCommits = append(r.LostCommits, h)
	}
	for h := range p.lostBlobs {
		r.LostBlobs = append(r.LostBlobs, h)
	}
	slices.SortFunc(r.LostCommits, hashCompare)
	slices.SortFunc(r.LostBlobs, hashCompare)
	return r
}

// loseHistory lists, in the report, each lost commit and text that a
// commit which verifies refers to: as the salvage's losses, or (checking
// is set) as fsck's problems.
func (s *salvaged) loseHistory(p *salvagePlan, checking bool) {
	lostCommit, lostBlob := "not recovered: history is lost before %s, which is now the root of its chain", "not recovered: the text of %s is lost"
	if checking {
		lostCommit, lostBlob = "is missing: the history before %s is lost", "is missing: the text of %s is lost"
	}
	few := func(hs []dag.Hash) string {
		var b strings.Builder
		for i, h := range hs {
			if i == 3 {
				fmt.Fprintf(&b, " and %d more", len(hs)-3)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(h.Short())
		}
		return b.String()
	}
	for _, b := range p.boundaries {
		if kids := p.lostCommits[b.LostParent]; kids[0] == b.Commit { // once per lost commit
			s.lose("commit "+b.LostParent.Short(), lostCommit, few(kids))
		}
	}
	blobs := make([]dag.Hash, 0, len(p.lostBlobs))
	for h := range p.lostBlobs {
		blobs = append(blobs, h)
	}
	slices.SortFunc(blobs, hashCompare)
	for _, h := range blobs {
		s.lose("blob "+h.Short(), lostBlob, few(p.lostBlobs[h]))
	}
}

// write copies every commit that verifies, the refs (set to the newest
// surviving commit on their chain when theirs was lost), a ref under
// refs/salvaged/ for each chain no ref reaches, the reflog entries that
// name only salvaged commits, and the salvage record into out, which
// already holds the blobs.
func (s *salvaged) write(out Store) (*SalvageReport, error) {
	p := s.plan()
	s.loseHistory(p, false)
	s.lost = append(s.lost, p.notes...)
	rep := &SalvageReport{Blobs: len(s.blobs), UnreadablePages: len(s.file.unreadable), Lost: []Problem{},
		Boundaries: p.boundaries, SalvagedRefs: []string{}}
	if rep.Boundaries == nil {
		rep.Boundaries = []SalvageBoundary{}
	}
	for _, hs := range p.lostBlobs {
		rep.LostTexts += len(hs)
	}
	pages := make([]uint64, 0, len(s.file.unreadable))
	for id := range s.file.unreadable {
		pages = append(pages, id)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	for _, id := range pages {
		s.lose(fmt.Sprintf("page %d", id), "%s; what it held is lost", s.file.unreadable[id])
	}
	named := func(h dag.Hash) bool {
		_, ok := s.commits[h]
		return h.IsZero() || ok
	}
	hs := make([]dag.Hash, 0, len(s.commits))
	for h := range s.commits {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, hashCompare)
	err := out.Update(context.Background(), func(tx Tx) error {
		if sp, ok := tx.(SortedPacker); ok {
			sp.PackSorted()
		}
		hp := tx.(HashedPutter)
		for _, h := range hs {
			if err := hp.PutEncodedCommit(h, s.commits[h].raw); err != nil {
				return err
			}
			rep.Commits++
		}
		for _, r := range append(p.refs, p.salvaged...) {
			if err := tx.SetRef(r); err != nil {
				return err
			}
			rep.Refs++
		}
		for _, r := range p.salvaged {
			rep.SalvagedRefs = append(rep.SalvagedRefs, r.Name)
		}
		names := make([]string, 0, len(s.reflogs))
		for name := range s.reflogs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			for _, e := range s.reflogs[name] {
				if !named(e.Old) || !named(e.New) {
					s.lose("reflog "+name, "entry %q dropped: it names a commit that was not recovered", e.Message)
					continue
				}
				if err := tx.AppendReflog(name, e); err != nil {
					return err
				}
				rep.ReflogEntries++
			}
		}
		if r := p.record(time.Now()); r != nil {
			return tx.(SalvageRecorder).SetSalvageRecord(r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Lost = append(rep.Lost, s.lost...)
	return rep, nil
}
