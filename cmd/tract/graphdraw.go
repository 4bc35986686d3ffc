package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// lanes draws a history as 'git log --graph' does: a column per line of
// work, '*' for a commit, '|' for a line passing by, '/' where a line
// that forked ends in the one to its left. It takes the commits in the
// order Outline.Topo gives (each line of work in one piece above its fork
// point), in which a line only ever ends in the column just to its left,
// so lines never cross.
type lanes struct {
	w io.Writer
	p palette
	// cols holds, per column, the commit the column's line reaches next.
	cols []tract.Hash
	// line is the row being written.
	line []byte
}

// row writes one line: the columns as they stand, with '*' in column
// star (-1: none), then text.
func (l *lanes) row(star int, text string) error {
	l.line = l.line[:0]
	for i := range l.cols {
		switch {
		case i == star:
			l.line = append(l.line, l.p.graph("*")...)
		case l.cols[i].IsZero():
			l.line = append(l.line, ' ')
		default:
			l.line = append(l.line, l.p.graph("|")...)
		}
		l.line = append(l.line, ' ')
	}
	if text == "" || text[0] == ' ' {
		l.line = bytes.TrimRight(l.line, " ")
	}
	l.line = append(append(l.line, text...), '\n')
	_, err := l.w.Write(l.line)
	return err
}

// commit draws one commit, its text being the lines of body (the first
// beside the '*', the others below it beside the columns), and note
// (what orphaned the chain the commit ends) beside where its line joins
// the one it forked from.
func (l *lanes) commit(tc tract.TopoCommit, body string, note string) error {
	col := -1
	for i, h := range l.cols {
		if h == tc.Hash {
			col = i
			break
		}
	}
	if col < 0 {
		// A new line of work. An orphan chain starts beside the line of
		// its fork point, even when nothing else leads there yet.
		if tc.Orphan && !tc.Fork.IsZero() && !l.has(tc.Fork) {
			l.cols = append(l.cols, tc.Fork)
		}
		l.cols = append(l.cols, tc.Hash)
		col = len(l.cols) - 1
	}
	first, rest, more := strings.Cut(body, "\n")
	if err := l.row(col, first); err != nil {
		return err
	}
	l.cols[col] = tc.Parent
	for more {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		if err := l.row(-1, line); err != nil {
			return err
		}
	}
	return l.settle(col, note)
}

// settle ends column col when its line has joined another (the commit
// it reaches next is already another column's) or reached a root, and
// writes note (what orphaned the chain that ended) beside the join.
func (l *lanes) settle(col int, note string) error {
	join := -1
	for i, h := range l.cols {
		if i != col && h == l.cols[col] && !h.IsZero() {
			join = i
			break
		}
	}
	if note != "" {
		note = "  " + l.p.dim(note)
	}
	switch {
	case join >= 0:
		// Two columns lead to one commit: the right one ends in the left
		// one, "|/", and each column to its right moves left too. (In
		// Topo's order the column that ends is col, next to join.)
		keep, drop := min(join, col), max(join, col)
		l.line = l.line[:0]
		for i := range drop {
			if i == keep || !l.cols[i].IsZero() {
				l.line = append(l.line, l.p.graph("|")...)
			} else {
				l.line = append(l.line, ' ')
			}
			if i < drop-1 {
				l.line = append(l.line, ' ')
			}
		}
		l.line = append(l.line, l.p.graph("/")...)
		for range l.cols[drop+1:] {
			l.line = append(l.line, ' ')
			l.line = append(l.line, l.p.graph("/")...)
		}
		l.line = append(append(l.line, note...), '\n')
		l.cols = append(l.cols[:drop], l.cols[drop+1:]...)
		_, err := l.w.Write(l.line)
		return err
	case l.cols[col].IsZero():
		// A root: the column ends.
		if col == len(l.cols)-1 {
			l.cols = l.cols[:col]
			for len(l.cols) > 0 && l.cols[len(l.cols)-1].IsZero() {
				l.cols = l.cols[:len(l.cols)-1]
			}
		}
		if note != "" {
			return l.row(-1, note)
		}
	case note != "":
		return l.row(-1, note)
	}
	return nil
}

func (l *lanes) has(h tract.Hash) bool {
	for _, c := range l.cols {
		if c == h {
			return true
		}
	}
	return false
}

// renderGraphAll draws every commit of o as 'git log --graph --all': the
// branches and HEAD's line as columns, each orphan chain beside the commit
// it forked from with the reflog action that orphaned it. With limit > 0
// it stops after that many commits. It reads the commits' texts a page at
// a time as it draws; line renders one commit (one or more lines).
func renderGraphAll(ctx context.Context, w io.Writer, p palette, o *tract.Outline, limit int, line func(*tract.CommitInfo) string) error {
	topo := o.Topo()
	if len(topo) == 0 {
		return nil // the caller says so, on stderr
	}
	if limit > 0 && len(topo) > limit {
		topo = topo[:limit]
	}
	hs := make([]tract.Hash, len(topo))
	for i, tc := range topo {
		hs[i] = tc.Hash
	}
	l := &lanes{w: w, p: p}
	k := 0
	for c, err := range o.Infos(ctx, hs) {
		if err != nil {
			return err
		}
		tc := topo[k]
		k++
		if err := l.commit(tc, line(c), chainNote(tc)); err != nil {
			return err
		}
	}
	return nil
}

// chainNote says, on the commit that ends an orphan chain, what orphaned
// the chain ("" on any other commit).
func chainNote(tc tract.TopoCommit) string {
	if tc.Ends == nil {
		return ""
	}
	note := orphanedBy(tc.Ends)
	if tc.Ends.Fork.IsZero() {
		note += " (no reachable ancestor)"
	}
	return note
}

func orphanedBy(oc *tract.OrphanOutline) string {
	n := english.Count(len(oc.Commits), "commit", "commits")
	switch {
	case oc.Action == "conflict":
		// "conflict: answer kept off main, which moved from … to …"
		return fmt.Sprintf("stranded by a %s (%s)", oc.Reason, n)
	case oc.Reason != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Reason, n)
	case oc.Action != "":
		return fmt.Sprintf("orphaned by %s (%s)", oc.Action, n)
	}
	return "orphaned (" + n + ")"
}
