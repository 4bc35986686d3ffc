package retry_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

var update = flag.Bool("update", false, "rewrite the table of kinds in doc.go from retry.Kinds()")

// kindTable is the table of kinds the package documentation holds: one
// line per kind, its usage and its summary, as doc.go's comment lines.
func kindTable(kinds []retry.Kind) []string {
	width := 0
	for _, k := range kinds {
		width = max(width, len(k.Usage()))
	}
	lines := make([]string, len(kinds))
	for i, k := range kinds {
		lines[i] = fmt.Sprintf("//\t%-*s  %s", width, k.Usage(), k.Summary)
	}
	return lines
}

// tableIn returns where in lines the first code block after the line
// "// # Spec strings" starts and ends.
func tableIn(t *testing.T, lines []string) (start, end int) {
	t.Helper()
	start = -1
	for i, l := range lines {
		if l == "// # Spec strings" {
			start = i
		}
		if start >= 0 && strings.HasPrefix(l, "//\t") {
			start = i
			break
		}
	}
	require.GreaterOrEqual(t, start, 0, "doc.go has no table under '# Spec strings'")
	end = start
	for end < len(lines) && strings.HasPrefix(lines[end], "//\t") {
		end++
	}
	return start, end
}

// The package documentation's table of kinds is retry.Kinds(), generated:
// 'go test ./retry -run TestDoc_KindTable -update' rewrites it.
func TestDoc_KindTable(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	start, end := tableIn(t, lines)
	want := kindTable(retry.Kinds())
	if *update {
		lines = append(lines[:start], append(want, lines[end:]...)...)
		require.NoError(t, os.WriteFile("doc.go", []byte(strings.Join(lines, "\n")), 0o644))
		return
	}
	assert.Equal(t, want, lines[start:end],
		"doc.go's table of kinds is not retry.Kinds(): run 'go test ./retry -run TestDoc_KindTable -update'")
}

// markdownKinds returns the kinds listed by the first column of the table
// that follows heading in the Markdown file path: each row's first cell,
// a spec in backquotes.
func markdownKinds(t *testing.T, path, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n"+heading+"\n")
	require.True(t, ok, "%s has no heading %q", path, heading)
	row := regexp.MustCompile("^\\| `([^`]+)` \\|")
	var kinds []string
	inTable := false
	for _, l := range strings.Split(section, "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			kinds, inTable = append(kinds, m[1]), true
			continue
		}
		if inTable && !strings.HasPrefix(l, "|") {
			break
		}
		if strings.HasPrefix(l, "#") {
			break
		}
	}
	require.NotEmpty(t, kinds, "%s: no table of kinds under %q", path, heading)
	return kinds
}

// docs/validators.md's and docs/retry.md's tables of validators list the kinds
// retry.Kinds() returns, in its order.
func TestDoc_MarkdownTablesListTheKinds(t *testing.T) {
	var want []string
	for _, k := range retry.Kinds() {
		want = append(want, k.Usage())
	}
	for _, doc := range []struct{ path, heading string }{
		{filepath.Join("..", "docs", "validators.md"), "## Validators"},
		{filepath.Join("..", "docs", "retry.md"), "## Spec strings"},
	} {
		assert.Equal(t, want, markdownKinds(t, doc.path, doc.heading), "%s's table of validators is not retry.Kinds()", doc.path)
	}
}
