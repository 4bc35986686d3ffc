package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'tract reset' reports as orphans only the commits no ref reaches after
// it: a commit still on another branch is not one.
func TestRefs_ResetCountsOnlyTrueOrphans(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	a := s.commit("user", "a")
	s.commit("user", "b")
	s.ok("branch", "keep")

	r := s.ok("reset", "--soft", "HEAD~1")
	assert.Equal(t, "HEAD is now at "+a[:8]+"\n", r.Stdout)
	assert.NotContains(t, r.Stderr, "orphans", "b is still the tip of keep")

	s.ok("reset", "--soft", "keep")
	type result struct{ Orphaned int }
	assert.Zero(t, decodeJSON[result](t, s.ok("reset", "--soft", "HEAD~1", "--json")).Orphaned)
	assert.Zero(t, decodeJSON[result](t, s.ok("reset", "--unborn", "--json")).Orphaned, "keep reaches a and b")

	s.ok("reset", "--soft", "keep")
	s.commit("user", "c")
	r = s.ok("reset", "--soft", "HEAD~2")
	assert.Contains(t, r.Stderr, "1 commit left behind as orphans", "c alone is on no branch")
}

// The names tract uses for refs and reflogs of its own, and git's "@",
// cannot be branch names: 'tract reflog STRANDED' keeps meaning the
// reflog of results conflicts kept off their branches.
func TestRefs_ReservedBranchNames(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "a")
	for _, name := range []string{"STRANDED", "@", "HEAD", "x.lock", "a..b"} {
		for _, args := range [][]string{{"branch", name}, {"switch", "-c", name}} {
			r := s.tract(args...)
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, `invalid branch name "`+name+`"`, r.String())
		}
	}
	branches := lines(s.ok("branch").Stdout)
	require.Len(t, branches, 1)
	assert.True(t, strings.HasPrefix(branches[0], "* main "), branches[0])
	assert.Equal(t, "[]\n", s.ok("reflog", "STRANDED", "--json").Stdout)
}

// Under --branch B, HEAD in a revision means B's tip, as the flag's help
// says: 'reset --branch b HEAD~1' moves b back one commit.
func TestRefs_BranchFlagHEADMeansTheBranch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "m1")
	m2 := s.commit("user", "m2")
	s.ok("branch", "b")
	m3 := s.commit("user", "m3")
	m4 := s.commit("user", "m4")
	s.ok("commit", "--branch", "b", "--role", "user", "-m", "b3")

	r := s.ok("reset", "--branch", "b", "HEAD~1")

	assert.Equal(t, "branch b is now at "+m2[:8]+"\n", r.Stdout, "b~1, not HEAD~1 (%s)", m3[:8])
	assert.Equal(t, m4, s.log()[0].Hash, "HEAD's branch did not move")
	assert.Contains(t, s.ok("reset", "--help").Stdout, "--branch NAME   work on branch NAME; HEAD then means NAME's tip")
}

// A taken branch name gets a hint that fits the command: 'switch -c' can
// go to the branch instead.
func TestRefs_TakenBranchNameHints(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "a")
	s.ok("branch", "feat")

	r := s.tract("switch", "-c", "feat")
	requireExit(t, r, exitUsage)
	assert.Equal(t, "tract: switch: branch already exists: feat\n"+
		"To go to it, run 'tract switch feat' (without -c); or choose another name.\n", r.Stderr)

	r = s.tract("branch", "feat")
	requireExit(t, r, exitUsage)
	assert.Equal(t, "tract: branch: branch already exists: feat\n"+
		"Choose another name, or delete the branch first with 'tract branch -d NAME'.\n", r.Stderr)
}

// Deleting the branch HEAD is on says so once, and what to do.
func TestRefs_DeleteCurrentBranch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "a")

	r := s.tract("branch", "-d", "main")

	requireExit(t, r, exitError)
	assert.Equal(t, "tract: branch -d: cannot delete the branch HEAD is on: main\n"+
		"Switch HEAD to another branch first ('tract switch OTHER'; 'tract branch' lists them), then delete it.\n", r.Stderr)
}

// 'tract commit -m a -m b' keeps both, as paragraphs.
func TestRefs_CommitJoinsSeveralMessages(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()

	s.ok("commit", "--role", "user", "-m", "first", "-m", "second")

	assert.Equal(t, "first\n\nsecond", s.log()[0].Text)
}

// The REF@{N} that 'tract reflog' prints is a revision.
func TestRefs_ReflogPositionIsARevision(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "a")
	b := s.commit("user", "b")
	s.ok("reset", "--soft", "HEAD~1")
	require.Contains(t, s.ok("reflog").Stdout, b[:8]+" HEAD@{1}: commit")

	r := s.ok("reset", "--soft", "HEAD@{1}")

	assert.Equal(t, "HEAD is now at "+b[:8]+"\n", r.Stdout)
	assert.Equal(t, b, decodeJSON[commitInfo](t, s.ok("show", "main@{0}", "--json")).Hash)
	r = s.tract("show", "HEAD@{9}")
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, `unknown revision "HEAD@{9}": the reflog of HEAD has 4 entries, HEAD@{0} to HEAD@{3}`)
	r = s.tract("show", "HEAD@{yesterday}")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "only REF@{N} is understood")
}

// Importing no messages says that nothing was imported, and where the
// branch stays: with no commits yet (tip 64 zeros in JSON, as status
// shows a branch with no commits), or at its tip.
func TestRefs_ImportOfNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()

	r := s.ok("import", "/dev/null")
	assert.Equal(t, "Imported nothing (no messages in the input); branch main still has no commits\n", r.Stderr)
	type record struct {
		Messages int
		Branch   string
		Tip      string
	}
	zeros := strings.Repeat("0", 64)
	assert.Equal(t, record{Branch: "main", Tip: zeros}, decodeJSON[record](t, s.ok("import", "--json", "/dev/null")))
	type status struct{ Head string }
	assert.Equal(t, zeros, decodeJSON[status](t, s.ok("status", "--json")).Head, "the same zeros as status")

	a := s.commit("user", "a")
	r = s.ok("import", "/dev/null")
	assert.Equal(t, "Imported nothing (no messages in the input); HEAD is still at "+a[:8]+"\n", r.Stderr)
}

// On an empty repository 'log' and 'log --all' say so alike: on stderr,
// with nothing on stdout, and exit 0.
func TestRefs_LogOfAnEmptyRepository(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"log"}, "No commits yet on branch main.\n"},
		{[]string{"log", "--oneline"}, "No commits yet on branch main.\n"},
		{[]string{"log", "--all"}, "No commits yet in this repository.\n"},
		{[]string{"log", "--all", "--oneline"}, "No commits yet in this repository.\n"},
	} {
		r := s.ok(tc.args...)
		assert.Empty(t, r.Stdout, "%v", tc.args)
		assert.Equal(t, tc.want, r.Stderr, "%v", tc.args)
	}
	assert.JSONEq(t, `{"commits": [], "orphans": []}`, s.ok("log", "--all", "--json").Stdout)
}
