package export

import (
	"fmt"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/refs"
)

// GraphCommit is a commit as GraphWriter.Commit draws it.
type GraphCommit struct {
	Hash    dag.Hash
	Parents []dag.Hash
	Kind    dag.Kind
	Role    dag.Role
	// Text is the commit's text; its first line is drawn.
	Text string
	// Diagnosis, when not empty, says why an attempt failed.
	Diagnosis string
	// Orphan draws the node dashed: no ref reaches it.
	Orphan bool
	// Sources are the commits a summary replaced, oldest first.
	Sources []dag.Hash
}

// Commit draws c: its node, an edge from each parent in drawn and, for a
// summary, dashed edges to the first and the last commit of the range it
// replaced.
func (g *GraphWriter) Commit(c GraphCommit, drawn map[dag.Hash]bool) error {
	lines, style := commitLabel(c)
	if err := g.Node(GraphNode{ID: NodeID(c.Hash), Label: lines, Tooltip: c.Hash.String(), Style: style, Dashed: c.Orphan}); err != nil {
		return err
	}
	for _, p := range c.Parents {
		if drawn[p] {
			if err := g.Edge(GraphEdge{From: NodeID(p), To: NodeID(c.Hash)}); err != nil {
				return err
			}
		}
	}
	if len(c.Sources) > 0 {
		first, last := c.Sources[0], c.Sources[len(c.Sources)-1]
		if drawn[first] {
			label := fmt.Sprintf("summarises %d, from", len(c.Sources))
			if err := g.Edge(GraphEdge{From: NodeID(c.Hash), To: NodeID(first), Label: label, Dashed: true}); err != nil {
				return err
			}
		}
		if drawn[last] && last != first {
			if err := g.Edge(GraphEdge{From: NodeID(c.Hash), To: NodeID(last), Label: "to", Dashed: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// NodeID names a commit's node: 16 hex digits, unique in any repository
// that is not attacking its own drawing.
func NodeID(h dag.Hash) string { return "c" + h.String()[:16] }

// GraphRefs returns the labels of the refs in all (in their order) that
// point at drawn commits; HEAD on a branch points at the branch's label.
func GraphRefs(all []refs.Ref, drawn map[dag.Hash]bool) []GraphRef {
	ids := make(map[string]string)
	var out []GraphRef
	for _, r := range all {
		if r.IsSymbolic() || !drawn[r.Hash] {
			continue
		}
		name := r.Name
		if b, ok := refs.BranchName(name); ok {
			name = b
		}
		id := fmt.Sprintf("r%d", len(out))
		ids[r.Name] = id
		out = append(out, GraphRef{ID: id, Name: name, Target: NodeID(r.Hash), Head: r.Name == refs.HEAD})
	}
	for _, r := range all {
		if r.Name != refs.HEAD || !r.IsSymbolic() {
			continue
		}
		if id, ok := ids[r.Target]; ok {
			out = append(out, GraphRef{ID: fmt.Sprintf("r%d", len(out)), Name: refs.HEAD, Target: id, Head: true})
		}
	}
	return out
}

// commitLabel returns a commit's label as lines (short hash and role or
// kind; the first line of its text, cut to 48 runes; for a failed attempt
// its diagnosis, cut to 60) and its style.
func commitLabel(c GraphCommit) ([]string, NodeStyle) {
	what, style := string(c.Role), StyleMessage
	switch c.Kind {
	case dag.KindSteering:
		what, style = "steering", StyleSteering
	case dag.KindSummary:
		what, style = "summary", StyleSummary
	case dag.KindNote:
		what, style = "note", StyleNote
	case dag.KindError:
		what, style = "error", StyleError
	}
	lines := []string{c.Hash.Short() + " " + what, labelLine(c.Text, 48)}
	if c.Diagnosis != "" {
		lines = append(lines, "✗ "+labelLine(c.Diagnosis, 60))
		if style == StyleMessage {
			style = StyleFailed
		}
	}
	return lines, style
}

// labelLine is the first line of s cut to width runes, with "…" when
// anything was left out.
func labelLine(s string, width int) string {
	l := english.FirstLine(s, width)
	if len(l) < len(strings.TrimRight(s, "\r\n")) && !strings.HasSuffix(l, "…") {
		l += "…"
	}
	return l
}
