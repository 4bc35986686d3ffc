package dag

import "iter"

// LaneCommit is what a layout (Lanes) needs to know of a commit.
type LaneCommit struct {
	Hash Hash
	// Parent is the commit's first parent: zero for a root, and for a
	// parent missing from the history drawn. Merge commits are drawn
	// along their first parent.
	Parent Hash
	// Orphan says that no branch or HEAD reaches the commit.
	Orphan bool
	// Fork is, for an orphan, the reachable commit its line of orphans
	// forked from: its nearest reachable ancestor along first parents
	// (zero when it has none).
	Fork Hash
}

// Lanes lays out a history as columns, the way 'tract log --all --graph'
// draws it (and 'git log --graph'): a column per line of work, a commit
// on its line's column, and a line that forked ending in the column just
// to its left. Fed the commits in the order [Graph.DrawOrder] gives (each
// line of work in one piece above its fork point), lines never cross. The zero
// Lanes is ready to use; it holds one hash per column, so a layout of any
// length takes memory for its widest row only.
type Lanes struct {
	// cols holds, per column, the commit the column's line reaches next
	// (zero: an empty column).
	cols []Hash
}

// LaneRow is one commit's row of a layout, from the top (the commit's
// row) down to where the next commit's row starts.
type LaneRow struct {
	// Lane is the commit's column, from 0 at the left.
	Lane int
	// Above are the columns on the commit's row: true where a line
	// passes (Lane's included), false for an empty column.
	Above []bool
	// Below are the columns just under the commit: Above, with the
	// commit's line now leading to its parent (false when it has none).
	Below []bool
	// Join is the column the commit's line joins when it ends in another
	// line (the line to its left leads to the same commit), else -1.
	// Then Drop = max(Lane, Join) ends in Keep = min(Lane, Join), and
	// every column right of Drop moves one to the left.
	Join int
	// After are the columns the next commit's row starts from.
	After []bool
	// Edges are the lines leaving the row downward: from a column of
	// Below to a column of After, in order of From.
	Edges []LaneEdge
}

// LaneEdge is a line from column From under one row to column To at the
// top of the next: straight when they are equal, else a line moving left.
type LaneEdge struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Keep and Drop are the columns of a join (see Join): -1 without one.
func (r *LaneRow) Keep() int {
	if r.Join < 0 {
		return -1
	}
	return min(r.Join, r.Lane)
}

// Drop is the column that ends in Keep (-1 without a join).
func (r *LaneRow) Drop() int {
	if r.Join < 0 {
		return -1
	}
	return max(r.Join, r.Lane)
}

// Width returns the columns in use after the rows laid out so far.
func (l *Lanes) Width() int { return len(l.cols) }

// Skip lays out the next commit as Next does, without describing its
// row: for the rows above a page, which only the layout's state needs.
func (l *Lanes) Skip(tc LaneCommit) {
	col := l.place(tc)
	l.cols[col] = tc.Parent
	if join := l.index(tc.Parent, col); join >= 0 {
		drop := max(join, col)
		l.cols = append(l.cols[:drop], l.cols[drop+1:]...)
	} else {
		l.trim(col)
	}
}

// place returns the column of tc, opening one (and one for its fork
// point) when no line leads to it yet.
func (l *Lanes) place(tc LaneCommit) int {
	col := l.index(tc.Hash, -1)
	if col < 0 {
		// A new line of work. An orphan chain starts beside the line of
		// its fork point, even when nothing else leads there yet.
		if tc.Orphan && !tc.Fork.IsZero() && l.index(tc.Fork, -1) < 0 {
			l.cols = append(l.cols, tc.Fork)
		}
		l.cols = append(l.cols, tc.Hash)
		col = len(l.cols) - 1
	}
	return col
}

// trim ends column col when its line reached a root at the right edge,
// and the empty columns left of it.
func (l *Lanes) trim(col int) {
	if l.cols[col].IsZero() && col == len(l.cols)-1 {
		l.cols = l.cols[:col]
		for len(l.cols) > 0 && l.cols[len(l.cols)-1].IsZero() {
			l.cols = l.cols[:len(l.cols)-1]
		}
	}
}

// Next lays out the next commit, tc, in the order DrawOrder gives.
func (l *Lanes) Next(tc LaneCommit) LaneRow {
	col := l.place(tc)
	row := LaneRow{Lane: col, Join: -1, Above: l.passing()}
	l.cols[col] = tc.Parent
	row.Below = l.passing()
	row.Join = l.index(l.cols[col], col)
	switch {
	case row.Join >= 0:
		// Two columns lead to one commit: the right one ends in the left
		// one, and each column to its right moves left too. (In Topo's
		// order the column that ends is col, next to Join.)
		keep, drop := row.Keep(), row.Drop()
		for i, on := range row.Below {
			switch {
			case i == drop:
				row.Edges = append(row.Edges, LaneEdge{i, keep})
			case on && i > drop:
				row.Edges = append(row.Edges, LaneEdge{i, i - 1})
			case on:
				row.Edges = append(row.Edges, LaneEdge{i, i})
			}
		}
		l.cols = append(l.cols[:drop], l.cols[drop+1:]...)
	default:
		l.trim(col)
		for i, on := range row.Below {
			if on {
				row.Edges = append(row.Edges, LaneEdge{i, i})
			}
		}
	}
	row.After = l.passing()
	return row
}

// index returns the column whose line reaches h next, other than skip,
// or -1 (always -1 for a zero h).
func (l *Lanes) index(h Hash, skip int) int {
	if h.IsZero() {
		return -1
	}
	for i, c := range l.cols {
		if i != skip && c == h {
			return i
		}
	}
	return -1
}

// passing returns, per column, whether a line passes there.
func (l *Lanes) passing() []bool {
	out := make([]bool, len(l.cols))
	for i, c := range l.cols {
		out[i] = !c.IsZero()
	}
	return out
}

// LaneCommits yields each commit of order, as DrawOrder gave it for
// include and reachable, with its index in order, in the form Lanes
// takes them: each with its first parent (zero when that is not
// included), and, for an orphan (a commit reachable does not mark;
// reachable nil marks every commit), the commit its line of orphans
// forked from. It holds only the fork points of the orphans it met.
func (g *Graph) LaneCommits(order []int32, include, reachable []bool) iter.Seq2[int, LaneCommit] {
	reached := func(i int) bool { return reachable == nil || reachable[i] }
	parent := func(i int) (int, bool) {
		p, ok := g.FirstParent(i)
		return p, ok && (include == nil || include[p])
	}
	// fork holds, by position, the fork point of each orphan met (-1:
	// none). An orphan's fork point is its parent's, or its parent when
	// that is reachable: walk up to the first one known.
	fork := make(map[int32]int32)
	forkOf := func(i int) int32 {
		var path []int32
		f := int32(-1)
		for {
			if known, ok := fork[int32(i)]; ok {
				f = known
				break
			}
			path = append(path, int32(i))
			p, ok := parent(i)
			if !ok {
				break
			}
			if reached(p) {
				f = int32(p)
				break
			}
			i = p
		}
		for _, j := range path {
			fork[j] = f
		}
		return f
	}
	return func(yield func(int, LaneCommit) bool) {
		for k, i := range order {
			lc := LaneCommit{Hash: g.Hash(int(i)), Orphan: !reached(int(i))}
			if p, ok := parent(int(i)); ok {
				lc.Parent = g.Hash(p)
			}
			if lc.Orphan {
				if f := forkOf(int(i)); f >= 0 {
					lc.Fork = g.Hash(int(f))
				}
			}
			if !yield(k, lc) {
				return
			}
		}
	}
}
