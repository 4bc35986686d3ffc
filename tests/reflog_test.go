package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'tract reflog' prints the moves of HEAD or a branch like git reflog, and
// --json the same entries with full hashes.
func TestReflog_CLI(t *testing.T) {
	s := newSandbox(t)
	s.initRepo()
	first := s.commit("system", "You answer briefly.")
	second := s.commit("user", "Hello")
	s.ok("reset", "--soft", "HEAD~1")
	s.ok("branch", "side")

	lines := strings.Split(strings.TrimSpace(s.ok("reflog").Stdout), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, first[:8]+" HEAD@{0}: reset --soft: moving to HEAD~1", lines[0])
	assert.Equal(t, second[:8]+" HEAD@{1}: commit (message user): Hello", lines[1])
	assert.Equal(t, first[:8]+" HEAD@{2}: commit (message system): You answer briefly.", lines[2])
	assert.Equal(t, lines[0][:9]+"main@{0}: reset --soft: moving to HEAD~1", strings.Split(s.ok("reflog", "main", "-n", "1").Stdout, "\n")[0])
	assert.Equal(t, first[:8]+" side@{0}: branch: created from HEAD\n", s.ok("reflog", "side").Stdout)

	type entry struct {
		Ref, Old, New, Action, Message string
		Index                          int
	}
	es := decodeJSON[[]entry](t, s.ok("reflog", "--json", "-n", "2"))
	require.Len(t, es, 2)
	assert.Equal(t, entry{Ref: "HEAD", Index: 0, Old: second, New: first, Action: "reset", Message: "reset --soft: moving to HEAD~1"}, es[0])
	assert.Equal(t, "[]\n", s.ok("reflog", "STRANDED", "--json").Stdout)

	r := s.tract("reflog", "nope")
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, `"nope" has no reflog`)
	requireExit(t, s.tract("reflog", "a", "b"), exitUsage)
	requireExit(t, s.tract("reflog", "-n", "-1"), exitUsage)
}
