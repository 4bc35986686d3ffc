package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm/llmtest"
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

// The errors whose remedy the library used to name (a command, a flag)
// state the facts, and the command line adds the remedy on the next line,
// or names its own flag where the library names the argument.
func TestErrors_RemedyMovedToTheCLI(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t) // asked nothing
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	root := s.commit("user", "one")
	s.commit("assistant", "two")
	s.ok("switch", "-c", "side")
	side := s.commit("user", "on the side")
	s.ok("switch", "main")
	for _, tc := range []struct {
		args      []string
		err, hint string
	}{
		{[]string{"compress", "--content", "a", "--content", "b", "--content", "c"},
			"tract: compress: wrong number of summaries: 3 summaries given for 1 group to summarize\n",
			"Give one --content per group to summarize: 'tract compress --dry-run' with the same range shows the groups.\n"},
		{[]string{"compress", "--from", "HEAD~9", "--content", "x"},
			"tract: compress: --from: unknown revision \"HEAD~9\": commit " + root[:8] + " (HEAD~1) has no parent\n", "See 'tract log --all' for commits"},
		{[]string{"compress", "--to", "side", "--content", "x"},
			"tract: compress: --to side (" + side[:8] + "): not on the current branch's first-parent chain (is it on another branch?)\n", ""},
		{[]string{"show", "main@{yesterday}"},
			"tract: show: bad revision syntax \"main@{yesterday}\": only REF@{N} is understood, N counting moves back in REF's reflog\n",
			"'tract reflog main' lists the moves of main, newest first, as main@{0}, main@{1}, …\n"},
		{[]string{"chat", "--provider", "gemini", "hi"},
			"tract: --provider: unknown provider \"gemini\": want openai or anthropic\n", "Run 'tract chat --help' for usage.\n"},
	} {
		r := s.tract(tc.args...)
		assert.NotZero(t, r.Code, "%v", tc.args)
		assert.Contains(t, r.Stderr, tc.err, "%v", tc.args)
		assert.Contains(t, r.Stderr, tc.err+tc.hint, "the remedy follows the error: %v", tc.args)
	}

	// Inside the chat, /retry on a message the branch ends in without an
	// answer: the REPL prints the chat's remedy after the error.
	user := s.commit("user", "asked, never answered")
	r := s.okStdin("/retry\n", "chat", "--interactive")
	assert.Contains(t, r.Stderr, "error: nothing to retry: the branch ends in the user message "+user[:8]+
		", with no answer or error to replace\nTo send it again, leave the chat (/exit) and run 'tract chat --retry-last'.\n")
}
