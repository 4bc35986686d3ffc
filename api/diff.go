package api

import (
	"net/http"
	"strings"

	"github.com/tractdag/tract"
)

// DiffLine is a line of /api/diff: "=" in both texts, "-" only in a's,
// "+" only in b's.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// diffResult is /api/diff's object.
type diffResult struct {
	A     *tract.CommitInfo `json:"a"`
	B     *tract.CommitInfo `json:"b"`
	Lines []DiffLine        `json:"lines"`
}

// maxEdits bounds the edits the line diff looks for; texts further
// apart are shown as a's lines removed and b's added.
const maxEdits = 1000

// diff answers GET /api/diff?a=REV&b=REV: both commits (commit records)
// and a line diff of their texts. Without b, a must be an orphan (a
// failed attempt, say) and b is the answer its turn accepted: the
// assistant message on the branch that follows a's fork point.
func (s *Server) diff(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	ra, rb := q.Get("a"), q.Get("b")
	if ra == "" {
		return badRequest(CodeBadRevision, "give a=REV (and b=REV, or leave b out for the answer accepted beside a)")
	}
	a, err := s.t.Show(r.Context(), ra)
	if err != nil {
		return err
	}
	var b *tract.CommitInfo
	if rb != "" {
		if b, err = s.t.Show(r.Context(), rb); err != nil {
			return err
		}
	} else if b, err = s.accepted(r, a.Hash); err != nil {
		return err
	}
	return writeJSON(w, diffResult{A: a, B: b, Lines: lineDiff(a.Text, b.Text)})
}

// accepted finds the answer accepted beside the orphan a: the first
// reachable assistant message whose parent is a's fork point.
func (s *Server) accepted(r *http.Request, a tract.Hash) (*tract.CommitInfo, error) {
	var out *tract.CommitInfo
	err := s.outlines.withShape(r.Context(), func(sh *shape) error {
		topo, pos := sh.topoOrder()
		i, ok := pos[a]
		if !ok || !topo[i].Orphan || topo[i].Fork.IsZero() {
			return badRequest(CodeBadRequest, "a=%s is no orphan with a fork point on a branch: give b=REV", a.Short())
		}
		fork := topo[i].Fork
		var cands []tract.Hash
		for _, tc := range topo {
			if !tc.Orphan && tc.Parent == fork {
				cands = append(cands, tc.Hash)
			}
		}
		cs, err := sh.infos(r.Context(), cands)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if c.Role == tract.RoleAssistant && c.Kind == tract.KindMessage {
				out = c
				return nil
			}
		}
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: "no answer was accepted beside " + a.Short() + " (no assistant message on a branch after " + fork.Short() + "): give b=REV"}
	})
	return out, err
}

// lineDiff returns the lines of a and b as a shortest edit script
// (Myers' algorithm), or, past maxEdits, a's lines removed and b's
// added.
func lineDiff(a, b string) []DiffLine {
	x, y := splitLines(a), splitLines(b)
	// Common prefix and suffix first: the usual case is a small change.
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	out := make([]DiffLine, 0, len(x)+len(y))
	for _, l := range x[:pre] {
		out = append(out, DiffLine{"=", l})
	}
	out = append(out, myers(x[pre:len(x)-suf], y[pre:len(y)-suf])...)
	for _, l := range x[len(x)-suf:] {
		out = append(out, DiffLine{"=", l})
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// myers returns the edit script from x to y.
func myers(x, y []string) []DiffLine {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return replace(x, y)
	}
	most := min(n+m, maxEdits)
	off := most + 1
	v := make([]int, 2*most+3)
	// trace[d] keeps v[off-d-1 : off+d+2] as round d found it: the
	// diagonals round d reads.
	var trace [][]int
	for d := 0; d <= most; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(x, y, trace, d)
			}
		}
	}
	return replace(x, y)
}

// backtrack walks the trace of myers back from (len(x), len(y)).
func backtrack(x, y []string, trace [][]int, d int) []DiffLine {
	var rev []DiffLine
	i, j := len(x), len(y)
	for ; d > 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] }
		k := i - j
		pk := k - 1
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		}
		pi := at(pk)
		pj := pi - pk
		for i > pi && j > pj {
			i, j = i-1, j-1
			rev = append(rev, DiffLine{"=", x[i]})
		}
		if i == pi {
			j--
			rev = append(rev, DiffLine{"+", y[j]})
		} else {
			i--
			rev = append(rev, DiffLine{"-", x[i]})
		}
	}
	for i > 0 && j > 0 {
		i, j = i-1, j-1
		rev = append(rev, DiffLine{"=", x[i]})
	}
	out := make([]DiffLine, len(rev))
	for k, l := range rev {
		out[len(rev)-1-k] = l
	}
	return out
}

func replace(x, y []string) []DiffLine {
	out := make([]DiffLine, 0, len(x)+len(y))
	for _, l := range x {
		out = append(out, DiffLine{"-", l})
	}
	for _, l := range y {
		out = append(out, DiffLine{"+", l})
	}
	return out
}
