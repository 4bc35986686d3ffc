package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"

	"github.com/tractdag/tract/dag"
)

// WordDoc is a commit's document in a word index: its hash, its time
// and its words (CommitWords of the commit and its text).
type WordDoc struct {
	Commit dag.Hash
	// Time is the commit's time, as Unix nanoseconds.
	Time  int64
	Words []string
}

// DocSpool keeps documents in the order they are added, in a temporary
// file, so that an import can hand a store (see PackStreamer) the
// documents of its commits in commit order, in bounded memory, long after
// their texts have gone to its PackSorter. Close removes the file.
type DocSpool struct {
	dir string
	f   *os.File
	w   *bufio.Writer
	n   int
}

// NewDocSpool returns a spool that writes its file in dir (the temporary
// directory when dir is empty, or when dir refuses it).
func NewDocSpool(dir string) *DocSpool { return &DocSpool{dir: dir} }

// Len is how many documents were added.
func (s *DocSpool) Len() int { return s.n }

// Add appends d.
func (s *DocSpool) Add(d WordDoc) error {
	if s.f == nil {
		// A run file of a sorter's: in dir, or the temporary directory
		// when dir refuses it, unlinked at once where the system allows.
		ps := &sorter[PackEntry, packCodec]{dir: s.dir}
		f, err := ps.createRun()
		if err != nil {
			return err
		}
		s.dir = ps.dir
		s.f, s.w = f, bufio.NewWriterSize(f, runReadBuffer)
	}
	var b [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(d.Commit[:]); err != nil {
		return fmt.Errorf("document spool: %w", err)
	}
	if _, err := s.w.Write(binary.BigEndian.AppendUint64(b[:0], uint64(d.Time))); err != nil {
		return fmt.Errorf("document spool: %w", err)
	}
	if _, err := s.w.Write(binary.AppendUvarint(b[:0], uint64(len(d.Words)))); err != nil {
		return fmt.Errorf("document spool: %w", err)
	}
	for _, w := range d.Words {
		if _, err := s.w.Write(binary.AppendUvarint(b[:0], uint64(len(w)))); err != nil {
			return fmt.Errorf("document spool: %w", err)
		}
		if _, err := s.w.WriteString(w); err != nil {
			return fmt.Errorf("document spool: %w", err)
		}
	}
	s.n++
	return nil
}

// Docs returns the documents added, in the order added. It may be
// iterated again; an Add in between is not allowed.
func (s *DocSpool) Docs() iter.Seq2[WordDoc, error] {
	return func(yield func(WordDoc, error) bool) {
		if s.f == nil {
			return
		}
		if err := s.w.Flush(); err != nil {
			yield(WordDoc{}, fmt.Errorf("document spool: %w", err))
			return
		}
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			yield(WordDoc{}, fmt.Errorf("document spool: %w", err))
			return
		}
		r := bufio.NewReaderSize(s.f, runReadBuffer)
		for range s.n {
			d, err := readDoc(r)
			if err != nil {
				yield(WordDoc{}, fmt.Errorf("document spool: %w", err))
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

// readDoc reads a document as Add wrote it.
func readDoc(r *bufio.Reader) (WordDoc, error) {
	var d WordDoc
	var head [dag.HashSize + 8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return d, err
	}
	copy(d.Commit[:], head[:dag.HashSize])
	d.Time = int64(binary.BigEndian.Uint64(head[dag.HashSize:]))
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return d, err
	}
	d.Words = make([]string, 0, min(n, 1024))
	var buf []byte
	for range n {
		l, err := binary.ReadUvarint(r)
		if err != nil {
			return d, err
		}
		if l > 1<<20 {
			return d, errors.New("a word of more than 1 MiB")
		}
		buf = slices.Grow(buf[:0], int(l))[:l]
		if _, err := io.ReadFull(r, buf); err != nil {
			return d, err
		}
		d.Words = append(d.Words, string(buf))
	}
	return d, nil
}

// Close removes the spool's file.
func (s *DocSpool) Close() error {
	if s.f == nil {
		return nil
	}
	err := closeRuns([]sortRun{{f: s.f}})
	s.f, s.w = nil, nil
	return err
}
