package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The library's errors state what is wrong; the command line adds what to
// type about it, after the error.
func TestErrors_CLIAddsTheRemedy(t *testing.T) {
	fileOnly(t, "it runs where no repository file is found")
	s := newSandbox(t)
	r := s.tract("log")
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "tract: not a tract repository: no .tract/tract.db in ")
	assert.Contains(t, r.Stderr, "\nCreate a repository with 'tract init', or name one with --db PATH or TRACT_DB.\n")

	s.initRepo()
	s.commit("user", "one")
	s.commit("user", "two")
	for _, tc := range []struct {
		args      []string
		err, hint string
	}{
		{[]string{"switch", "nope"}, `no such branch: "nope"`, "'tract switch -c NAME'"},
		{[]string{"branch", "-d", "main"}, "tract: branch -d: cannot delete the branch HEAD is on: main\n", "Switch HEAD to another branch first ('tract switch OTHER'; 'tract branch' lists them), then delete it.\n"},
		{[]string{"show", "nothing-here"}, `unknown revision "nothing-here"`, "See 'tract log --all'"},
		{[]string{"compress", "--from", "HEAD", "--to", "HEAD~1", "--content", "x"}, "is newer than its end", "Swap --from and --to."},
	} {
		r := s.tract(tc.args...)
		assert.NotZero(t, r.Code, "%v", tc.args)
		assert.Contains(t, r.Stderr, tc.err, "%v", tc.args)
		assert.Contains(t, r.Stderr, tc.hint, "%v", tc.args)
	}
	s.ok("checkout", "HEAD~1")
	r = s.tractStdin("three", "commit", "--role", "user")
	assert.Contains(t, r.Stderr, "HEAD is detached at")
	assert.Contains(t, r.Stderr, "Create a branch to work on here with 'tract switch -c NAME'.")
}
