package tract

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// GraphFormat is a language WriteGraph draws the history in.
type GraphFormat = export.GraphFormat

const (
	// GraphDot is Graphviz's DOT language ('dot -Tsvg' draws it).
	GraphDot = export.GraphDot
	// GraphMermaid is a Mermaid flowchart, which Markdown renderers such
	// as GitHub's draw in a ```mermaid block.
	GraphMermaid = export.GraphMermaid
)

// GraphFormats returns the formats WriteGraph knows.
func GraphFormats() []GraphFormat { return export.GraphFormats() }

// GraphOption configures WriteGraph.
type GraphOption func(*graphConfig)

type graphConfig struct {
	all bool
	rev string
}

// GraphAll draws every commit of the repository: every branch and every
// orphan, as 'tract log --all' lists them.
func GraphAll() GraphOption { return func(c *graphConfig) { c.all = true } }

// GraphFrom draws the history of rev instead of HEAD's.
func GraphFrom(rev string) GraphOption { return func(c *graphConfig) { c.rev = rev } }

// WriteGraph writes the history as a graph in format: by default the
// commits HEAD (or GraphFrom's revision) reaches and the orphans that
// forked from them (its turns' failed attempts, the ranges its summaries
// replaced), with GraphAll every commit. Each commit is a node labelled
// with its short hash, its role or kind and the first line of its text,
// with an edge from each parent to it, oldest at the top. Branches and
// HEAD are labels pointing at their commits; orphans are dashed; failed
// attempts are red with their diagnosis; steering, notes and error commits
// have styles of their own; a summary is drawn as a note with an edge to
// the first and the last commit of the range it replaced. It reads the
// commits' texts a page at a time as it writes; export.GraphWriter writes
// the languages.
func (t *Tract) WriteGraph(ctx context.Context, w io.Writer, format GraphFormat, opts ...GraphOption) error {
	var cfg graphConfig
	for _, o := range opts {
		o(&cfg)
	}
	g, err := export.NewGraphWriter(w, format)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	// The refs first: the outline read after them holds every commit
	// they name (commits are never deleted but by gc).
	var (
		tip     Hash
		allRefs []refs.Ref
	)
	err = t.view(ctx, func(tx store.Tx) error {
		if !cfg.all {
			if tip, err = t.tipOf(tx, cfg.rev); err != nil {
				return err
			}
		}
		allRefs, err = tx.Refs()
		return err
	})
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	o, err := t.Outline(ctx)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	topo := o.Topo()
	if !cfg.all {
		topo, err = o.history(topo, tip)
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	drawn := make(map[Hash]bool, len(topo))
	hs := make([]Hash, len(topo))
	orphan := make(map[Hash]bool)
	for k, tc := range topo {
		hs[len(topo)-1-k] = tc.Hash // oldest first
		drawn[tc.Hash] = true
		if tc.Orphan {
			orphan[tc.Hash] = true
		}
	}
	for c, err := range o.Infos(ctx, hs) {
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
		if err := drawCommit(g, c, orphan[c.Hash], drawn); err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	for _, r := range graphRefs(allRefs, drawn) {
		if err := g.Ref(r); err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	if err := g.Close(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	return nil
}

// drawCommit draws c: its node, an edge from each drawn parent and, for a
// summary, dashed edges to the first and the last commit of the range it
// replaced.
func drawCommit(g *export.GraphWriter, c *CommitInfo, orphan bool, drawn map[Hash]bool) error {
	lines, style := graphLabel(c)
	if err := g.Node(export.GraphNode{ID: nodeID(c.Hash), Label: lines, Tooltip: c.Hash.String(), Style: style, Dashed: orphan}); err != nil {
		return err
	}
	for _, p := range c.Parents {
		if drawn[p] {
			if err := g.Edge(export.GraphEdge{From: nodeID(p), To: nodeID(c.Hash)}); err != nil {
				return err
			}
		}
	}
	if r, ok := c.SummaryRecord(); ok && len(r.Sources) > 0 {
		first, last := r.Sources[0], r.Sources[len(r.Sources)-1]
		if drawn[first] {
			label := fmt.Sprintf("summarises %d, from", len(r.Sources))
			if err := g.Edge(export.GraphEdge{From: nodeID(c.Hash), To: nodeID(first), Label: label, Dashed: true}); err != nil {
				return err
			}
		}
		if drawn[last] && last != first {
			if err := g.Edge(export.GraphEdge{From: nodeID(c.Hash), To: nodeID(last), Label: "to", Dashed: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// history keeps of topo the commits tip reaches and the orphans forked
// from them.
func (o *Outline) history(topo []TopoCommit, tip Hash) ([]TopoCommit, error) {
	if tip.IsZero() {
		return nil, nil
	}
	anc, err := o.g.Reachable(tip)
	if err != nil {
		return nil, err
	}
	in := func(h Hash) bool {
		i, ok := o.g.Index(h)
		return ok && anc[i]
	}
	out := topo[:0]
	for _, tc := range topo {
		if in(tc.Hash) || tc.Orphan && !tc.Fork.IsZero() && in(tc.Fork) {
			out = append(out, tc)
		}
	}
	return out, nil
}

// graphRefs returns the labels of the refs that point at drawn commits
// (HEAD on a branch points at the branch's label), in a stable order.
func graphRefs(all []refs.Ref, drawn map[Hash]bool) []export.GraphRef {
	slices.SortFunc(all, func(a, b refs.Ref) int { return strings.Compare(refOrder(a.Name), refOrder(b.Name)) })
	ids := make(map[string]string)
	var out []export.GraphRef
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
		out = append(out, export.GraphRef{ID: id, Name: name, Target: nodeID(r.Hash), Head: r.Name == refs.HEAD})
	}
	for _, r := range all {
		if r.Name != refs.HEAD || !r.IsSymbolic() {
			continue
		}
		if id, ok := ids[r.Target]; ok {
			out = append(out, export.GraphRef{ID: fmt.Sprintf("r%d", len(out)), Name: refs.HEAD, Target: id, Head: true})
		}
	}
	return out
}

// nodeID names a commit's node: 16 hex digits, unique in any repository
// that is not attacking its own drawing.
func nodeID(h Hash) string { return "c" + h.String()[:16] }

// graphLabel returns a commit's label as lines (short hash and role or
// kind; the first line of its text, cut to 48 runes; for a failed attempt
// its diagnosis, cut to 60) and its style.
func graphLabel(c *CommitInfo) ([]string, export.NodeStyle) {
	what, style := string(c.Role), export.StyleMessage
	switch c.Kind {
	case KindSteering:
		what, style = "steering", export.StyleSteering
	case KindSummary:
		what, style = "summary", export.StyleSummary
	case KindNote:
		what, style = "note", export.StyleNote
	case KindError:
		what, style = "error", export.StyleError
	}
	lines := []string{c.Hash.Short() + " " + what, labelLine(c.Text, 48)}
	diag := ""
	if r, ok := c.FailureRecord(); ok {
		diag = string(r.Type) + ": " + r.Error
	} else if c.Role == RoleAssistant && c.Kind == KindMessage {
		diag = c.Diagnosis()
	}
	if diag != "" {
		lines = append(lines, "✗ "+labelLine(diag, 60))
		if style == export.StyleMessage {
			style = export.StyleFailed
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
