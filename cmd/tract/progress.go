package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	prog "github.com/tractdag/tract/internal/progress"
)

// progressLine is the line on which a long command shows how far it is,
// on standard error. A nil *progressLine draws nothing.
type progressLine struct{ line *prog.Line }

// progressLine returns the progress line of a command, labelled with its
// name: nil unless standard error is a terminal and --quiet was not
// given. A command passes line.tract() to the library's progress option
// of its operation and clears the line before printing its result:
//
//	line := f.progressLine("fsck")
//	report, err := t.Fsck(ctx, tract.FsckProgress(line.tract()))
//	line.clear()
//
// The line redraws at most ten times a second, so reports may come as
// often as the work likes.
func (f *Factory) progressLine(label string) *progressLine {
	if f.Quiet || !f.IO.ErrTTY {
		return nil
	}
	return &progressLine{prog.NewLine(f.IO.ErrOut, label)}
}

// tract returns a tract.ProgressFunc drawing on l; nil for a nil line, so
// that the library counts for nobody.
func (l *progressLine) tract() tract.ProgressFunc {
	if l == nil {
		return nil
	}
	return func(p tract.Progress) { l.line.Set(prog.Count(p.Done, p.Total, p.Unit)) }
}

// set shows text.
func (l *progressLine) set(text string) {
	if l != nil {
		l.line.Set(text)
	}
}

// clear erases the line.
func (l *progressLine) clear() {
	if l != nil {
		l.line.Clear()
	}
}

// importProgress returns the report of an import reading size bytes (0:
// not known) of which *read are read: "12,000 messages, 3.1 MiB of 9.5
// MiB (32%)". Nil for a nil line.
func (l *progressLine) importProgress(read *atomic.Int64, size int64) tract.ProgressFunc {
	if l == nil {
		return nil
	}
	return func(p tract.Progress) {
		text := prog.Count(p.Done, 0, p.Unit) + ", " + english.Bytes(read.Load())
		if size > 0 {
			text += fmt.Sprintf(" of %s (%d%%)", english.Bytes(size), min(read.Load()*100/size, 100))
		}
		l.line.Set(text)
	}
}

// indexNote returns the report of the word index's build, which the
// first write to a file of an older tract (or one a salvage wrote) does
// before its own work: a note on standard error, "building the search
// index of 1,000,000 commits…" and then "done". On a terminal the note
// shows how far the build is, redrawn in place; elsewhere it is written
// once, and "done" ends its line. Nil with --quiet.
func (f *Factory) indexNote() tract.ProgressFunc {
	if f.Quiet {
		return nil
	}
	w, tty := f.IO.ErrOut, f.IO.ErrTTY
	var mu sync.Mutex
	var total int64 // the build's, once known
	shown, ended := false, false
	head := func() string {
		return "building the search index of " + prog.Count(total, 0, "commits") + "…"
	}
	return func(p tract.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		final := p.Done == p.Total // only the last report, once the transaction ended
		if !final {
			total = max(total, p.Total)
			if total == 0 {
				return // still counting the commits
			}
			switch {
			case tty:
				fmt.Fprintf(w, "\r\x1b[K%s %d%%", head(), p.Done*100/total)
			case !shown:
				fmt.Fprint(w, head())
			}
			shown = true
			return
		}
		ended = true
		if total == 0 {
			total = p.Total
		}
		switch {
		case total == 0:
			// A file without commits: nothing was built.
		case p.Total < total:
			// The transaction failed: its error follows.
			if tty {
				fmt.Fprint(w, "\r\x1b[K")
			} else {
				fmt.Fprintln(w, " stopped")
			}
		case tty:
			fmt.Fprintf(w, "\r\x1b[K%s done\n", head())
		case shown:
			fmt.Fprintln(w, " done")
		default:
			fmt.Fprintln(w, head()+" done")
		}
	}
}

// countingReader counts the bytes read through it into n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// inputSize returns the size of r when it is a regular file, else 0.
func inputSize(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}
