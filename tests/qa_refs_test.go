package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// 'tract reset' reports as orphans only the commits no ref reaches after
// it: a commit still on another branch is not one.
func TestQARefs_ResetCountsOnlyTrueOrphans(t *testing.T) {
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
