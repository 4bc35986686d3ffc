package housetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulePath is the module's import path; package paths in ARCHITECTURE.md
// are relative to it ("." is the root package).
const modulePath = "github.com/tractdag/tract"

// listedPackage is what go list says of one of the module's packages.
type listedPackage struct {
	ImportPath string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// listPackages runs go list on the module's packages (test files aside:
// tests may import what they like).
func listPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// rel is path relative to the module ("." for the root package), or ""
// for a path outside it.
func rel(path string) string {
	switch {
	case path == modulePath:
		return "."
	case strings.HasPrefix(path, modulePath+"/"):
		return strings.TrimPrefix(path, modulePath+"/")
	}
	return ""
}

// isStandard reports an import path of the standard library: its first
// element has no dot.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// markedTable reads the rows of the Markdown table between the comments
// <!-- name --> and <!-- /name --> of page: each row's first cell's
// names (in backquotes, comma-separated) and its second cell's.
func markedTable(t *testing.T, page, name string) map[string][]string {
	t.Helper()
	start, end := "<!-- "+name+" -->", "<!-- /"+name+" -->"
	i, j := strings.Index(page, start), strings.Index(page, end)
	require.True(t, i >= 0 && j > i, "ARCHITECTURE.md has no table between %s and %s", start, end)
	names := regexp.MustCompile("`([^`]+)`")
	rows := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(page[i+len(start) : j]))
	for sc.Scan() {
		cells := strings.Split(strings.Trim(strings.TrimSpace(sc.Text()), "|"), "|")
		if len(cells) != 2 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "package" || strings.TrimSpace(cells[0]) == "module" {
			continue
		}
		var allowed []string
		for _, m := range names.FindAllStringSubmatch(cells[1], -1) {
			allowed = append(allowed, m[1])
		}
		keys := names.FindAllStringSubmatch(cells[0], -1)
		require.NotEmpty(t, keys, "a row of %s names no package: %q", name, sc.Text())
		for _, k := range keys {
			_, dup := rows[k[1]]
			require.False(t, dup, "%s lists %s twice", name, k[1])
			rows[k[1]] = allowed
		}
	}
	return rows
}

// The imports of every package follow the map in ARCHITECTURE.md: each of
// the module's packages imports only the packages its row allows, a
// third-party module is imported only by the packages its row names, and
// only test helpers link the testing package.
func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	require.NoError(t, err)
	allowed := markedTable(t, string(page), "imports")
	thirdParty := markedTable(t, string(page), "third-party")
	testHelpers := thirdParty["testing"]
	delete(thirdParty, "testing")

	var broken []string
	seen := map[string]bool{}
	for _, p := range listPackages(t, root) {
		if len(p.GoFiles) == 0 {
			continue // test files only (tests, internal/housetest)
		}
		me := rel(p.ImportPath)
		seen[me] = true
		mine, ok := allowed[me]
		if !ok {
			broken = append(broken, fmt.Sprintf("%s has no row in the table of imports: add one", me))
			continue
		}
		for _, imp := range p.Imports {
			switch r := rel(imp); {
			case r != "":
				if !slices.Contains(mine, r) {
					broken = append(broken, fmt.Sprintf("%s imports %s, which its row does not allow", me, r))
				}
			case isStandard(imp):
			default:
				module, ok := moduleOf(imp, thirdParty)
				switch {
				case !ok:
					broken = append(broken, fmt.Sprintf("%s imports %s, a module with no row in the third-party table", me, imp))
				case !slices.Contains(thirdParty[module], me):
					broken = append(broken, fmt.Sprintf("%s imports %s, which only %s may import", me, imp, strings.Join(thirdParty[module], ", ")))
				}
			}
		}
		if slices.Contains(p.Deps, "testing") && !slices.Contains(testHelpers, me) {
			broken = append(broken, fmt.Sprintf("%s links the testing package (through its dependencies), which only test helpers may", me))
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			broken = append(broken, fmt.Sprintf("the table of imports has a row for %s, which is no package of the module", pkg))
		}
	}
	slices.Sort(broken)
	if len(broken) > 0 {
		t.Errorf("ARCHITECTURE.md's map of imports is broken:\n%s", strings.Join(broken, "\n"))
	}
}

// moduleOf finds the module of the third-party table that holds the
// package path imp (a module, or a package below it).
func moduleOf(imp string, table map[string][]string) (string, bool) {
	for module := range table {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			return module, true
		}
	}
	return "", false
}
