// Tests of the repository's shape rather than of its behaviour: they read
// the module's source, so they live in a package of their own that nothing
// imports.
package housetest

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxPackageDocLines is the longest package comment a package may have: an
// overview for go doc readers, in the style of bbolt's (about 40 lines) and
// go-git's (about 10). Byte formats, tables of errors and other long
// contracts belong in docs/, which the package comment points to.
const maxPackageDocLines = 60

// TestPackageDocLength fails for every package of the module whose package
// comment is longer than maxPackageDocLines.
func TestPackageDocLength(t *testing.T) {
	root := moduleRoot(t)
	docs := packageDocs(t, root)
	require.NotEmpty(t, docs, "no package comment found under %s", root)

	var over []string
	for _, dir := range sortedKeys(docs) {
		if d := docs[dir]; d.lines > maxPackageDocLines {
			over = append(over, fmt.Sprintf("%s: %d lines (%s)", dir, d.lines, strings.Join(d.files, ", ")))
		}
	}
	assert.Empty(t, over, "package comments over %d lines: keep the overview a go doc reader needs and move long contracts (byte formats, layouts, error tables) to a page in docs/ that the comment names", maxPackageDocLines)

}

// docsRef matches a reference to a page of docs/ in a package comment.
var docsRef = regexp.MustCompile(`\bdocs/[A-Za-z0-9_.-]+\.md\b`)

// TestPackageDocLinks fails when a package comment names a page of docs/
// that does not exist, so that the pointers left by moving a contract out
// of a package comment do not rot.
func TestPackageDocLinks(t *testing.T) {
	root := moduleRoot(t)
	docs := packageDocs(t, root)
	for _, dir := range sortedKeys(docs) {
		d := docs[dir]
		for _, ref := range docsRef.FindAllString(d.text, -1) {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(ref)))
			assert.NoError(t, err, "the package comment of %q names %s", dir, ref)
		}
	}
}

func TestPackageDocs_Counting(t *testing.T) {
	write := func(t *testing.T, dir, name, src string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	root := t.TempDir()
	write(t, root, "go.mod", "module example.com/m\n")
	// The root package: a comment of 3 lines, and a test file whose package
	// comment go doc does not show.
	write(t, root, "doc.go", "// Package m does things.\n//\n// More.\npackage m\n")
	write(t, root, "m_test.go", "// Package m has a long test comment.\n//\n//\n//\npackage m\n")
	// A comment split over two files counts whole, as go doc shows it;
	// a build directive is not part of it.
	write(t, filepath.Join(root, "split"), "a.go", "//go:build linux\n\n// Package split,\n// part one.\npackage split\n")
	write(t, filepath.Join(root, "split"), "b.go", "// Part two\n// of three\n// lines.\npackage split\n")
	// No package comment: not listed.
	write(t, filepath.Join(root, "bare"), "bare.go", "package bare\n")
	// Skipped: testdata, hidden directories and nested modules.
	write(t, filepath.Join(root, "testdata", "x"), "x.go", "// Package x.\npackage x\n")
	write(t, filepath.Join(root, ".hidden"), "h.go", "// Package h.\npackage h\n")
	write(t, filepath.Join(root, "nested"), "go.mod", "module example.com/nested\n")
	write(t, filepath.Join(root, "nested"), "n.go", "// Package n.\npackage n\n")

	docs := packageDocs(t, root)
	got := map[string]int{}
	for dir, d := range docs {
		got[dir] = d.lines
	}
	assert.Equal(t, map[string]int{".": 3, "split": 5}, got)
	assert.Equal(t, []string{"a.go", "b.go"}, docs["split"].files)
	assert.Contains(t, docs["split"].text, "part one.")
}

// packageDoc is the package comment of one package.
type packageDoc struct {
	lines int      // source lines of the comment, summed over its files
	files []string // the files that hold it, by base name
	text  string   // its text, as go doc shows it
}

// packageDocs returns the package comment of every package under root,
// keyed by the package's directory relative to root ("." for root itself,
// with forward slashes). It reads the non-test .go files of each directory,
// whatever their build constraints, and skips testdata, directories whose
// name starts with "." or "_", and nested modules.
func packageDocs(t *testing.T, root string) map[string]packageDoc {
	t.Helper()
	docs := map[string]packageDoc{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			name := e.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if f.Doc == nil {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		d := docs[rel]
		d.lines += fset.Position(f.Doc.End()).Line - fset.Position(f.Doc.Pos()).Line + 1
		d.files = append(d.files, name)
		d.text += f.Doc.Text()
		docs[rel] = d
		return nil
	})
	require.NoError(t, err)
	return docs
}

// moduleRoot returns the directory of the go.mod that holds this test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			require.NoError(t, err)
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
