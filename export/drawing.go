package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// GraphFormat is a language a GraphWriter draws a history in.
type GraphFormat string

// The formats a GraphWriter writes.
const (
	// GraphDot is Graphviz's DOT language ('dot -Tsvg' draws it).
	GraphDot GraphFormat = "dot"
	// GraphMermaid is a Mermaid flowchart, which Markdown renderers such
	// as GitHub's draw in a ```mermaid block.
	GraphMermaid GraphFormat = "mermaid"
)

// GraphFormats returns the formats a GraphWriter writes.
func GraphFormats() []GraphFormat { return []GraphFormat{GraphDot, GraphMermaid} }

// NodeStyle is how a node of a drawing is drawn: its colours and, for
// StyleSummary, its shape.
type NodeStyle string

// The styles of a node.
const (
	// StyleMessage is a message: a plain rounded box. The zero NodeStyle
	// is drawn as StyleMessage.
	StyleMessage NodeStyle = "message"
	// StyleFailed is a failed attempt: red.
	StyleFailed NodeStyle = "failed"
	// StyleSteering is a steering message: orange.
	StyleSteering NodeStyle = "steering"
	// StyleSummary is a summary: a note, yellow.
	StyleSummary NodeStyle = "summary"
	// StyleNote is a note: grey.
	StyleNote NodeStyle = "note"
	// StyleError is the error of a failed model call: red, square.
	StyleError NodeStyle = "error"
)

// GraphNode is a node of a drawing: a commit.
type GraphNode struct {
	// ID names the node in edges and refs: an ASCII letter, then ASCII
	// letters, digits or underscores, and no keyword of DOT or Mermaid
	// (such as node, graph or end).
	ID string
	// Label is the node's text, a line each. The writer escapes what the
	// format would read; control characters become spaces, and a newline
	// inside a line breaks it too.
	Label []string
	// Tooltip is shown when the pointer rests on the node, in the formats
	// that have tooltips (DOT, in SVG output); empty for none.
	Tooltip string
	// Style is how the node is drawn.
	Style NodeStyle
	// Dashed draws the node's border dashed (a commit no ref reaches).
	Dashed bool
}

// GraphEdge is an arrow from one node to another. It may name nodes
// written before or after it.
type GraphEdge struct {
	// From and To are node IDs.
	From, To string
	// Label is written beside the arrow; empty for none.
	Label string
	// Dashed draws a grey dashed arrow that takes no part in the layout
	// (a summary's link to the range it replaced).
	Dashed bool
}

// GraphRef is a label pointing at a node or at another label: a branch,
// or HEAD pointing at its branch's label.
type GraphRef struct {
	// ID names the label, as GraphNode.ID does.
	ID string
	// Name is the label's text.
	Name string
	// Target is the ID of the node or the label it points at.
	Target string
	// Head draws the label in HEAD's colour.
	Head bool
}

// GraphWriter writes a drawing in one GraphFormat: nodes, edges and ref
// labels in the order they are given, top to bottom. It buffers, and its
// errors stick: once a call fails (a write error, an invalid ID), every
// later call returns the same error and writes nothing. Close ends the
// drawing.
type GraphWriter struct {
	w       *bufio.Writer
	lang    graphLang
	started bool
	closed  bool
	err     error
}

// graphLang writes one graph language to a bufio.Writer, whose first
// error Flush reports.
type graphLang interface {
	start(w *bufio.Writer)
	node(w *bufio.Writer, n GraphNode)
	edge(w *bufio.Writer, e GraphEdge)
	ref(w *bufio.Writer, r GraphRef)
	end(w *bufio.Writer)
}

// NewGraphWriter returns a GraphWriter of format f on w, or an error
// matching ErrUnknownGraphFormat. It writes nothing until the first node,
// edge or ref (or Close).
func NewGraphWriter(w io.Writer, f GraphFormat) (*GraphWriter, error) {
	var lang graphLang
	switch f {
	case GraphDot:
		lang = dotLang{}
	case GraphMermaid:
		lang = mermaidLang{}
	default:
		names := make([]string, 0, 2)
		for _, g := range GraphFormats() {
			names = append(names, string(g))
		}
		return nil, fmt.Errorf("%w: %q (want %s)", ErrUnknownGraphFormat, f, strings.Join(names, " or "))
	}
	return &GraphWriter{w: bufio.NewWriterSize(w, 64<<10), lang: lang}, nil
}

// Node writes a node.
func (g *GraphWriter) Node(n GraphNode) error {
	if n.Style == "" {
		n.Style = StyleMessage
	}
	if !validStyle(n.Style) {
		return g.fail(fmt.Errorf("node %s: unknown style %q", n.ID, n.Style))
	}
	return g.write(func() { g.lang.node(g.w, n) }, n.ID)
}

// Edge writes an edge.
func (g *GraphWriter) Edge(e GraphEdge) error {
	return g.write(func() { g.lang.edge(g.w, e) }, e.From, e.To)
}

// Ref writes a ref label and its link to its target.
func (g *GraphWriter) Ref(r GraphRef) error {
	return g.write(func() { g.lang.ref(g.w, r) }, r.ID, r.Target)
}

// Close ends the drawing and flushes it to the underlying writer, which
// it does not close. It returns the first error of the writer's calls.
func (g *GraphWriter) Close() error {
	if err := g.write(func() { g.lang.end(g.w) }); err != nil {
		return err
	}
	g.closed = true
	if err := g.w.Flush(); err != nil {
		g.err = err
	}
	return g.err
}

// write checks the writer's state and ids, then calls fn.
func (g *GraphWriter) write(fn func(), ids ...string) error {
	if g.err != nil {
		return g.err
	}
	if g.closed {
		return errors.New("graph writer used after Close")
	}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return g.fail(err)
		}
	}
	if !g.started {
		g.started = true
		g.lang.start(g.w)
	}
	fn()
	return nil
}

func (g *GraphWriter) fail(err error) error {
	if g.err == nil {
		g.err = err
	}
	return g.err
}

func validStyle(s NodeStyle) bool {
	switch s {
	case StyleMessage, StyleFailed, StyleSteering, StyleSummary, StyleNote, StyleError:
		return true
	}
	return false
}

// graphKeyword reports whether DOT (in any case) or Mermaid reads word as
// a keyword where an ID stands.
func graphKeyword(word string) bool {
	switch strings.ToLower(word) {
	case "node", "edge", "graph", "digraph", "subgraph", "strict",
		"end", "flowchart", "class", "classdef", "click", "style", "linkstyle", "direction":
		return true
	}
	return false
}

// checkID returns an error when id cannot be written unquoted in DOT and
// Mermaid alike.
func checkID(id string) error {
	ok := id != ""
	for i := 0; i < len(id) && ok; i++ {
		c := id[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		ok = letter || i > 0 && ('0' <= c && c <= '9' || c == '_')
	}
	if !ok {
		return fmt.Errorf("invalid graph id %q: want an ASCII letter, then ASCII letters, digits or underscores", id)
	}
	if graphKeyword(id) {
		return fmt.Errorf("invalid graph id %q: a keyword of DOT or Mermaid", id)
	}
	return nil
}

// dotLang writes Graphviz DOT.
type dotLang struct{}

func (dotLang) start(w *bufio.Writer) {
	w.WriteString("digraph tract {\n" +
		"  rankdir=TB;\n" +
		"  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n" +
		"  edge [arrowsize=0.6, fontname=\"Helvetica\"];\n")
}

// dotStyle returns the node attributes of a style.
func dotStyle(style NodeStyle) string {
	switch style {
	case StyleFailed:
		return `, color=red3, fontcolor=red3, fillcolor=mistyrose`
	case StyleSteering:
		return `, color=darkorange3, fillcolor=papayawhip`
	case StyleSummary:
		return `, shape=note, style=filled, fillcolor=lightyellow`
	case StyleNote:
		return `, fillcolor=gray95`
	case StyleError:
		return `, color=red3, fillcolor=mistyrose, style="filled"`
	}
	return ""
}

func (dotLang) node(w *bufio.Writer, n GraphNode) {
	attrs := dotStyle(n.Style)
	if n.Dashed {
		// Graphviz takes the last style given.
		if n.Style == StyleSummary || n.Style == StyleError {
			attrs += `, style="filled,dashed"`
		} else {
			attrs += `, style="rounded,filled,dashed"`
		}
	}
	if n.Tooltip != "" {
		attrs = ", tooltip=" + dotQuote(n.Tooltip) + attrs
	}
	fmt.Fprintf(w, "  %s [label=%s%s];\n", n.ID, dotQuote(strings.Join(n.Label, "\n")), attrs)
}

func (dotLang) edge(w *bufio.Writer, e GraphEdge) {
	var attrs []string
	if e.Dashed {
		// A dashed link does not shape the layout.
		attrs = append(attrs, "style=dashed", "color=gray40", "fontsize=9", "constraint=false")
	}
	if e.Label != "" {
		attrs = append(attrs, "label="+dotQuote(e.Label))
	}
	if len(attrs) == 0 {
		fmt.Fprintf(w, "  %s -> %s;\n", e.From, e.To)
		return
	}
	fmt.Fprintf(w, "  %s -> %s [%s];\n", e.From, e.To, strings.Join(attrs, ", "))
}

func (dotLang) ref(w *bufio.Writer, r GraphRef) {
	fill := "lightblue"
	if r.Head {
		fill = "gold"
	}
	fmt.Fprintf(w, "  %s [label=%s, shape=cds, fillcolor=%s, style=filled];\n", r.ID, dotQuote(r.Name), fill)
	fmt.Fprintf(w, "  %s -> %s [style=dotted, arrowhead=none];\n  { rank=same; %s; %s; }\n", r.ID, r.Target, r.ID, r.Target)
}

func (dotLang) end(w *bufio.Writer) { w.WriteString("}\n") }

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

// mermaidLang writes a Mermaid flowchart.
type mermaidLang struct{}

func (mermaidLang) start(w *bufio.Writer) {
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

func (mermaidLang) node(w *bufio.Writer, n GraphNode) {
	open, closing := `["`, `"]`
	if n.Style == StyleSummary {
		open, closing = `[/"`, `"/]`
	}
	fmt.Fprintf(w, "  %s%s%s%s:::%s\n", n.ID, open, mermaidEscape(strings.Join(n.Label, "\n")), closing, n.Style)
	if n.Dashed {
		fmt.Fprintf(w, "  class %s orphan\n", n.ID)
	}
}

func (mermaidLang) edge(w *bufio.Writer, e GraphEdge) {
	arrow := "-->"
	if e.Dashed {
		arrow = "-.->"
	}
	if e.Label != "" {
		arrow += `|"` + mermaidEscape(e.Label) + `"|`
	}
	fmt.Fprintf(w, "  %s %s %s\n", e.From, arrow, e.To)
}

func (mermaidLang) ref(w *bufio.Writer, r GraphRef) {
	class := "ref"
	if r.Head {
		class = "head"
	}
	fmt.Fprintf(w, "  %s([\"%s\"]):::%s\n", r.ID, mermaidEscape(r.Name), class)
	fmt.Fprintf(w, "  %s -.- %s\n", r.ID, r.Target)
}

func (mermaidLang) end(*bufio.Writer) {}

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
