package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The flags people type from git, gh and llm: --version, log -N and
// reflog -N, and an unknown flag answered with the flags it may mean; a
// bad flag value said in tract's words, never pflag's or strconv's.
func TestCLI_GitStyleFlags(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	for _, m := range []string{"one", "two", "three"} {
		s.commit("user", m)
	}

	assert.Equal(t, s.ok("version").Stdout, s.ok("--version").Stdout)
	assert.Regexp(t, `^tract \S+ \(go`, s.ok("--version").Stdout)

	log := lines(s.ok("log", "-2", "--oneline").Stdout)
	assert.Len(t, log, 2)
	assert.Contains(t, log[0], "three")
	assert.Len(t, lines(s.ok("log", "--oneline", "-1").Stdout), 1)
	assert.Len(t, lines(s.ok("reflog", "-2").Stdout), 2)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "--onelin"}, "tract: unknown flag --onelin\n\nDid you mean this?\n\t--oneline\nRun 'tract log --help' for usage.\n"},
		{[]string{"log", "-n", "abc"}, "tract: -n: \"abc\" is not a number: give a whole number, such as -n 10\nRun 'tract log --help' for usage.\n"},
		{[]string{"log", "--all=maybe"}, "tract: --all: \"maybe\" is not true or false: give --all alone, or --all=false\n"},
		{[]string{"--lock-timeout", "5", "log"}, "tract: --lock-timeout: \"5\" is not a duration: give a number with a unit, such as 500ms, 30s, 5m or 1h30m\n"},
		{[]string{"show", "-2"}, "tract: unknown flag -2\n"},
	} {
		r := s.tract(tc.args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, tc.want, "%q", tc.args)
		assert.NotContains(t, r.Stderr, "strconv", "%q", tc.args)
		assert.Empty(t, r.Stdout)
	}
}
