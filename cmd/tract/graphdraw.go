package main

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/tractdag/tract"
)

// lanes draws a history as 'git log --graph' does: a column per line of
// work, '*' for a commit, '|' for a line passing by, '/' where a line
// that forked ends in the one to its left. The layout is tract.Lanes's
// (the web view draws the same one); lanes writes it as text.
type lanes struct {
	w      io.Writer
	p      palette
	layout tract.Lanes
	// line is the row being written.
	line []byte
}

// row writes one line: the columns cols, with '*' in column star (-1:
// none), then text.
func (l *lanes) row(cols []bool, star int, text string) error {
	l.line = l.line[:0]
	for i, on := range cols {
		switch {
		case i == star:
			l.line = append(l.line, l.p.graph("*")...)
		case !on:
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
	r := l.layout.Next(tc.LaneCommit)
	first, rest, more := strings.Cut(body, "\n")
	if err := l.row(r.Above, r.Lane, first); err != nil {
		return err
	}
	for more {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		if err := l.row(r.Below, -1, line); err != nil {
			return err
		}
	}
	if note != "" {
		note = "  " + l.p.dim(note)
	}
	switch {
	case r.Join >= 0:
		// Two columns lead to one commit: the right one ends in the left
		// one, "|/", and each column to its right moves left too.
		keep, drop := r.Keep(), r.Drop()
		l.line = l.line[:0]
		for i := range drop {
			if i == keep || r.Below[i] {
				l.line = append(l.line, l.p.graph("|")...)
			} else {
				l.line = append(l.line, ' ')
			}
			if i < drop-1 {
				l.line = append(l.line, ' ')
			}
		}
		l.line = append(l.line, l.p.graph("/")...)
		for range r.Below[drop+1:] {
			l.line = append(l.line, ' ')
			l.line = append(l.line, l.p.graph("/")...)
		}
		l.line = append(append(l.line, note...), '\n')
		_, err := l.w.Write(l.line)
		return err
	case note != "":
		return l.row(r.After, -1, note)
	}
	return nil
}

// renderGraphAll draws every commit of o as 'git log --graph --all': the
// branches and HEAD's line as columns, each orphan chain beside the commit
// it forked from with the reflog action that orphaned it. With limit > 0
// it stops after that many commits. It reads the commits' texts a page at
// a time as it draws; line renders one commit (one or more lines).
func renderGraphAll(ctx context.Context, w io.Writer, p palette, o *tract.Outline, limit int, line func(*tract.CommitInfo) string) error {
	l := &lanes{w: w, p: p}
	// A chunk of commits at a time: the outline's order holds a position
	// per commit, the chunk the rest.
	var chunk []tract.TopoCommit
	var hs []tract.Hash
	draw := func() error {
		hs = hs[:0]
		for _, tc := range chunk {
			hs = append(hs, tc.Hash)
		}
		k := 0
		for c, err := range o.Infos(ctx, hs) {
			if err != nil {
				return err
			}
			tc := chunk[k]
			k++
			if err := l.commit(tc, line(c), chainNote(tc)); err != nil {
				return err
			}
		}
		chunk = chunk[:0]
		return nil
	}
	n := 0
	for tc := range o.TopoSeq() {
		if limit > 0 && n >= limit {
			break
		}
		n++
		if chunk = append(chunk, tc); len(chunk) == graphChunk {
			if err := draw(); err != nil {
				return err
			}
		}
	}
	return draw()
}

// graphChunk is how many commits renderGraphAll reads at a time.
const graphChunk = 4096

// chainNote says, on the commit that ends an orphan chain, what orphaned
// the chain ("" on any other commit).
func chainNote(tc tract.TopoCommit) string { return tc.Note() }

func orphanedBy(oc *tract.OrphanOutline) string { return oc.Description() }
