package store

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"slices"
)

// PackSorter puts pack entries, added in any order, into the order
// AppendPack takes, in bounded memory: it holds up to a budget of bytes,
// writes each full buffer as a sorted run to a temporary file, and merges
// the runs as it reads them back. Close removes the files.
//
// Runs are merged as they come, like the tiers of packs: whenever
// runFanIn runs of one size share a level, they become one run of the
// next, so however much is added, the sorter holds at most runFanIn-1
// runs per level open (a few dozen at ten million messages, not one per
// budget's worth: thousands of files and a read buffer each) and each
// entry is written again once per level.
type PackSorter struct {
	sorter[PackEntry, packCodec]
	// words, when set, gathers the word index of the commits AddChain
	// adds (see IndexWords).
	words *packWords
}

// sorter is the external sort behind PackSorter and packWords: entries
// of type E, which codec C orders, sizes, writes and reads back.
type sorter[E any, C sortCodec[E]] struct {
	dir    string
	budget int
	buf    []E
	size   int
	runs   []sortRun // levels never increase along the slice
	codec  C
}

// sortCodec is what a sorter needs of its entries: their order, their
// size in memory, and their form in a run file.
type sortCodec[E any] interface {
	compare(a, b E) int
	size(e E) int
	write(w *bufio.Writer, e E) error
	// read reads the next entry; ok is false at the end of the run.
	read(r *bufio.Reader) (e E, ok bool, err error)
}

// sortRun is a sorted run on disk; a run of level n merges runFanIn^n
// buffers.
type sortRun struct {
	f     *os.File
	level int
}

// runFanIn is how many runs of one level are merged into one of the next;
// runReadBuffer is the read buffer of each run being merged, and
// runWriteBuffer the write buffer of a run being written (one a run: 256
// KiB each, at 100,000 messages sorted in runs of 768 KiB, were 20 MB
// allocated and a higher peak of the heap, for no time saved).
const (
	runFanIn       = 16
	runReadBuffer  = 32 << 10
	runWriteBuffer = 64 << 10
)

// NewPackSorter returns a sorter that keeps about budget bytes of entries
// in memory and writes its runs in dir (the temporary directory when dir
// is empty, or when dir refuses them).
func NewPackSorter(dir string, budget int) *PackSorter {
	return &PackSorter{sorter: sorter[PackEntry, packCodec]{dir: dir, budget: budget}}
}

// packCodec is PackSorter's sortCodec.
type packCodec struct{}

func (packCodec) compare(a, b PackEntry) int { return a.Compare(b) }
func (packCodec) size(e PackEntry) int       { return len(e.Value) + entryOverhead }

// entryOverhead is what an entry costs in memory besides its value.
const entryOverhead = 64

// Add adds an entry. The sorter keeps e.Value until the entry is written
// to a run.
func (s *sorter[E, C]) Add(e E) error {
	s.buf = append(s.buf, e)
	s.size += s.codec.size(e)
	if s.size >= s.budget {
		return s.spill()
	}
	return nil
}

// spill writes the buffer as a sorted run, then merges the last runFanIn
// runs while they share a level.
func (s *sorter[E, C]) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	slices.SortFunc(s.buf, s.codec.compare)
	f, err := s.writeRun(func(yield func(E, error) bool) {
		for _, e := range s.buf {
			if !yield(e, nil) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, sortRun{f: f})
	clear(s.buf)
	s.buf, s.size = s.buf[:0], 0
	for n := len(s.runs); n >= runFanIn && s.runs[n-runFanIn].level == s.runs[n-1].level; n = len(s.runs) {
		tail := s.runs[n-runFanIn:]
		files := make([]*os.File, len(tail))
		for i, r := range tail {
			files[i] = r.f
		}
		f, err := s.writeRun(mergeRuns(files, s.codec))
		if err != nil {
			return err
		}
		level := tail[0].level + 1
		if err := closeRuns(tail); err != nil {
			f.Close()
			return err
		}
		s.runs = append(s.runs[:n-runFanIn], sortRun{f: f, level: level})
	}
	return nil
}

// writeRun writes entries, sorted already, to a new run file.
func (s *sorter[E, C]) writeRun(entries iter.Seq2[E, error]) (*os.File, error) {
	f, err := s.createRun()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		closeRuns([]sortRun{{f: f}})
		return nil, err
	}
	w := bufio.NewWriterSize(f, runWriteBuffer)
	for e, err := range entries {
		if err != nil {
			return fail(err)
		}
		if err := s.codec.write(w, e); err != nil {
			return fail(fmt.Errorf("sort: %w", err))
		}
	}
	if err := w.Flush(); err != nil {
		return fail(fmt.Errorf("sort: %w", err))
	}
	return f, nil
}

// createRun creates a run file in the sorter's directory. When that
// directory refuses it (no write permission there, a read-only file
// system, a directory removed), the runs go to the system's temporary
// directory ($TMPDIR, else /tmp) instead, from then on.
func (s *sorter[E, C]) createRun() (*os.File, error) {
	f, err := createRun(s.dir)
	if err == nil || s.dir == "" {
		if err != nil {
			return nil, fmt.Errorf("sort: cannot create a temporary file to sort the input in, in %s (%w): "+
				"set TMPDIR to a directory this user may write to, with room for the input", os.TempDir(), osReason(err))
		}
		return f, nil
	}
	f, tmpErr := createRun("")
	if tmpErr != nil {
		return nil, fmt.Errorf("sort: cannot create a temporary file to sort the input in, in %s (%w) nor in %s (%w): "+
			"set TMPDIR to a directory this user may write to, with room for the input", s.dir, osReason(err), os.TempDir(), osReason(tmpErr))
	}
	s.dir = ""
	return f, nil
}

// osReason returns the operating system's reason of a failed file
// operation ("permission denied"), without the path the message names
// already.
func osReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Runs returns how many runs the sorter holds on disk.
func (s *sorter[E, C]) Runs() int { return len(s.runs) }

// Sorted returns the entries added, in Compare order, each (kind, hash)
// once. Values are the caller's to keep. It is called after the last Add,
// and may be iterated again (a transaction that a store runs a second
// time reads them again).
func (s *sorter[E, C]) Sorted() iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		if len(s.runs) == 0 {
			// Everything fits in memory.
			s.buf = sortUnique(s.buf, s.codec.compare)
			for _, e := range s.buf {
				if !yield(e, nil) {
					return
				}
			}
			return
		}
		if err := s.spill(); err != nil {
			var zero E
			yield(zero, err)
			return
		}
		files := make([]*os.File, len(s.runs))
		for i, r := range s.runs {
			files[i] = r.f
		}
		for e, err := range mergeRuns(files, s.codec) {
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// mergeRuns reads the runs in files back from their start, merged in
// codec's order, each entry once (of equal ones, the first).
func mergeRuns[E any, C sortCodec[E]](files []*os.File, codec C) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var zero E
		h := runHeap[E, C]{codec: codec, rs: make([]*runReader[E, C], 0, len(files))}
		for _, f := range files {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				yield(zero, fmt.Errorf("sort: %w", err))
				return
			}
			r := &runReader[E, C]{r: bufio.NewReaderSize(f, runReadBuffer), codec: codec}
			ok, err := r.next()
			if err != nil {
				yield(zero, err)
				return
			}
			if ok {
				h.rs = append(h.rs, r)
			}
		}
		heap.Init(&h)
		var prev E
		first := true
		for len(h.rs) > 0 {
			r := h.rs[0]
			e := r.cur
			if first || codec.compare(prev, e) != 0 {
				if !yield(e, nil) {
					return
				}
			}
			prev, first = e, false
			ok, err := r.next()
			if err != nil {
				yield(zero, err)
				return
			}
			if ok {
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
	}
}

// createNamedRun creates a temporary file in dir and removes its name at
// once where the system allows it (a process killed in between leaves a
// "tract-sort-*.run" file, which may be deleted); Close removes it
// otherwise.
func createNamedRun(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "tract-sort-*.run")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// Close removes the sorter's files.
func (s *PackSorter) Close() error {
	err := s.sorter.Close()
	if s.words != nil {
		err = errors.Join(err, s.words.runs.Close())
	}
	return err
}

// Close removes the sorter's files.
func (s *sorter[E, C]) Close() error {
	err := closeRuns(s.runs)
	s.runs, s.buf = nil, nil
	return err
}

// closeRuns closes the files of runs and removes those that still have a
// name.
func closeRuns(runs []sortRun) error {
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.f.Close())
		if _, err := os.Lstat(r.f.Name()); err == nil {
			errs = append(errs, os.Remove(r.f.Name())) // not unlinked when made
		}
	}
	return errors.Join(errs...)
}

// runReader reads one run back, an entry at a time.
type runReader[E any, C sortCodec[E]] struct {
	r     *bufio.Reader
	codec C
	cur   E
}

func (r *runReader[E, C]) next() (bool, error) {
	e, ok, err := r.codec.read(r.r)
	if err != nil {
		return false, fmt.Errorf("sort: reading a run back: %w", err)
	}
	r.cur = e
	return ok, nil
}

func (packCodec) write(w *bufio.Writer, e PackEntry) error {
	hdr := append(w.AvailableBuffer(), byte(e.Kind)) // no header allocated an entry
	hdr = append(hdr, e.Hash[:]...)
	if _, err := w.Write(binary.AppendUvarint(hdr, uint64(len(e.Value)))); err != nil {
		return err
	}
	_, err := w.Write(e.Value)
	return err
}

func (packCodec) read(r *bufio.Reader) (PackEntry, bool, error) {
	kind, err := r.ReadByte()
	if err == io.EOF {
		return PackEntry{}, false, nil
	}
	var e PackEntry
	e.Kind = PackKind(kind)
	if err == nil {
		_, err = io.ReadFull(r, e.Hash[:])
	}
	var n uint64
	if err == nil {
		n, err = binary.ReadUvarint(r)
	}
	if err == nil {
		e.Value = make([]byte, n)
		_, err = io.ReadFull(r, e.Value)
	}
	if err != nil {
		return PackEntry{}, false, err
	}
	return e, true, nil
}

// runHeap orders runs by their current entry.
type runHeap[E any, C sortCodec[E]] struct {
	codec C
	rs    []*runReader[E, C]
}

func (h runHeap[E, C]) Len() int { return len(h.rs) }
func (h runHeap[E, C]) Less(i, j int) bool {
	return h.codec.compare(h.rs[i].cur, h.rs[j].cur) < 0
}
func (h runHeap[E, C]) Swap(i, j int) { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *runHeap[E, C]) Push(x any)   { h.rs = append(h.rs, x.(*runReader[E, C])) }
func (h *runHeap[E, C]) Pop() any {
	old := h.rs
	r := old[len(old)-1]
	h.rs = old[:len(old)-1]
	return r
}
