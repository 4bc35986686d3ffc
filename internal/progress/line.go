package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Line renders progress on one line of a terminal, rewritten in place
// with a carriage return and erased by Clear. A nil *Line draws nothing:
// a command gets one only when standard error is a terminal and it was
// not asked to be quiet.
type Line struct {
	mu    sync.Mutex // guards the fields below, and writes to w
	w     io.Writer
	label string
	shown bool
	last  time.Time
	now   func() time.Time
}

// NewLine returns a Line that writes "label: …" to w.
func NewLine(w io.Writer, label string) *Line {
	return &Line{w: w, label: label, now: time.Now}
}

// Set shows text after the label, unless the line was drawn less than
// Interval ago (the last state then waits for the next Set, or Clear).
func (l *Line) Set(text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.shown && now.Sub(l.last) < Interval {
		return
	}
	l.last, l.shown = now, true
	fmt.Fprintf(l.w, "\r\x1b[K%s: %s", l.label, text)
}

// Clear erases the line, if it was drawn.
func (l *Line) Clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// Count formats done of total units: "1,234 of 5,000 commits (24%)", or
// "1,234 objects" when the total is not known (0). unit is a plural
// ending in "s", which one alone goes without: "1 conversation".
func Count(done, total int64, unit string) string {
	if total <= 0 {
		if done == 1 {
			unit = strings.TrimSuffix(unit, "s")
		}
		return thousands(done) + " " + unit
	}
	return fmt.Sprintf("%s of %s %s (%d%%)", thousands(done), thousands(total), unit, done*100/total)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
