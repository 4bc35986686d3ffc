package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/llmtest"
)

// emptyRevision is the message of an empty revision or ref, and
// emptyBranchName of an empty branch name, whatever the command.
const (
	emptyRevision   = `empty revision "": name a branch, a commit hash or HEAD (for example HEAD~1)`
	emptyBranchName = `empty branch name "": name a branch ('tract branch' lists them)`
)

// An empty revision is a usage error everywhere a revision (or a branch or
// ref name) is accepted, with one message (another one for a branch name),
// and changes nothing.
func TestRevisions_EmptyIsAUsageError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t) // no request may reach it
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.commit("user", "one")
	s.commit("assistant", "two")
	before := s.snapshot()

	cases := []struct {
		args []string
		flag string // the flag that was empty; "" for an argument
		want string
	}{
		{[]string{"log", ""}, "", emptyRevision},
		{[]string{"log", "--all", ""}, "", emptyRevision},
		{[]string{"show", ""}, "", emptyRevision},
		{[]string{"reset", ""}, "", emptyRevision},
		{[]string{"reset", "--hard", "--force", ""}, "", emptyRevision},
		{[]string{"checkout", ""}, "", emptyRevision},
		{[]string{"switch", ""}, "", emptyBranchName},
		{[]string{"switch", "-c", ""}, "", emptyBranchName},
		{[]string{"compile", ""}, "", emptyRevision},
		{[]string{"branch", ""}, "", emptyBranchName},
		{[]string{"branch", "", "HEAD"}, "", emptyBranchName},
		{[]string{"branch", "new", ""}, "", emptyRevision},
		{[]string{"branch", "-d", ""}, "", emptyBranchName},
		{[]string{"reflog", ""}, "", emptyRevision},
		{[]string{"compress", "--from", "", "--content", "x"}, "--from", emptyRevision},
		{[]string{"compress", "--to=", "--content", "x"}, "--to", emptyRevision},
		{[]string{"compress", "--dry-run", "--branch", ""}, "--branch", emptyBranchName},
		{[]string{"commit", "--role", "user", "-m", "x", "--branch", ""}, "--branch", emptyBranchName},
		{[]string{"chat", "--branch", "", "hello"}, "--branch", emptyBranchName},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			s := s.forTest(t)

			r := s.tract(tc.args...)

			requireExit(t, r, exitUsage)
			assert.Empty(t, r.Stdout)
			want := "tract: " + tc.want
			if tc.flag != "" {
				want = "tract: " + tc.flag + ": " + tc.want
			}
			assert.Equal(t, want+"\nRun 'tract "+tc.args[0]+" --help' for usage.\n", r.Stderr)
			s.requireUnchanged(before)
		})
	}
	assert.Empty(t, srv.Requests())
}

// Errors quote a revision as it was typed, and a step past the history
// says which commit it reached and how many parents that has.
func TestRevisions_ErrorsQuoteTheRevisionAsTyped(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	root := s.commit("user", "one")[:8]
	head := s.commit("assistant", "two")[:8]
	before := s.snapshot()

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"show", "HEAD^^^"}, `unknown revision "HEAD^^^": commit ` + root + ` (HEAD^) has no parent`},
		{[]string{"log", "HEAD^^^"}, `unknown revision "HEAD^^^": commit ` + root + ` (HEAD^) has no parent`},
		{[]string{"show", "HEAD^1^1^1"}, `unknown revision "HEAD^1^1^1": commit ` + root + ` (HEAD^1) has no parent`},
		{[]string{"show", "main~5"}, `unknown revision "main~5": commit ` + root + ` (main~1) has no parent`},
		{[]string{"compile", "main~~~"}, `unknown revision "main~~~": commit ` + root + ` (main~) has no parent`},
		{[]string{"show", "HEAD^3"}, `unknown revision "HEAD^3": commit ` + head + ` (HEAD) has 1 parent`},
		{[]string{"show", "HEAD~^2"}, `unknown revision "HEAD~^2": commit ` + root + ` (HEAD~) has no parent`},
		{[]string{"reset", "HEAD~2"}, `unknown revision "HEAD~2": commit ` + root + ` (HEAD~1) has no parent`},
		{[]string{"checkout", root + "^"}, `unknown revision "` + root + `^": commit ` + root + ` (` + root + `) has no parent`},
		{[]string{"branch", "b", "main^^"}, `unknown revision "main^^": commit ` + root + ` (main^) has no parent`},
		{[]string{"compress", "--from", "HEAD~~", "--content", "x"}, `--from: unknown revision "HEAD~~": commit ` + root + ` (HEAD~) has no parent`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			s := s.forTest(t)

			r := s.tract(tc.args...)

			requireExit(t, r, exitNotFound)
			assert.Contains(t, r.Stderr, tc.want)
			assert.NotContains(t, r.Stderr, "^1^1^1^1", "a revision is not re-rendered")
			s.requireUnchanged(before)
		})
	}
}
