package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// defaultWidth is the width of a terminal whose width cannot be read.
const defaultWidth = 80

// outWidth returns the width, in columns, that one-line views on standard
// output are cut to: 0 (no cut) when standard output is not a terminal;
// on a terminal, $COLUMNS when it is a positive number (as git reads it),
// else the terminal's width, else 80.
func (f *Factory) outWidth() int {
	if !f.IO.OutTTY {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(f.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f.IO.OutFile != nil {
		if w, _, err := term.GetSize(int(f.IO.OutFile.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultWidth
}

// fitOut returns the writer a one-line view (or a graph) writes standard
// output through: cut to the terminal's width (see outWidth), or standard
// output itself when it is not a terminal. done writes a last line that
// has no line break.
func fitOut(f *Factory) (w io.Writer, done func() error) {
	width := f.outWidth()
	if width == 0 {
		return f.IO.Out, func() error { return nil }
	}
	fw := newFitWriter(f.IO.Out, width)
	return fw, fw.flushLine
}

// runeWidth is how many columns a terminal gives r: 0 for combining marks
// and format characters, 2 for East Asian wide and fullwidth characters
// and most emoji, 1 otherwise. Control characters, which one-line views
// never hold, count 0.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

// wideRanges are the East Asian wide and fullwidth blocks, and the emoji
// blocks terminals draw two columns wide.
var wideRanges = [...][2]rune{
	{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec}, {0x23f0, 0x23f0}, {0x23f3, 0x23f3},
	{0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267f, 0x267f}, {0x2693, 0x2693}, {0x26a1, 0x26a1},
	{0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5}, {0x26ce, 0x26ce}, {0x26d4, 0x26d4}, {0x26ea, 0x26ea},
	{0x26f2, 0x26f3}, {0x26f5, 0x26f5}, {0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b},
	{0x2728, 0x2728}, {0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55},
	{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xa960, 0xa97f},
	{0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6},
	{0x16fe0, 0x16fe4}, {0x17000, 0x18cff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
	{0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251}, {0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff},
	{0x1f7e0, 0x1f7eb}, {0x1f90c, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
}

func isWide(r rune) bool {
	if r < wideRanges[0][0] {
		return false
	}
	lo, hi := 0, len(wideRanges)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < wideRanges[m][0]:
			hi = m
		case r > wideRanges[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// escapeLen returns the length of the ANSI escape sequence (CSI: ESC [
// … final byte) that s starts with, 0 when it starts with none.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// displayWidth is how many columns s takes on a terminal: its runes'
// widths, tabs to the next multiple of 8, colour sequences none.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if e := escapeLen(s[i:]); e > 0 {
			i += e
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '\t' {
			n += 8 - n%8
			continue
		}
		n += runeWidth(r)
	}
	return n
}

// fitLine returns the line s (no line break) cut to width columns, with
// "…" as its last column when it was cut; s itself when it fits or width
// is 0. It cuts between runes, never inside one or inside a colour
// sequence, counts wide characters as two columns, and ends the colour a
// cut line may leave on.
func fitLine(s string, width int) string {
	if width <= 0 || displayWidth(s) <= width {
		return s
	}
	var b strings.Builder
	n, coloured := 0, false
	for i := 0; i < len(s); {
		if e := escapeLen(s[i:]); e > 0 {
			b.WriteString(s[i : i+e])
			coloured = s[i:i+e] != sgrReset
			i += e
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := runeWidth(r)
		if r == '\t' {
			w = 8 - n%8
		}
		if n+w > width-1 {
			break
		}
		b.WriteString(s[i : i+size])
		n += w
		i += size
	}
	b.WriteString("…")
	if coloured {
		b.WriteString(sgrReset)
	}
	return b.String()
}

// fitWriter cuts every line written through it to width columns (see
// fitLine): a one-line view, or a graph, on a terminal never wraps, so a
// graph's columns stay in line. A width of 0 passes everything through.
// The last line, when it has no line break, is written by flushLine.
type fitWriter struct {
	w       io.Writer
	width   int
	partial []byte
}

func newFitWriter(w io.Writer, width int) *fitWriter { return &fitWriter{w: w, width: width} }

func (fw *fitWriter) Write(p []byte) (int, error) {
	if fw.width <= 0 {
		return fw.w.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			fw.partial = append(fw.partial, p...)
			break
		}
		line := string(append(fw.partial, p[:i]...))
		fw.partial = fw.partial[:0]
		p = p[i+1:]
		if _, err := io.WriteString(fw.w, fitLine(line, fw.width)+"\n"); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// flushLine writes the last line when it had no line break.
func (fw *fitWriter) flushLine() error {
	if len(fw.partial) == 0 {
		return nil
	}
	line := fitLine(string(fw.partial), fw.width)
	fw.partial = fw.partial[:0]
	_, err := io.WriteString(fw.w, line)
	return err
}

// Flush flushes what fw wraps (see flush), so that output that must show
// at once passes through; a line not ended yet waits for its end, as its
// cut depends on all of it.
func (fw *fitWriter) Flush() error {
	flush(fw.w)
	return nil
}

// errWidth returns the width, in columns, that lines on standard error
// are cut to: 0 when standard error is not a terminal; on one, $COLUMNS
// when it is a positive number, else the terminal's width, else 80.
func errWidth(f *Factory) int {
	if !f.IO.ErrTTY {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(f.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if fd, ok := f.IO.ErrOut.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(int(fd.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultWidth
}
