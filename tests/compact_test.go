package tests

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// After a hard reset erased most of the history, compact gives the space
// back and the repository is unchanged.
func TestCompact_GivesSpaceBackAfterHardReset(t *testing.T) {
	fileOnly(t, "compact rewrites a file")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.importMessages(1500, func(i int) string { return fmt.Sprintf("message %d %s", i, strings.Repeat("x", 400)) })
	s.ok("reset", "--hard", "--force", "HEAD~1400")
	before := s.snapshot()

	var sizes struct{ Before, After int64 }
	require.NoError(t, json.Unmarshal([]byte(s.ok("compact", "--json").Stdout), &sizes))
	assert.Less(t, sizes.After, sizes.Before/3, "%+v", sizes)
	s.requireUnchanged(before)

	r := s.ok("compact")
	m := regexp.MustCompile(`^Compacted (.+): ([0-9.]+ [KMG]iB) -> ([0-9.]+ [KMG]iB)\n$`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.String())
	assert.Equal(t, db, m[1])
	s.commit("user", "still works")
}
