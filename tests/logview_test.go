package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// divergedRepo builds a repository with two diverging branches and an
// orphaned retry:
//
//	main: system → user → (validated retry: failed attempt, steering,
//	      accepted attempt, purified) clean answer → user "thanks"
//	side: system → user "side question" → assistant "side answer"
func divergedRepo(t *testing.T) *sandbox {
	t.Helper()
	srv := retryServer(t)
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You answer in JSON.")
	requireExit(t, chatEnv(s, srv).tract("chat", "--validate", "json", "List three colours as JSON"), exitOK)
	s.ok("branch", "side", "HEAD~2")
	s.ok("commit", "--branch", "side", "--role", "user", "-m", "side question")
	s.ok("commit", "--branch", "side", "--role", "assistant", "-m", "side answer")
	s.commit("user", "thanks")
	return s
}

// hashes matches a short hash.
var shortHash = regexp.MustCompile(`\b[0-9a-f]{8}\b`)

// log --all draws the diverging branch in a column of its own, as the
// orphaned retry, each line of work in one piece above its fork point.
func TestLogAll_GraphDivergingBranches(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)
	out := s.ok("log", "--all").Stdout
	var got []string
	for _, l := range lines(out) {
		l = shortHash.ReplaceAllString(l, "H")
		if i := strings.Index(l, ": "); i >= 0 && !strings.Contains(l[:i], "orphaned") {
			l = l[:i] // up to the label: the drawing, the hash, refs and role
		}
		got = append(got, l)
	}
	assert.Equal(t, []string{
		"* H (HEAD -> main) user",
		"* H assistant",
		"| * H (ORIG_HEAD) assistant",
		"| * H steering",
		"| * H assistant",
		"|/  orphaned by purify: hid 1 failed attempt (3 commits)",
		"* H user",
		"| * H (side) assistant",
		"| * H user",
		"|/",
		"* H system",
	}, got, out)
	assert.Contains(t, lines(out)[4], "✗ verification_failed: json: invalid JSON", "the failed attempt shows its diagnosis")

	// -n stops after N commits; --graph without --all draws HEAD's line.
	assert.Len(t, lines(s.ok("log", "--all", "-n", "3").Stdout), 3)
	for _, l := range lines(s.ok("log", "--graph").Stdout) {
		assert.Regexp(t, `^\* [0-9a-f]{8} `, l)
	}
	// A multi-line format continues beside the graph's columns.
	multi := lines(s.ok("log", "--all", "-n", "3", "--format", "%h%n%r").Stdout)
	require.Len(t, multi, 6, strings.Join(multi, "\n"))
	assert.Equal(t, "| * "+multi[4][4:], multi[4])
	assert.Equal(t, "| | assistant", multi[5], strings.Join(multi, "\n"))
}

// graphNodes parses a dot or mermaid graph's commit nodes and the edges
// between them.
func graphNodes(t *testing.T, format, out string) (nodes map[string]string, edges []string) {
	t.Helper()
	node := regexp.MustCompile(`^  (c[0-9a-f]{16}) \[label=(".*?[^\\]")`)
	edge := regexp.MustCompile(`^  (c[0-9a-f]{16}) -> (c[0-9a-f]{16});$`)
	if format == "mermaid" {
		node = regexp.MustCompile(`^  (c[0-9a-f]{16})\["(.*)"\]:::`)
		edge = regexp.MustCompile(`^  (c[0-9a-f]{16}) --> (c[0-9a-f]{16})$`)
	}
	nodes = map[string]string{}
	for _, l := range lines(out) {
		if m := node.FindStringSubmatch(l); m != nil {
			nodes[m[1]] = l
		}
		if m := edge.FindStringSubmatch(l); m != nil {
			edges = append(edges, m[1]+"->"+m[2])
		}
	}
	sort.Strings(edges)
	return nodes, edges
}

// wantGraph returns the node ids and parent → child edges of commits.
func wantGraph(cs []commitInfo) (ids []string, edges []string) {
	in := map[string]bool{}
	for _, c := range cs {
		in[c.Hash] = true
	}
	for _, c := range cs {
		ids = append(ids, "c"+c.Hash[:16])
		for _, p := range c.Parents {
			if in[p] {
				edges = append(edges, "c"+p[:16]+"->c"+c.Hash[:16])
			}
		}
	}
	sort.Strings(ids)
	sort.Strings(edges)
	return ids, edges
}

// requireDot runs 'dot -Tsvg' on a graph when dot is installed; under CI
// it must be.
func requireDot(t *testing.T, graph string) {
	t.Helper()
	if _, err := exec.LookPath("dot"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("dot (graphviz) is not installed: CI checks the graph with it")
		}
		t.Log("dot is not installed: the graph is not drawn")
		return
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = strings.NewReader(graph)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "dot rejects the graph: %s\n%s", out, graph)
	assert.Contains(t, string(out), "<svg")
}

// tract graph on the diverging-branch repository: every commit a node,
// every parent an edge, refs as labels, the orphans dashed and the
// failed attempt marked with its diagnosis; without --all, the other
// branch is left out but the failed attempts of HEAD's turns are not.
func TestGraph_DotAndMermaid(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)
	h := s.logAll()
	all := append([]commitInfo{}, h.Commits...)
	var orphans []commitInfo
	for _, o := range h.Orphans {
		orphans = append(orphans, o.Commits...)
	}
	all = append(all, orphans...)
	require.Len(t, all, 9)
	var onMain []commitInfo
	onMain = append(onMain, s.log()...)
	onMain = append(onMain, orphans...)
	failed := orphans[len(orphans)-1] // oldest: the failed attempt
	require.Equal(t, "assistant", failed.Role)

	for _, format := range []string{"dot", "mermaid"} {
		t.Run(format, func(t *testing.T) {
			for _, tc := range []struct {
				args []string
				want []commitInfo
			}{
				{[]string{"--all"}, all},
				{nil, onMain},
			} {
				out := s.forTest(t).ok(append([]string{"graph", "--format", format}, tc.args...)...).Stdout
				nodes, edges := graphNodes(t, format, out)
				wantIDs, wantEdges := wantGraph(tc.want)
				var ids []string
				for id := range nodes {
					ids = append(ids, id)
				}
				sort.Strings(ids)
				assert.Equal(t, wantIDs, ids, "nodes, %v", tc.args)
				assert.Equal(t, wantEdges, edges, "edges, %v", tc.args)

				fid := "c" + failed.Hash[:16]
				assert.Contains(t, nodes[fid], "✗ verification_failed: json: invalid JSON", "the failed attempt's diagnosis")
				if format == "dot" {
					assert.Contains(t, nodes[fid], "color=red3")
					assert.Contains(t, nodes[fid], "dashed", "an orphan")
					assert.Regexp(t, `r\d+ \[label="main"`, out)
					assert.Regexp(t, `r\d+ \[label="HEAD"`, out)
					assert.Regexp(t, `r\d+ \[label="ORIG_HEAD"`, out)
					requireDot(t, out)
				} else {
					assert.True(t, strings.HasPrefix(out, "flowchart TD\n"))
					assert.Contains(t, nodes[fid], ":::failed")
					assert.Contains(t, out, "  class "+fid+" orphan\n")
					assert.Regexp(t, `r\d+\(\["main"\]\):::ref`, out)
					assert.Regexp(t, `r\d+\(\["HEAD"\]\):::head`, out)
				}
				if tc.args == nil {
					assert.NotContains(t, out, `"side"`, "the other branch is not drawn")
				} else {
					assert.Contains(t, out, `"side"`)
				}
			}
		})
	}

	// -o writes the file; a .md file gets a mermaid code block.
	dir := t.TempDir()
	s.ok("graph", "--all", "-o", filepath.Join(dir, "g.dot"))
	b, err := os.ReadFile(filepath.Join(dir, "g.dot"))
	require.NoError(t, err)
	assert.Equal(t, s.ok("graph", "--all").Stdout, string(b))
	s.ok("graph", "--format", "mermaid", "-o", filepath.Join(dir, "g.md"))
	b, err = os.ReadFile(filepath.Join(dir, "g.md"))
	require.NoError(t, err)
	assert.Equal(t, "```mermaid\n"+s.ok("graph", "--format", "mermaid").Stdout+"```\n", string(b))

	for _, args := range [][]string{
		{"graph", "--format", "svg"},
		{"graph", "--all", "HEAD"},
		{"graph", "-o", filepath.Join(dir, "x.md")},
		{"graph", "a", "b"},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assertNoCrash(t, r)
	}
	requireExit(t, s.tract("graph", "nosuchrev"), exitNotFound)
}

// Labels whose text would break the graph languages are escaped: quotes,
// brackets, backslashes, '#', '<', '&' and newlines.
func TestGraph_LabelEscaping(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	for _, tc := range []struct {
		text, dot, mermaid string
	}{
		{`say "hi"`, `say \"hi\"`, `say #34;hi#34;`},
		{`[x] {y} (z) |w|`, `[x] {y} (z) |w|`, `[x] {y} (z) |w|`},
		{`#tag #35;`, `#tag #35;`, `#35;tag #35;35;`},
		{`a\b \n`, `a\\b \\n`, `a\b \n`},
		{"<b>x</b> & `y`", "<b>x</b> & `y`", `#60;b#62;x#60;/b#62; #38; #96;y#96;`},
		{"first line\nsecond\"", `first line…`, `first line…`},
		{`end`, `end`, `end`},
	} {
		h := s.commit("user", tc.text)
		id, short := "c"+h[:16], h[:8]
		dot := s.ok("graph").Stdout
		assert.Contains(t, dot, "  "+id+` [label="`+short+` user\n`+tc.dot+`", `, tc.text)
		requireDot(t, dot)
		mermaid := s.ok("graph", "--format", "mermaid").Stdout
		assert.Contains(t, mermaid, "  "+id+`["`+short+" user<br>"+tc.mermaid+`"]:::message`+"\n", tc.text)
		// No quote, newline or '#' of a text survives unescaped.
		for _, l := range lines(mermaid) {
			if strings.HasPrefix(l, "  c") && strings.Contains(l, "[") {
				assert.Regexp(t, `^  c[0-9a-f]{16}\["[^"#]*(#\d+;[^"#]*)*"\]:::\w+$`, l)
			}
		}
	}
}

// A summary is drawn as a note, with dashed edges to the first and the
// last commit of the range it replaced (orphans, drawn with --all).
func TestGraph_SummaryLinkedToItsRange(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "be brief")
	var sources []string
	for i := range 4 {
		sources = append(sources, s.commit("user", "message "+string(rune('a'+i))))
	}
	s.commit("user", "the last one")
	s.ok("compress", "--from", sources[0], "--to", sources[3], "--content", "A short summary.")
	summary := s.log()[1]
	require.Equal(t, "summary", summary.Kind)
	id := "c" + summary.Hash[:16]

	dot := s.ok("graph", "--all").Stdout
	assert.Regexp(t, "  "+id+` \[label="[0-9a-f]{8} summary\\nA short summary\.".*shape=note`, dot)
	assert.Contains(t, dot, "  "+id+" -> c"+sources[0][:16]+` [style=dashed, color=gray40, fontsize=9, constraint=false, label="summarises 4, from"];`)
	assert.Contains(t, dot, "  "+id+" -> c"+sources[3][:16]+` [style=dashed, color=gray40, fontsize=9, constraint=false, label="to"];`)
	requireDot(t, dot)

	mermaid := s.ok("graph", "--all", "--format", "mermaid").Stdout
	assert.Regexp(t, "  "+id+`\[/"[0-9a-f]{8} summary<br>A short summary\."/\]:::summary`, mermaid)
	assert.Contains(t, mermaid, "  "+id+` -.->|"summarises 4, from"| c`+sources[0][:16]+"\n")

	// Without --all too: the range forked from HEAD's history.
	assert.Contains(t, s.ok("graph").Stdout, `label="summarises 4, from"`)
}
