package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/storetest"
)

// complete runs cobra's hidden __complete command as a shell's completion
// script does, and returns the candidates (without their descriptions)
// and the directive line.
func (s *sandbox) complete(args ...string) (candidates []string, directive string) {
	s.t.Helper()
	r := s.ok(append([]string{"__complete"}, args...)...)
	for _, l := range lines(r.Stdout) {
		if strings.HasPrefix(l, ":") {
			directive = l
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		candidates = append(candidates, name)
	}
	return candidates, directive
}

// Directives of cobra's completion protocol.
const (
	compNoSpace    = 2
	compNoFileComp = 4
)

func directiveOf(t *testing.T, line string) int {
	t.Helper()
	var n int
	for _, c := range strings.TrimPrefix(line, ":") {
		require.True(t, c >= '0' && c <= '9', "directive %q", line)
		n = n*10 + int(c-'0')
	}
	return n
}

// Completion offers the repository's branches and revisions where a
// command takes them, the validator kinds and the fixed values of flags.
func TestCompletion_BranchesRevisionsAndValidators(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	first := s.commit("user", "hello")
	s.commit("assistant", "hi")
	s.ok("branch", "experiment")
	s.ok("branch", "draft", "HEAD~1")
	s.ok("reset", "HEAD~1")

	branches := []string{"draft", "experiment", "main"}
	revisions := []string{"HEAD", "draft", "experiment", "main", "ORIG_HEAD"}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"show", ""}, revisions},
		{[]string{"log", ""}, revisions},
		{[]string{"compile", ""}, revisions},
		{[]string{"reset", ""}, revisions},
		{[]string{"checkout", ""}, revisions},
		{[]string{"show", first[:2]}, append(revisions, first[:8])},
		{[]string{"switch", ""}, branches},
		{[]string{"switch", "-c", ""}, nil},
		{[]string{"branch", "-d", ""}, branches},
		{[]string{"branch", "new", ""}, revisions},
		{[]string{"branch", ""}, nil},
		{[]string{"reflog", ""}, append([]string{"HEAD", "STRANDED"}, branches...)},
		{[]string{"show", "HEAD", ""}, nil},
		{[]string{"status", ""}, nil},
		{[]string{"status", "--branch", ""}, branches},
		{[]string{"commit", "--branch", ""}, branches},
		{[]string{"chat", "--branch", ""}, branches},
		{[]string{"compress", "--from", ""}, revisions},
		{[]string{"compress", "--to", ""}, revisions},
		{[]string{"chat", "--validate", ""}, []string{"json", "schema:", "regex:", "contains:", "maxlen:", "minlen:", "cmd:", "llm:"}},
		{[]string{"compress", "--validate", "m"}, []string{"maxlen:", "minlen:"}},
		{[]string{"chat", "--on-exhausted", ""}, []string{"abort", "skip", "retry", "ask", "wait", "exit"}},
		{[]string{"chat", "--feedback", ""}, []string{"plain", "xml"}},
		{[]string{"chat", "--retry-context", ""}, []string{"conversation", "fresh"}},
		{[]string{"events", "--format", ""}, []string{"jsonl", "text"}},
		{[]string{"commit", "--role", ""}, []string{"system", "user", "assistant", "tool"}},
		{[]string{"chat", "--provider", ""}, []string{"openai", "anthropic"}},
		{[]string{"models", "--provider", ""}, []string{"openai", "anthropic"}},
		{[]string{"compress", "--structured", ""}, []string{"auto", "off"}},
		{[]string{"import", "--format", ""}, []string{"messages", "openai"}},
		{[]string{"export", "--format", ""}, []string{"openai", "openai-preference", "trl-preference", "trl-kto"}},
		{[]string{"export", "--branch", ""}, branches},
		{[]string{"export", ""}, revisions},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, dir := s.complete(tc.args...)
			assert.ElementsMatch(t, tc.want, got)
			assert.NotZero(t, directiveOf(t, dir)&compNoFileComp, "no file names: %s", dir)
		})
	}

	// A kind waits for its argument: no space after it.
	_, dir := s.complete("chat", "--validate", "reg")
	assert.NotZero(t, directiveOf(t, dir)&compNoSpace)
	_, dir = s.complete("chat", "--validate", "js")
	assert.Zero(t, directiveOf(t, dir)&compNoSpace, "json is whole")
}

// After "schema:", completion offers JSON files and directories.
func TestCompletion_SchemaFiles(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	require.NoError(t, os.MkdirAll(filepath.Join(s.dir, "schemas"), 0o755))
	s.writeFile("schemas/person.json", "{}")
	s.writeFile("schemas/notes.txt", "x")
	s.writeFile("top.json", "{}")

	got, _ := s.complete("chat", "--validate", "schema:")
	assert.Contains(t, got, "schema:schemas/")
	assert.Contains(t, got, "schema:top.json")
	got, _ = s.complete("chat", "--validate", "schema:schemas/")
	assert.Equal(t, []string{"schema:schemas/person.json"}, got)
}

// Without a repository, or with one another process holds, completion
// offers nothing and fails nothing.
func TestCompletion_NoRepositoryOffersNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, args := range [][]string{{"show", ""}, {"switch", ""}, {"status", "--branch", ""}} {
		r := s.ok(append([]string{"__complete"}, args...)...)
		assert.Equal(t, ":4\n", r.Stdout)
		assertNoCrash(t, r)
	}
	bad := s.writeFile("not.db", "just notes")
	got, dir := s.withEnv("TRACT_DB", bad).complete("show", "")
	assert.Empty(t, got)
	assert.Equal(t, ":4", dir)

	db := s.initRepo()
	storetest.HoldWrite(t, openAPI(t, db).Store())
	got, dir = s.withEnv("TRACT_LOCK_TIMEOUT", "1m").complete("switch", "")
	assert.Empty(t, got, "a held repository is not waited for")
	assert.Equal(t, ":4", dir)
}
