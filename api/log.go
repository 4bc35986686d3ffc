package api

import (
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
)

// logPage is the object of 'tract log --json' (and of log --all), with the
// cursor of the next page.
type logPage struct {
	Commits []*tract.CommitInfo  `json:"commits"`
	Orphans []*tract.OrphanChain `json:"orphans"`
	// Next is the cursor of the next page; absent on the last.
	Next string `json:"next,omitempty"`
}

// hashCursor reads a cursor that names a commit: 64 hex digits (zero
// when absent).
func hashCursor(r *http.Request) (tract.Hash, bool, error) {
	v := r.URL.Query().Get("cursor")
	if v == "" {
		return tract.Hash{}, false, nil
	}
	h, err := dag.ParseHash(v)
	if err != nil || len(v) != 64 {
		return tract.Hash{}, false, badRequest(CodeBadCursor, "cursor %q: pass the \"next\" of the page before (64 hex digits), or leave cursor out for the first page", v)
	}
	return h, true, nil
}

// staleCursor is the error of a cursor whose commit is gone.
func staleCursor(h tract.Hash) *Error {
	return badRequest(CodeBadCursor, "cursor %s: that commit is no longer in the history (deleted since the page before): start again without cursor", h.Short())
}

// cursorStart returns where a page of an order starts: 0 without a
// cursor, else the cursor commit's position in the order (pos).
func cursorStart(pos map[tract.Hash]int, cursor tract.Hash, hasCursor bool) (int, error) {
	if !hasCursor {
		return 0, nil
	}
	p, ok := pos[cursor]
	if !ok {
		return 0, staleCursor(cursor)
	}
	return p, nil
}

// log answers GET /api/log: 'tract log --json' (rev=REV, from HEAD by
// default) or, with all=1, 'tract log --all --json', a page of limit
// commits at a time.
func (s *Server) log(w http.ResponseWriter, r *http.Request) error {
	n, err := limit(r)
	if err != nil {
		return err
	}
	all, err := flag(r, "all")
	if err != nil {
		return err
	}
	cursor, hasCursor, err := hashCursor(r)
	if err != nil {
		return err
	}
	rev := r.URL.Query().Get("rev")
	if all {
		if rev != "" {
			return badRequest(CodeBadRequest, "all=1 lists every commit; it takes no rev (leave out rev, or all)")
		}
		return s.logAll(w, r, n, cursor, hasCursor)
	}
	from := rev
	if hasCursor {
		from = cursor.String()
	}
	opts := []tract.LogOption{tract.LogLimit(n + 1)}
	if from != "" {
		opts = append(opts, tract.LogFrom(from))
	}
	page := logPage{Commits: []*tract.CommitInfo{}, Orphans: []*tract.OrphanChain{}}
	for c, err := range s.t.LogSeq(r.Context(), opts...) {
		if err != nil {
			if hasCursor && errors.Is(err, tract.ErrUnknownRevision) {
				return staleCursor(cursor)
			}
			return err
		}
		if len(page.Commits) == n {
			page.Next = c.Hash.String()
			break
		}
		page.Commits = append(page.Commits, c)
	}
	return writeJSON(w, page)
}

// logAll answers a page of log --all: the commits from the cursor's on
// in log --all's order (the reachable ones, then each orphan chain's),
// a chain cut by the page's end given on each page with its part.
func (s *Server) logAll(w http.ResponseWriter, r *http.Request, n int, cursor tract.Hash, hasCursor bool) error {
	var page logPage
	err := s.outlines.withShape(r.Context(), func(sh *shape) error {
		flat, chains, pos := sh.flatOrder()
		start, err := cursorStart(pos, cursor, hasCursor)
		if err != nil {
			return err
		}
		end := min(start+n, len(flat))
		cs, err := sh.infos(r.Context(), flat[start:end])
		if err != nil {
			return err
		}
		page = logPage{Commits: []*tract.CommitInfo{}, Orphans: []*tract.OrphanChain{}}
		reach := len(sh.o.Commits)
		if start < reach {
			page.Commits = cs[:min(reach, end)-start]
		}
		for k, at := range chains {
			ch := sh.o.Orphans[k]
			lo, hi := max(at, start), min(at+len(ch.Commits), end)
			if lo >= hi {
				continue
			}
			page.Orphans = append(page.Orphans, &tract.OrphanChain{Fork: ch.Fork, Commits: cs[lo-start : hi-start],
				Action: ch.Action, Reason: ch.Reason, When: ch.When})
		}
		if end < len(flat) {
			page.Next = flat[end].String()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, page)
}

// GraphRow is one row of /api/graph: a commit of 'tract log --all
// --graph' and its place in the drawing (docs/json.md, "The HTTP
// API").
type GraphRow struct {
	Hash    tract.Hash   `json:"hash"`
	Parents []tract.Hash `json:"parents"`
	Kind    tract.Kind   `json:"kind"`
	Role    tract.Role   `json:"role"`
	// Text is the first line of the commit's text, cut to maxRowText
	// characters (the whole text: /api/commits/HASH).
	Text string   `json:"text"`
	Time string   `json:"time"`
	Refs []string `json:"refs"`
	// Orphan: no branch or HEAD reaches the commit.
	Orphan bool `json:"orphan"`
	// Failure: a failed attempt (a failure record, or a rejected answer).
	Failure   bool   `json:"failure"`
	Diagnosis string `json:"diagnosis,omitempty"`
	// Fork is, for an orphan, the reachable commit its chain forked from.
	Fork string `json:"fork,omitempty"`
	// Note, on the row that ends an orphan chain, says what orphaned it.
	Note string `json:"note,omitempty"`
	// Lane is the commit's column; Width the columns on its row.
	Lane  int `json:"lane"`
	Width int `json:"width"`
	// Columns are the columns on the commit's row: true where a line
	// passes (Lane's included).
	Columns []bool `json:"columns"`
	// Lanes are the lines leaving the row downward, from a column under
	// this row to a column of the next.
	Lanes []dag.LaneEdge `json:"lanes"`
}

// graphPage is /api/graph's object.
type graphPage struct {
	Rows []GraphRow `json:"rows"`
	// Total is the rows of the whole graph.
	Total int    `json:"total"`
	Next  string `json:"next,omitempty"`
}

// maxRowText bounds a graph row's text, in characters.
const maxRowText = 200

// graph answers GET /api/graph?limit=N&cursor=C: the rows of 'tract log
// --all --graph', laid out by dag.Lanes, a page at a time.
func (s *Server) graph(w http.ResponseWriter, r *http.Request) error {
	n, err := limit(r)
	if err != nil {
		return err
	}
	cursor, hasCursor, err := hashCursor(r)
	if err != nil {
		return err
	}
	var page graphPage
	err = s.outlines.withShape(r.Context(), func(sh *shape) error {
		topo, pos := sh.topoOrder()
		start, err := cursorStart(pos, cursor, hasCursor)
		if err != nil {
			return err
		}
		end := min(start+n, len(topo))
		// The layout of a row depends on the rows above it: lay them out
		// (hashes only, no text read).
		var l dag.Lanes
		for _, tc := range topo[:start] {
			l.Skip(tc.LaneCommit)
		}
		hs := make([]tract.Hash, end-start)
		for i, tc := range topo[start:end] {
			hs[i] = tc.Hash
		}
		cs, err := sh.infos(r.Context(), hs)
		if err != nil {
			return err
		}
		page = graphPage{Rows: make([]GraphRow, len(cs)), Total: len(topo)}
		for i, c := range cs {
			tc := topo[start+i]
			lr := l.Next(tc.LaneCommit)
			row := GraphRow{Hash: c.Hash, Parents: c.Parents, Kind: c.Kind, Role: c.Role, Text: firstLine(c.Text, maxRowText),
				Time: c.Time.UTC().Format(time.RFC3339Nano), Refs: c.Refs, Orphan: tc.Orphan,
				Failure: failed(c), Diagnosis: c.Diagnosis(), Note: tc.Note(),
				Lane: lr.Lane, Width: len(lr.Above), Columns: lr.Above, Lanes: lr.Edges}
			if row.Lanes == nil {
				row.Lanes = []dag.LaneEdge{}
			}
			if tc.Orphan && !tc.Fork.IsZero() {
				row.Fork = tc.Fork.String()
			}
			page.Rows[i] = row
		}
		if end < len(topo) {
			page.Next = topo[end].Hash.String()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, page)
}

// failed reports a failed attempt: one with a failure record, or an
// answer its validators rejected.
func failed(c *tract.CommitInfo) bool {
	if c.MetaValue(tract.MetaFailure) != nil {
		return true
	}
	v, ok := c.MetaValue(tract.MetaValid).(bool)
	return ok && !v
}

// firstLine returns the first line of s, cut to max characters (with
// "…" when cut).
func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimRight(s, "\r")
	if utf8.RuneCountInString(s) > max {
		i, n := 0, 0
		for i = range s {
			if n == max {
				break
			}
			n++
		}
		return s[:i] + "…"
	}
	return s
}
