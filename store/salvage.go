package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
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
}

// salvaged is what survives in a damaged file, as read by scanRaw.
type salvaged struct {
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
// every commit whose encoding does and whose whole history (parents and
// their blobs, back to the root) was recovered too, every ref whose target
// is such a commit, and the reflog entries that name only such commits.
// Objects that fail their hash, pages that cannot be read and commits cut
// off from their history are listed in the report. Unpublished packs
// (imports that never finished) are not copied. dst must not exist. src
// is read under a shared lock, as a reader; it is not changed.
//
// Salvage holds the encodings of the recovered commits in memory (about
// 150 bytes each) and streams blobs into dst.
func Salvage(src, dst string) (*SalvageReport, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, ErrExists)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", src, err)
	}
	defer f.Close()
	if err := queueLock(f, false, time.Now().Add(DefaultLockTimeout)); err != nil {
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
	err := w.st.Update(func(tx Tx) error {
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
	object := func(k, v []byte, commits bool) {
		if len(k) != dag.HashSize {
			return // counters entries and other keys are derived
		}
		h := dag.Hash(k)
		kind := "blob"
		if commits {
			kind = "commit"
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
		case string(bucketStaging):
			// Unfinished imports: walked only so that scanLoose skips them.
			f.each(*b, func([]byte, []byte, *rawBucket) {})
		case string(bucketJournal):
			f.each(*b, func(k, rec []byte, child *rawBucket) {
				if child != nil {
					return
				}
				err := decodeJournalRecord(rec, func(e journalEntry, _ int) error {
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
		case string(k) == refs.HEAD || strings.HasPrefix(string(k), "refs/"):
			if r, err := refs.DecodeRef(string(k), v); err == nil {
				found[r.Name] = append(found[r.Name], r)
			}
		case len(k) == 8:
			// Perhaps a journal record (see bolt_journal.go): its entries
			// say which objects are blobs and which commits.
			_ = decodeJournalRecord(v, func(e journalEntry, _ int) error {
				if len(e.key) != dag.HashSize || e.space == spaceReflogs || dag.Sum(e.value) != dag.Hash(e.key) {
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

// complete returns the commits whose whole history was recovered: their
// blob, and every parent complete too. It lists the others as lost.
func (s *salvaged) complete() map[dag.Hash]bool {
	const (
		unknown = iota
		visiting
		whole
		broken
	)
	state := make(map[dag.Hash]uint8, len(s.commits))
	ok := make(map[dag.Hash]bool, len(s.commits))
	why := map[dag.Hash]string{}
	for start := range s.commits {
		stack := []dag.Hash{start}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			if state[h] == whole || state[h] == broken {
				stack = stack[:len(stack)-1]
				continue
			}
			c := s.commits[h]
			if state[h] == unknown {
				state[h] = visiting
				for _, p := range c.parents {
					if _, have := s.commits[p]; have && state[p] == unknown {
						stack = append(stack, p)
					}
				}
				continue
			}
			stack = stack[:len(stack)-1]
			state[h] = whole
			switch {
			case !s.blobs[c.blob]:
				state[h], why[h] = broken, "its text (blob "+c.blob.Short()+") was not recovered"
			default:
				for _, p := range c.parents {
					if _, have := s.commits[p]; !have {
						state[h], why[h] = broken, "its parent "+p.Short()+" was not recovered"
						break
					}
					if state[p] == broken {
						state[h], why[h] = broken, "its history was not recovered whole (parent "+p.Short()+")"
						break
					}
				}
			}
			ok[h] = state[h] == whole
		}
	}
	hs := make([]dag.Hash, 0, len(why))
	for h := range why {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return string(hs[i][:]) < string(hs[j][:]) })
	for _, h := range hs {
		s.lose("commit "+h.Short(), "not copied: %s", why[h])
	}
	return ok
}

// write copies the complete commits, the refs that name them and the
// reflog entries that name only them into out, which already holds the
// blobs.
func (s *salvaged) write(out Store) (*SalvageReport, error) {
	ok := s.complete()
	rep := &SalvageReport{Blobs: len(s.blobs), UnreadablePages: len(s.file.unreadable), Lost: []Problem{}}
	pages := make([]uint64, 0, len(s.file.unreadable))
	for id := range s.file.unreadable {
		pages = append(pages, id)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	for _, id := range pages {
		s.lose(fmt.Sprintf("page %d", id), "%s; what it held is lost", s.file.unreadable[id])
	}
	named := func(h dag.Hash) bool { return h.IsZero() || ok[h] }
	err := out.Update(func(tx Tx) error {
		hp := tx.(HashedPutter)
		for h, c := range s.commits {
			if !ok[h] {
				continue
			}
			if err := hp.PutEncodedCommit(h, c.raw); err != nil {
				return err
			}
			rep.Commits++
		}
		for _, r := range s.refs {
			if !r.IsSymbolic() && !ok[r.Hash] {
				s.lose("ref "+r.Name, "not restored: its commit %s was not recovered whole", r.Hash.Short())
				continue
			}
			if err := tx.SetRef(r); err != nil {
				return err
			}
			rep.Refs++
		}
		for name, es := range s.reflogs {
			for _, e := range es {
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
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Lost = append(rep.Lost, s.lost...)
	return rep, nil
}
