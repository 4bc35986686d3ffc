package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

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

			requireExit(t, r, exitError)
			assert.Contains(t, r.Stderr, tc.want)
			assert.NotContains(t, r.Stderr, "^1^1^1^1", "a revision is not re-rendered")
			s.requireUnchanged(before)
		})
	}
}
