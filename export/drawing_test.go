package export_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/export"
)

const (
	dotHeader = "digraph tract {\n" +
		"  rankdir=TB;\n" +
		"  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n" +
		"  edge [arrowsize=0.6, fontname=\"Helvetica\"];\n"
	mermaidHeader = "flowchart TD\n" +
		"  classDef message fill:#fff,stroke:#555\n" +
		"  classDef failed fill:#fee,stroke:#c00,color:#900\n" +
		"  classDef steering fill:#fff3e0,stroke:#e65100\n" +
		"  classDef summary fill:#ffffe0,stroke:#aa0\n" +
		"  classDef note fill:#f4f4f4,stroke:#999\n" +
		"  classDef error fill:#fee,stroke:#c00\n" +
		"  classDef orphan stroke-dasharray:4 3\n" +
		"  classDef ref fill:#def,stroke:#369\n" +
		"  classDef head fill:#fd6,stroke:#a70\n"
)

// draw writes what fn writes in format f and returns the drawing without
// its header and trailer, which it checks.
func draw(t *testing.T, f export.GraphFormat, fn func(g *export.GraphWriter)) string {
	t.Helper()
	var b bytes.Buffer
	g, err := export.NewGraphWriter(&b, f)
	require.NoError(t, err)
	fn(g)
	require.NoError(t, g.Close())
	out := b.String()
	header, trailer := dotHeader, "}\n"
	if f == export.GraphMermaid {
		header, trailer = mermaidHeader, ""
	}
	require.True(t, strings.HasPrefix(out, header), "the header of %s:\n%s", f, out)
	require.True(t, strings.HasSuffix(out, trailer), "the trailer of %s:\n%s", f, out)
	return strings.TrimSuffix(strings.TrimPrefix(out, header), trailer)
}

// Labels are escaped for each language: DOT escapes backslashes and
// quotes and writes newlines as \n; Mermaid writes the characters its
// parser or HTML would read as #code; and both write other control
// characters as spaces.
func TestGraphWriter_LabelEscaping(t *testing.T) {
	tests := []struct {
		name         string
		label        []string
		dot, mermaid string
	}{
		{name: "plain", label: []string{"abc user", "hello"}, dot: `"abc user\nhello"`, mermaid: `abc user<br>hello`},
		{name: "double quotes", label: []string{`say "hi"`}, dot: `"say \"hi\""`, mermaid: `say #34;hi#34;`},
		{name: "backslashes", label: []string{`a\b \n`}, dot: `"a\\b \\n"`, mermaid: `a\b \n`},
		{name: "mermaid's specials", label: []string{"#1 <b>&amp;</b> `x`"}, dot: "\"#1 <b>&amp;</b> `x`\"",
			mermaid: `#35;1 #60;b#62;#38;amp;#60;/b#62; #96;x#96;`},
		{name: "brackets and bars", label: []string{`[x] {y} (z) |w|`}, dot: `"[x] {y} (z) |w|"`, mermaid: `[x] {y} (z) |w|`},
		{name: "newline inside a line", label: []string{"one\ntwo"}, dot: `"one\ntwo"`, mermaid: `one<br>two`},
		{name: "control characters", label: []string{"a\x00b\x01c\td\re\x7ff"}, dot: `"a b c d e f"`, mermaid: `a b c d e f`},
		{name: "unicode kept", label: []string{"é ✓ 漢字 ✗"}, dot: `"é ✓ 漢字 ✗"`, mermaid: `é ✓ 漢字 ✗`},
		{name: "no lines", label: nil, dot: `""`, mermaid: ``},
		{name: "empty lines", label: []string{"", ""}, dot: `"\n"`, mermaid: `<br>`},
		{name: "the word end", label: []string{"end"}, dot: `"end"`, mermaid: `end`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := export.GraphNode{ID: "n1", Label: tt.label}
			dot := draw(t, export.GraphDot, func(g *export.GraphWriter) { require.NoError(t, g.Node(n)) })
			assert.Equal(t, "  n1 [label="+tt.dot+"];\n", dot)
			mermaid := draw(t, export.GraphMermaid, func(g *export.GraphWriter) { require.NoError(t, g.Node(n)) })
			assert.Equal(t, `  n1["`+tt.mermaid+`"]:::message`+"\n", mermaid)
		})
	}
}

// Each style has its DOT attributes and its Mermaid class; a dashed node
// gets a dashed border (a style DOT takes last), and a tooltip is DOT's.
func TestGraphWriter_NodeStyles(t *testing.T) {
	tests := []struct {
		style   export.NodeStyle
		dashed  bool
		dot     string
		mermaid string
	}{
		{style: "", dot: `  n [label="x", tooltip="tip"];`, mermaid: `  n["x"]:::message`},
		{style: export.StyleMessage, dot: `  n [label="x", tooltip="tip"];`, mermaid: `  n["x"]:::message`},
		{style: export.StyleMessage, dashed: true, dot: `  n [label="x", tooltip="tip", style="rounded,filled,dashed"];`,
			mermaid: "  n[\"x\"]:::message\n  class n orphan"},
		{style: export.StyleFailed, dot: `  n [label="x", tooltip="tip", color=red3, fontcolor=red3, fillcolor=mistyrose];`,
			mermaid: `  n["x"]:::failed`},
		{style: export.StyleSteering, dot: `  n [label="x", tooltip="tip", color=darkorange3, fillcolor=papayawhip];`,
			mermaid: `  n["x"]:::steering`},
		{style: export.StyleSummary, dot: `  n [label="x", tooltip="tip", shape=note, style=filled, fillcolor=lightyellow];`,
			mermaid: `  n[/"x"/]:::summary`},
		{style: export.StyleSummary, dashed: true, dot: `  n [label="x", tooltip="tip", shape=note, style=filled, fillcolor=lightyellow, style="filled,dashed"];`,
			mermaid: "  n[/\"x\"/]:::summary\n  class n orphan"},
		{style: export.StyleNote, dot: `  n [label="x", tooltip="tip", fillcolor=gray95];`, mermaid: `  n["x"]:::note`},
		{style: export.StyleError, dot: `  n [label="x", tooltip="tip", color=red3, fillcolor=mistyrose, style="filled"];`,
			mermaid: `  n["x"]:::error`},
		{style: export.StyleError, dashed: true, dot: `  n [label="x", tooltip="tip", color=red3, fillcolor=mistyrose, style="filled", style="filled,dashed"];`,
			mermaid: "  n[\"x\"]:::error\n  class n orphan"},
	}
	for _, tt := range tests {
		name := string(tt.style)
		if tt.dashed {
			name += " dashed"
		}
		t.Run(name, func(t *testing.T) {
			n := export.GraphNode{ID: "n", Label: []string{"x"}, Tooltip: "tip", Style: tt.style, Dashed: tt.dashed}
			dot := draw(t, export.GraphDot, func(g *export.GraphWriter) { require.NoError(t, g.Node(n)) })
			assert.Equal(t, tt.dot+"\n", dot)
			mermaid := draw(t, export.GraphMermaid, func(g *export.GraphWriter) { require.NoError(t, g.Node(n)) })
			assert.Equal(t, tt.mermaid+"\n", mermaid)
		})
	}
}

// A tooltip is quoted as labels are, and left out when empty.
func TestGraphWriter_Tooltip(t *testing.T) {
	dot := draw(t, export.GraphDot, func(g *export.GraphWriter) {
		require.NoError(t, g.Node(export.GraphNode{ID: "a", Label: []string{"x"}, Tooltip: "a \"b\"\nc"}))
		require.NoError(t, g.Node(export.GraphNode{ID: "b", Label: []string{"y"}}))
	})
	assert.Equal(t, "  a [label=\"x\", tooltip=\"a \\\"b\\\"\\nc\"];\n  b [label=\"y\"];\n", dot)
}

func TestGraphWriter_Edges(t *testing.T) {
	tests := []struct {
		name         string
		edge         export.GraphEdge
		dot, mermaid string
	}{
		{name: "plain", edge: export.GraphEdge{From: "a", To: "b"}, dot: `  a -> b;`, mermaid: `  a --> b`},
		{name: "dashed with a label", edge: export.GraphEdge{From: "s", To: "a", Label: "summarises 4, from", Dashed: true},
			dot:     `  s -> a [style=dashed, color=gray40, fontsize=9, constraint=false, label="summarises 4, from"];`,
			mermaid: `  s -.->|"summarises 4, from"| a`},
		{name: "dashed without a label", edge: export.GraphEdge{From: "s", To: "a", Dashed: true},
			dot: `  s -> a [style=dashed, color=gray40, fontsize=9, constraint=false];`, mermaid: `  s -.-> a`},
		{name: "plain with a label", edge: export.GraphEdge{From: "a", To: "b", Label: "next"},
			dot: `  a -> b [label="next"];`, mermaid: `  a -->|"next"| b`},
		{name: "a label escaped", edge: export.GraphEdge{From: "a", To: "b", Label: "say \"hi\" #1\n<x>", Dashed: true},
			dot:     `  a -> b [style=dashed, color=gray40, fontsize=9, constraint=false, label="say \"hi\" #1\n<x>"];`,
			mermaid: `  a -.->|"say #34;hi#34; #35;1<br>#60;x#62;"| b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dot := draw(t, export.GraphDot, func(g *export.GraphWriter) { require.NoError(t, g.Edge(tt.edge)) })
			assert.Equal(t, tt.dot+"\n", dot)
			mermaid := draw(t, export.GraphMermaid, func(g *export.GraphWriter) { require.NoError(t, g.Edge(tt.edge)) })
			assert.Equal(t, tt.mermaid+"\n", mermaid)
		})
	}
}

func TestGraphWriter_Refs(t *testing.T) {
	tests := []struct {
		name         string
		ref          export.GraphRef
		dot, mermaid string
	}{
		{name: "a branch", ref: export.GraphRef{ID: "r0", Name: "main", Target: "c1"},
			dot: "  r0 [label=\"main\", shape=cds, fillcolor=lightblue, style=filled];\n" +
				"  r0 -> c1 [style=dotted, arrowhead=none];\n  { rank=same; r0; c1; }",
			mermaid: "  r0([\"main\"]):::ref\n  r0 -.- c1"},
		{name: "HEAD on a branch's label", ref: export.GraphRef{ID: "r3", Name: "HEAD", Target: "r0", Head: true},
			dot: "  r3 [label=\"HEAD\", shape=cds, fillcolor=gold, style=filled];\n" +
				"  r3 -> r0 [style=dotted, arrowhead=none];\n  { rank=same; r3; r0; }",
			mermaid: "  r3([\"HEAD\"]):::head\n  r3 -.- r0"},
		{name: "a name escaped", ref: export.GraphRef{ID: "r1", Name: `fix/"#1"`, Target: "c1"},
			dot: "  r1 [label=\"fix/\\\"#1\\\"\", shape=cds, fillcolor=lightblue, style=filled];\n" +
				"  r1 -> c1 [style=dotted, arrowhead=none];\n  { rank=same; r1; c1; }",
			mermaid: "  r1([\"fix/#34;#35;1#34;\"]):::ref\n  r1 -.- c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dot := draw(t, export.GraphDot, func(g *export.GraphWriter) { require.NoError(t, g.Ref(tt.ref)) })
			assert.Equal(t, tt.dot+"\n", dot)
			mermaid := draw(t, export.GraphMermaid, func(g *export.GraphWriter) { require.NoError(t, g.Ref(tt.ref)) })
			assert.Equal(t, tt.mermaid+"\n", mermaid)
		})
	}
}

// An empty drawing is the header and the trailer; the formats are dot and
// mermaid, and another is an error that says which it knows.
func TestGraphWriter_Formats(t *testing.T) {
	assert.Equal(t, []export.GraphFormat{export.GraphDot, export.GraphMermaid}, export.GraphFormats())
	for f, want := range map[export.GraphFormat]string{export.GraphDot: dotHeader + "}\n", export.GraphMermaid: mermaidHeader} {
		var b bytes.Buffer
		g, err := export.NewGraphWriter(&b, f)
		require.NoError(t, err)
		assert.Zero(t, b.Len(), "nothing is written before the first call")
		require.NoError(t, g.Close())
		assert.Equal(t, want, b.String())
	}
	_, err := export.NewGraphWriter(&bytes.Buffer{}, "svg")
	require.ErrorIs(t, err, export.ErrUnknownGraphFormat)
	assert.EqualError(t, err, `unknown graph format: "svg" (want dot or mermaid)`)
}

// IDs that DOT or Mermaid would not read as one plain ID are refused,
// wherever they are given, and the error sticks: nothing more is written.
func TestGraphWriter_InvalidIDs(t *testing.T) {
	tests := []struct {
		name string
		call func(g *export.GraphWriter) error
		want string
	}{
		{"empty node id", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{}) }, `invalid graph id ""`},
		{"node id with a space", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "a b"}) }, `invalid graph id "a b"`},
		{"node id starting with a digit", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "1a"}) }, `invalid graph id "1a"`},
		{"node id with a quote", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: `a"`}) }, `invalid graph id "a\""`},
		{"non-ASCII node id", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "é"}) }, `invalid graph id "é"`},
		{"DOT keyword", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "Node"}) }, "a keyword"},
		{"Mermaid keyword", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "end"}) }, "a keyword"},
		{"edge source", func(g *export.GraphWriter) error { return g.Edge(export.GraphEdge{From: "a-b", To: "c"}) }, `invalid graph id "a-b"`},
		{"edge target", func(g *export.GraphWriter) error { return g.Edge(export.GraphEdge{From: "a", To: "subgraph"}) }, "a keyword"},
		{"ref id", func(g *export.GraphWriter) error { return g.Ref(export.GraphRef{ID: "r 1", Target: "a"}) }, `invalid graph id "r 1"`},
		{"ref target", func(g *export.GraphWriter) error { return g.Ref(export.GraphRef{ID: "r1", Target: ""}) }, `invalid graph id ""`},
		{"unknown style", func(g *export.GraphWriter) error { return g.Node(export.GraphNode{ID: "a", Style: "bold"}) }, `unknown style "bold"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range export.GraphFormats() {
				var b bytes.Buffer
				g, err := export.NewGraphWriter(&b, f)
				require.NoError(t, err)
				err = tt.call(g)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.want)
				assert.Equal(t, err, g.Node(export.GraphNode{ID: "ok"}), "the error sticks")
				assert.Equal(t, err, g.Close())
				assert.Zero(t, b.Len(), "nothing is written")
			}
		})
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write error of the underlying writer comes back from Close, and a
// writer closed takes no more.
func TestGraphWriter_WriteErrorAndUseAfterClose(t *testing.T) {
	g, err := export.NewGraphWriter(errWriter{}, export.GraphDot)
	require.NoError(t, err)
	require.NoError(t, g.Node(export.GraphNode{ID: "a"}), "buffered")
	assert.EqualError(t, g.Close(), "disk full")

	var b bytes.Buffer
	g, err = export.NewGraphWriter(&b, export.GraphMermaid)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	assert.Error(t, g.Node(export.GraphNode{ID: "a"}))
	assert.Error(t, g.Close())
	assert.Equal(t, mermaidHeader, b.String(), "nothing written after Close")
}

// A commit, its parent, a summary's link and a branch with HEAD on it,
// drawn as a Mermaid flowchart.
func ExampleGraphWriter() {
	g, err := export.NewGraphWriter(os.Stdout, export.GraphMermaid)
	if err != nil {
		panic(err)
	}
	// Errors stick: Close returns the first.
	g.Node(export.GraphNode{ID: "c1", Label: []string{"1a2b3c4d user", `Say "hi"`}})
	g.Node(export.GraphNode{ID: "c2", Label: []string{"5e6f7a8b summary", "They said hi."}, Style: export.StyleSummary})
	g.Edge(export.GraphEdge{From: "c1", To: "c2"})
	g.Edge(export.GraphEdge{From: "c2", To: "c1", Label: "summarises 1, from", Dashed: true})
	g.Ref(export.GraphRef{ID: "r0", Name: "main", Target: "c2"})
	g.Ref(export.GraphRef{ID: "r1", Name: "HEAD", Target: "r0", Head: true})
	if err := g.Close(); err != nil {
		panic(err)
	}
	// Output:
	// flowchart TD
	//   classDef message fill:#fff,stroke:#555
	//   classDef failed fill:#fee,stroke:#c00,color:#900
	//   classDef steering fill:#fff3e0,stroke:#e65100
	//   classDef summary fill:#ffffe0,stroke:#aa0
	//   classDef note fill:#f4f4f4,stroke:#999
	//   classDef error fill:#fee,stroke:#c00
	//   classDef orphan stroke-dasharray:4 3
	//   classDef ref fill:#def,stroke:#369
	//   classDef head fill:#fd6,stroke:#a70
	//   c1["1a2b3c4d user<br>Say #34;hi#34;"]:::message
	//   c2[/"5e6f7a8b summary<br>They said hi."/]:::summary
	//   c1 --> c2
	//   c2 -.->|"summarises 1, from"| c1
	//   r0(["main"]):::ref
	//   r0 -.- c2
	//   r1(["HEAD"]):::head
	//   r1 -.- r0
}
