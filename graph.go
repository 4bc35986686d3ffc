package tract

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// GraphFormat is a language WriteGraph draws the history in.
type GraphFormat string

const (
	// GraphDot is Graphviz's DOT language ('dot -Tsvg' draws it).
	GraphDot GraphFormat = "dot"
	// GraphMermaid is a Mermaid flowchart, which Markdown renderers such
	// as GitHub's draw in a ```mermaid block.
	GraphMermaid GraphFormat = "mermaid"
)

// GraphFormats returns the formats WriteGraph knows.
func GraphFormats() []GraphFormat { return []GraphFormat{GraphDot, GraphMermaid} }

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
// with an edge from each parent to it, oldest at the top. Branches and HEAD are labels pointing at their
// commits; orphans are dashed; failed attempts are red with their
// diagnosis; steering, notes and error commits have styles of their own;
// a summary is drawn as a note with an edge to the first and the last
// commit of the range it replaced. It reads the commits' texts a page at a
// time as it writes.
func (t *Tract) WriteGraph(ctx context.Context, w io.Writer, format GraphFormat, opts ...GraphOption) error {
	var cfg graphConfig
	for _, o := range opts {
		o(&cfg)
	}
	var g graphWriter
	switch format {
	case GraphDot:
		g = &dotWriter{}
	case GraphMermaid:
		g = &mermaidWriter{}
	default:
		return fmt.Errorf("graph: %w: %q (want dot or mermaid)", ErrUnknownGraphFormat, format)
	}
	// The refs first: the outline read after them holds every commit
	// they name (commits are never deleted but by gc).
	var (
		tip     Hash
		allRefs []refs.Ref
		err     error
	)
	err = t.view(func(tx store.Tx) error {
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
	bw := bufio.NewWriterSize(w, 64<<10)
	g.start(bw)
	for c, err := range o.Infos(ctx, hs) {
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
		g.commit(bw, c, orphan[c.Hash])
		for _, p := range c.Parents {
			if drawn[p] {
				g.edge(bw, nodeID(p), nodeID(c.Hash), "", false)
			}
		}
		if r, ok := c.SummaryRecord(); ok && len(r.Sources) > 0 {
			first, last := r.Sources[0], r.Sources[len(r.Sources)-1]
			n := len(r.Sources)
			if drawn[first] {
				g.edge(bw, nodeID(c.Hash), nodeID(first), fmt.Sprintf("summarises %d, from", n), true)
			}
			if drawn[last] && last != first {
				g.edge(bw, nodeID(c.Hash), nodeID(last), "to", true)
			}
		}
	}
	g.refs(bw, graphRefs(allRefs, drawn))
	g.end(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("graph: %w", err)
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

// graphRef is a label of the graph: a branch, HEAD or ORIG_HEAD, and what
// it points at (a commit, or for HEAD on a branch that branch's label).
type graphRef struct {
	id, name string
	commit   Hash
	// branch is, for HEAD on a branch, the id of that branch's label.
	branch string
	head   bool
}

// graphRefs returns the labels of the refs that point at drawn commits
// (HEAD on a branch points at the branch's label), in a stable order.
func graphRefs(all []refs.Ref, drawn map[Hash]bool) []graphRef {
	slices.SortFunc(all, func(a, b refs.Ref) int { return strings.Compare(refOrder(a.Name), refOrder(b.Name)) })
	ids := make(map[string]string)
	var out []graphRef
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
		out = append(out, graphRef{id: id, name: name, commit: r.Hash, head: r.Name == refs.HEAD})
	}
	for _, r := range all {
		if r.Name != refs.HEAD || !r.IsSymbolic() {
			continue
		}
		if id, ok := ids[r.Target]; ok {
			out = append(out, graphRef{id: fmt.Sprintf("r%d", len(out)), name: refs.HEAD, branch: id, head: true})
		}
	}
	return out
}

// graphWriter writes one graph language. Writes go to a bufio.Writer,
// whose first error Flush reports.
type graphWriter interface {
	start(w *bufio.Writer)
	commit(w *bufio.Writer, c *CommitInfo, orphan bool)
	edge(w *bufio.Writer, from, to, label string, dashed bool)
	refs(w *bufio.Writer, rs []graphRef)
	end(w *bufio.Writer)
}

// nodeID names a commit's node: 16 hex digits, unique in any repository
// that is not attacking its own drawing.
func nodeID(h Hash) string { return "c" + h.String()[:16] }

// commitStyle is how a commit is drawn.
type commitStyle string

const (
	styleMessage  commitStyle = "message"
	styleFailed   commitStyle = "failed"
	styleSteering commitStyle = "steering"
	styleSummary  commitStyle = "summary"
	styleNote     commitStyle = "note"
	styleError    commitStyle = "error"
)

// graphLabel returns a commit's label as lines (short hash and role or
// kind; the first line of its text, cut to 48 runes; for a failed attempt
// its diagnosis, cut to 60) and its style.
func graphLabel(c *CommitInfo) ([]string, commitStyle) {
	what, style := string(c.Role), styleMessage
	switch c.Kind {
	case KindSteering:
		what, style = "steering", styleSteering
	case KindSummary:
		what, style = "summary", styleSummary
	case KindNote:
		what, style = "note", styleNote
	case KindError:
		what, style = "error", styleError
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
		if style == styleMessage {
			style = styleFailed
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

// dotWriter writes Graphviz DOT.
type dotWriter struct{}

func (dotWriter) start(w *bufio.Writer) {
	w.WriteString("digraph tract {\n" +
		"  rankdir=TB;\n" +
		"  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n" +
		"  edge [arrowsize=0.6, fontname=\"Helvetica\"];\n")
}

// dotStyle returns the node attributes of a style.
func dotStyle(style commitStyle) string {
	switch style {
	case styleFailed:
		return `, color=red3, fontcolor=red3, fillcolor=mistyrose`
	case styleSteering:
		return `, color=darkorange3, fillcolor=papayawhip`
	case styleSummary:
		return `, shape=note, style=filled, fillcolor=lightyellow`
	case styleNote:
		return `, fillcolor=gray95`
	case styleError:
		return `, color=red3, fillcolor=mistyrose, style="filled"`
	}
	return ""
}

func (dotWriter) commit(w *bufio.Writer, c *CommitInfo, orphan bool) {
	lines, style := graphLabel(c)
	attrs := dotStyle(style)
	if orphan {
		if style == styleSummary || style == styleError {
			attrs += `, style="filled,dashed"`
		} else {
			attrs += `, style="rounded,filled,dashed"`
		}
	}
	fmt.Fprintf(w, "  %s [label=%s, tooltip=%s%s];\n", nodeID(c.Hash), dotQuote(strings.Join(lines, "\n")), dotQuote(c.Hash.String()), attrs)
}

func (dotWriter) edge(w *bufio.Writer, from, to, label string, dashed bool) {
	attrs := ""
	if dashed {
		// A summary's link to its range does not shape the layout.
		attrs = fmt.Sprintf(" [style=dashed, color=gray40, fontsize=9, constraint=false, label=%s]", dotQuote(label))
	}
	fmt.Fprintf(w, "  %s -> %s%s;\n", from, to, attrs)
}

func (dotWriter) refs(w *bufio.Writer, rs []graphRef) {
	for _, r := range rs {
		shape := "shape=cds, fillcolor=lightblue"
		if r.head {
			shape = "shape=cds, fillcolor=gold"
		}
		fmt.Fprintf(w, "  %s [label=%s, %s, style=filled];\n", r.id, dotQuote(r.name), shape)
		to := r.branch
		if to == "" {
			to = nodeID(r.commit)
		}
		fmt.Fprintf(w, "  %s -> %s [style=dotted, arrowhead=none];\n  { rank=same; %s; %s; }\n", r.id, to, r.id, to)
	}
}

func (dotWriter) end(w *bufio.Writer) { w.WriteString("}\n") }

// dotQuote quotes s as a DOT string: backslashes and double quotes
// escaped, each newline the centred line break \n, other control
// characters as spaces.
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mermaidWriter writes a Mermaid flowchart.
type mermaidWriter struct{}

func (mermaidWriter) start(w *bufio.Writer) {
	w.WriteString("flowchart TD\n" +
		"  classDef message fill:#fff,stroke:#555\n" +
		"  classDef failed fill:#fee,stroke:#c00,color:#900\n" +
		"  classDef steering fill:#fff3e0,stroke:#e65100\n" +
		"  classDef summary fill:#ffffe0,stroke:#aa0\n" +
		"  classDef note fill:#f4f4f4,stroke:#999\n" +
		"  classDef error fill:#fee,stroke:#c00\n" +
		"  classDef orphan stroke-dasharray:4 3\n" +
		"  classDef ref fill:#def,stroke:#369\n" +
		"  classDef head fill:#fd6,stroke:#a70\n")
}

func (mermaidWriter) commit(w *bufio.Writer, c *CommitInfo, orphan bool) {
	lines, style := graphLabel(c)
	open, closing := `["`, `"]`
	if style == styleSummary {
		open, closing = `[/"`, `"/]`
	}
	fmt.Fprintf(w, "  %s%s%s%s:::%s\n", nodeID(c.Hash), open, mermaidEscape(strings.Join(lines, "\n")), closing, style)
	if orphan {
		fmt.Fprintf(w, "  class %s orphan\n", nodeID(c.Hash))
	}
}

func (mermaidWriter) edge(w *bufio.Writer, from, to, label string, dashed bool) {
	if dashed {
		fmt.Fprintf(w, "  %s -.->|\"%s\"| %s\n", from, mermaidEscape(label), to)
		return
	}
	fmt.Fprintf(w, "  %s --> %s\n", from, to)
}

func (mermaidWriter) refs(w *bufio.Writer, rs []graphRef) {
	for _, r := range rs {
		class := "ref"
		if r.head {
			class = "head"
		}
		fmt.Fprintf(w, "  %s([\"%s\"]):::%s\n", r.id, mermaidEscape(r.name), class)
		to := r.branch
		if to == "" {
			to = nodeID(r.commit)
		}
		fmt.Fprintf(w, "  %s -.- %s\n", r.id, to)
	}
}

func (mermaidWriter) end(*bufio.Writer) {}

// mermaidEscape makes s safe inside a double-quoted Mermaid label: the
// characters Mermaid's parser or its HTML labels would read (quotes, #,
// <, >, &, backticks) as numeric entity codes (#34; and so on), each
// newline a <br>, other control characters spaces.
func mermaidEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '"', r == '#', r == '<', r == '>', r == '&', r == '`':
			fmt.Fprintf(&b, "#%d;", r)
		case r == '\n':
			b.WriteString("<br>")
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
