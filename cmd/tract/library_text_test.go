package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/repl"
	"github.com/tractdag/tract/store/postgres"
)

// moduleRoot is the root of tract's module, seen from this package.
const moduleRoot = "../.."

// notLibrary lists the directories of the module whose packages are not
// libraries: the command line, its end-to-end tests and benchmarks, and
// the settings file of the command line.
var notLibrary = []string{"cmd", "tests", "bench", "internal/config"}

// presentation lists the library packages whose job is to print text for
// the command line's user: the demo narrates a tour of the commands, and
// the interactive chat ('tract chat --interactive') answers on its
// screen, so what they print may name commands. The errors they return
// are held to the rule like any library's.
var presentation = map[string]bool{"demo": true, "repl": true}

// cliAllowed are the strings of library packages that may name a command
// or a flag, each with the reason.
var cliAllowed = map[string]string{
	// The message a reset writes in the reflog names the reset, as git's
	// "reset: moving to HEAD~1" does: it is a record 'tract reflog' and
	// log --all show (and tests and scripts read), not an error.
	"reset --%s: moving to %s": "reflog message",
}

// envAllowed are the strings of library packages that may name one of
// tract's environment variables, each with the reason.
var envAllowed = map[string]string{
	// pgtest, a helper for tests, finds the test database where
	// scripts/postgres and .ci/run name it.
	"TRACT_TEST_POSTGRES_URL": "the test database of store/postgres/pgtest",
	// pgtest.StartPair reads the export lines scripts/postgres pair
	// prints (it reads no variable).
	"TRACT_TEST_PAIR_URL": "the URL scripts/postgres pair prints",
	"TRACT_TEST_PAIR_DIR": "the directory scripts/postgres pair prints",
}

// envText matches the name of one of tract's environment variables
// (TRACT_MODEL, TRACT_BACKOFF, …): the command line's to read and to name.
var envText = regexp.MustCompile(`\bTRACT_[A-Z0-9_]+`)

// cliText matches text that names one of the commands (tract CMD) or a
// long flag (--flag, or one built with --%s), given the command names.
func cliText(commands []string) *regexp.Regexp {
	return regexp.MustCompile(`\btract (` + strings.Join(commands, "|") + `)\b|(^|[^-\w])--([a-z][a-z0-9-]*|%[sv])`)
}

// commandNames are the names of tract's commands and their aliases, from
// the command tree.
func commandNames(t *testing.T) []string {
	t.Helper()
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		names = append(names, c.Aliases...)
	}
	require.Contains(t, names, "log")
	require.Contains(t, names, "help")
	return names
}

// libraryText is a string of a library package that names a command, a
// flag or a variable, where it was found.
type libraryText struct {
	pos  string
	text string
}

// libraryTexts returns the strings of the library packages' source (test
// files aside) that re matches, but for those allowed lists: every string
// constant of a library, and in a presentation package those of its
// errors (errors.New, fmt.Errorf, Error methods).
func libraryTexts(t *testing.T, re *regexp.Regexp, allowed map[string]string) (found []libraryText, files int) {
	t.Helper()
	allowedSeen := map[string]bool{}
	defer func() {
		for s, why := range allowed {
			assert.True(t, allowedSeen[s], "%q (%s) is allowed but no longer in the source: take it off the allowed list", s, why)
		}
	}()
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(moduleRoot, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || slices.Contains(notLibrary, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		check := func(n ast.Node, s string) {
			if _, ok := allowed[s]; ok {
				allowedSeen[s] = true
				return
			}
			if re.MatchString(s) {
				found = append(found, libraryText{pos: rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line), text: s})
			}
		}
		if presentation[filepath.ToSlash(filepath.Dir(rel))] {
			for _, n := range errorExprs(file) {
				eachString(n, check)
			}
		} else {
			eachString(file, check)
		}
		return nil
	})
	require.NoError(t, err)
	return found, files
}

// errorExprs returns the parts of file that make errors: the calls of
// errors.New and fmt.Errorf, and the bodies of Error methods.
func errorExprs(file *ast.File) []ast.Node {
	var out []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv != nil && n.Name.Name == "Error" && n.Body != nil {
				out = append(out, n.Body)
				return false
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
					out = append(out, n)
					return false
				}
			}
		}
		return true
	})
	return out
}

// eachString calls check with each string constant under n: a literal, or
// literals joined with +.
func eachString(n ast.Node, check func(ast.Node, string)) {
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if s, ok := constString(e); ok {
				check(n, s)
				return false
			}
		}
		return true
	})
}

// constString returns the value of a string literal, or of string
// literals joined with +.
func constString(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return constString(e.X)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok := constString(e.X)
		if !ok {
			return "", false
		}
		y, ok := constString(e.Y)
		return x + y, ok
	}
	return "", false
}

// The library packages leave commands and flags to the command line: no
// string of theirs names 'tract CMD' or a --flag (the errors they return
// state facts; cmd/tract's errorHint adds what to type). The demo and the
// interactive chat print for the command line's user, so there only the
// errors are checked.
func TestLibraries_NameNoCommandOrFlag(t *testing.T) {
	re := cliText(commandNames(t))
	found, files := libraryTexts(t, re, cliAllowed)
	require.Greater(t, files, 100, "the walk found the library packages")
	for _, f := range found {
		t.Errorf("%s: %q names %q: a library states facts; cmd/tract's errorHint names commands and flags", f.pos, f.text, re.FindString(f.text))
	}
}

// The library packages leave tract's environment variables to the command
// line: no string of theirs names one (TRACT_MODEL, TRACT_BACKOFF, …), so
// none reads one (os.Getenv("TRACT_…"), a getenv it is given) or tells the
// user to set one; cmd/tract reads them and passes the values as
// arguments and options. The providers' own variables (OPENAI_API_KEY,
// ANTHROPIC_BASE_URL, …), which the official SDKs read, are llm's.
func TestLibraries_NameNoTractVariable(t *testing.T) {
	found, files := libraryTexts(t, envText, envAllowed)
	require.Greater(t, files, 100, "the walk found the library packages")
	for _, f := range found {
		t.Errorf("%s: %q names %q: the command line reads tract's variables and passes their values", f.pos, f.text, envText.FindString(f.text))
	}
	for _, s := range []string{"TRACT_MODEL", `%s=%q is not a backoff`, "(from TRACT_PROVIDER)", "set TRACT_DB"} {
		if strings.HasPrefix(s, "%") {
			s = fmt.Sprintf(s, "TRACT_BACKOFF", "x")
		}
		assert.True(t, envText.MatchString(s), "%q", s)
	}
	for _, s := range []string{"OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "TRACT_", "tract_model", "XTRACT_MODEL"} {
		assert.False(t, envText.MatchString(s), "%q", s)
	}
}

// The check finds what it is for, and only that.
func TestLibraries_CLITextMatches(t *testing.T) {
	re := cliText([]string{"log", "compress", "reflog"})
	for _, s := range []string{
		"see 'tract log --all'", "tract compress", "(tract reflog REF)", "--from: %w", "--%s %s (%s): %w", "pass --dry-run",
	} {
		assert.True(t, re.MatchString(s), "%q", s)
	}
	for _, s := range []string{
		"not a tract repository", "this tract reads up to %d", "tract is closed", "tract logs", "a -- b", "---", "x--y", "-- comment", "-n",
	} {
		assert.False(t, re.MatchString(s), "%q", s)
	}
}

// libraryError is an error a library returned, and what the command line
// makes of it: the text it prints (the error, reworded where the command
// line names its flag) and the hint after it.
type libraryError struct {
	name string
	err  error
	// cli is the command line's text for err; "" means err's own.
	cli string
	// hint is what the command line prints after it.
	hint string
	// advice must appear in cli+hint: what the library's message used to
	// say.
	advice string
}

// The errors the libraries return when used the way the command line's
// remedies are about state facts only; the command line prints the remedy.
// A run, not a reading of the source: it catches text that a library
// assembles (a flag in a variable, "--" + a name) and errors wrapped on
// their way up.
func TestLibraries_ErrorsStateFactsTheCLIAdvises(t *testing.T) {
	re := cliText(commandNames(t))
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	for _, text := range []string{"one", "two"} {
		_, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, text)
		require.NoError(t, err)
	}
	_, err = tr.Switch(ctx, "side", true)
	require.NoError(t, err)
	_, err = tr.Commit(ctx, tract.KindMessage, tract.RoleUser, "on the side")
	require.NoError(t, err)
	_, err = tr.Checkout(ctx, "main")
	require.NoError(t, err)

	var errs []libraryError
	add := func(name string, err error, advice string) {
		require.Error(t, err, name)
		errs = append(errs, libraryError{name: name, err: err, advice: advice})
	}
	_, err = tr.CompressRange(ctx, "", "", tract.Summaries("a", "b", "c"))
	add("summaries given", err, "'tract compress --dry-run'")
	_, err = tr.PlanCompress(ctx, "HEAD~9", "")
	add("range start", err, "--from: unknown revision")
	_, err = tr.PlanCompress(ctx, "", "side")
	add("range end", err, "--to side (")
	_, err = tr.Resolve(ctx, "main@{yesterday}")
	add("reflog position", err, "'tract reflog main'")
	_, err = tr.SwitchOrphan(ctx, "bad..name")
	add("orphan branch", err, "")
	_, err = llm.ChooseProvider("gemini", "")
	add("provider", err, "")
	errs[len(errs)-1].cli = (&ModelFlags{Provider: "gemini"}).check().Error()
	errs[len(errs)-1].advice = "--provider: unknown provider"
	_, err = llm.NewOpenAI(llm.WithBaseURL("http://localhost:11434/v1"))
	add("no model", err, "no model: set TRACT_MODEL")
	errs[len(errs)-1].cli = adviseConfig(err).Error()
	errs[len(errs)-1].advice = "no model: set TRACT_MODEL\nPass --model NAME (-m NAME), set TRACT_MODEL, or set a default with 'tract config set model NAME'."
	add("schema missing", &postgres.SchemaError{Have: 0, Want: postgres.SchemaVersion}, "'tract migrate'")
	add("schema old", &postgres.SchemaError{Have: postgres.SchemaVersion, Want: postgres.SchemaVersion + 1}, "'tract migrate'")

	user, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, "asked, never answered")
	require.NoError(t, err)
	s := repl.New(repl.Config{Tract: tr, Out: io.Discard, Client: func(string) (llm.Client, error) { return llm.NewScripted(), nil }})
	err = s.Handle(ctx, "/retry")
	add("unanswered message", err, "'tract chat --retry-last'")
	errs[len(errs)-1].hint = replHint(err)

	closed, err := tract.Open(tr.Path())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_, err = closed.Outline(ctx)
	add("outline of a closed handle", err, "")

	for _, e := range errs {
		t.Run(e.name, func(t *testing.T) {
			text := e.err.Error()
			assert.False(t, re.MatchString(text), "the library's error names %q: %s", re.FindString(text), text)
			assert.False(t, envText.MatchString(text), "the library's error names %q: %s", envText.FindString(text), text)
			if e.cli == "" {
				e.cli = rangeFlagError(e.err).Error()
			}
			if e.hint == "" {
				e.hint = errorHint(e.err)
			}
			assert.Contains(t, e.cli+"\n"+e.hint, e.advice)
		})
	}
	assert.Contains(t, errs[len(errs)-2].err.Error(), user.Short())
}
