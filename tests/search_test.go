package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// log --grep keeps the commits whose text or diagnosis matches; with
// --all it finds the failed attempt purify hid, by its diagnosis.
func TestLogGrep_FindsPurifiedAttemptsDiagnosis(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)

	// The first-parent history holds no failed attempt.
	r := s.tract("log", "--grep", "unexpected end")
	requireExit(t, r, exitOK)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "No commit matches.")

	out := s.ok("log", "--all", "--grep", "UNEXPECTED END", "-i").Stdout
	ls := lines(out)
	require.Len(t, ls, 2, out) // the failed attempt, and the steering that quotes its diagnosis
	for _, l := range ls {
		assert.Contains(t, l, "orphaned by purify", "a match is marked as an orphan")
	}
	assert.Contains(t, ls[1], "assistant")

	// --json keeps log --all's shape: the one chain with the match.
	h := decodeJSON[history](t, s.ok("log", "--all", "--json", "--grep", "unexpected end"))
	assert.Empty(t, h.Commits)
	require.Len(t, h.Orphans, 1)
	require.Len(t, h.Orphans[0].Commits, 2)
	assert.Equal(t, "steering", h.Orphans[0].Commits[0].Kind)
	assert.Contains(t, h.Orphans[0].Commits[1].Text, `"green"`)
	assert.Contains(t, string(h.Orphans[0].Commits[1].Meta), "unexpected end", "found by its diagnosis")
	h = decodeJSON[history](t, s.ok("log", "--all", "--json", "-n", "1", "--grep", "unexpected end"))
	require.Len(t, h.Orphans, 1)
	assert.Len(t, h.Orphans[0].Commits, 1, "-n counts matches")

	// Several patterns: any; --all-match: each; -n counts matches.
	got := texts(decodeJSON[history](t, s.ok("log", "--json", "--grep", "thanks", "--grep", "side question")).Commits)
	assert.Equal(t, []string{"thanks"}, got, "side question is not on main's first-parent line")
	got = texts(decodeJSON[history](t, s.ok("log", "--json", "--grep", "colours", "--grep", "JSON")).Commits)
	assert.Equal(t, []string{"List three colours as JSON", "You answer in JSON."}, got)
	got = texts(decodeJSON[history](t, s.ok("log", "--json", "--all-match", "--grep", "colours", "--grep", "JSON")).Commits)
	assert.Equal(t, []string{"List three colours as JSON"}, got)
	got = texts(decodeJSON[history](t, s.ok("log", "--json", "-n", "1", "--grep", "JSON")).Commits)
	assert.Equal(t, []string{"List three colours as JSON"}, got)
	assert.Len(t, lines(s.ok("log", "--oneline", "--grep", "JSON").Stdout), 2)
	assert.Len(t, lines(s.ok("log", "--format", "%h %s", "--grep", "JSON").Stdout), 2)

	r = s.tract("log", "--grep", "a(")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `--grep "a(" is not a regular expression`)
	requireExit(t, s.tract("log", "-i"), exitUsage)
}

type searchOutput struct {
	Query   string `json:"query"`
	Commits []struct {
		commitInfo
		Time time.Time `json:"time"`
	} `json:"commits"`
}

// hitTexts are the texts of a search's matches.
func hitTexts(r searchOutput) []string {
	out := []string{}
	for _, c := range r.Commits {
		out = append(out, c.Text)
	}
	return out
}

// search finds words across branches and orphans, newest first, and
// forgets what a hard reset and gc erased.
func TestSearch_WordsNewestFirstAndErased(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)

	res := decodeJSON[searchOutput](t, s.ok("search", "--json", "Colors"))
	assert.Equal(t, "colors", res.Query)
	// The accepted answer (purified) and the failed attempt (an orphan),
	// and the accepted attempt the purify hid, newest first.
	require.NotEmpty(t, res.Commits)
	for i := 1; i < len(res.Commits); i++ {
		assert.False(t, res.Commits[i].Time.After(res.Commits[i-1].Time), "newest first")
	}
	var orphanFound bool
	for _, c := range res.Commits {
		orphanFound = orphanFound || strings.Contains(c.Text, `"green"`) && !strings.Contains(c.Text, "blue")
	}
	assert.True(t, orphanFound, "the failed attempt is found: %v", hitTexts(res))

	// Words AND; the side branch counts; a prefix with '*'.
	res = decodeJSON[searchOutput](t, s.ok("search", "--json", "side", "answer"))
	assert.Equal(t, []string{"side answer"}, hitTexts(res))
	res = decodeJSON[searchOutput](t, s.ok("search", "--json", "colo*"))
	assert.Contains(t, hitTexts(res), "List three colours as JSON")
	res = decodeJSON[searchOutput](t, s.ok("search", "--json", "-n", "1", "side"))
	assert.Equal(t, []string{"side answer"}, hitTexts(res), "the newest of two")

	out := s.ok("search", "side").Stdout
	assert.Len(t, lines(out), 2)
	assert.Contains(t, lines(out)[0], "side answer")
	r := s.tract("search", "nothing-like-this-anywhere")
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stderr, "No commit holds")
	requireExit(t, s.tract("search", "--", "-- ;"), exitUsage)
	requireExit(t, s.tract("search"), exitUsage)

	// A hard reset and gc erase the side branch: search forgets it.
	s.ok("commit", "--branch", "side", "--role", "user", "-m", "zanzibar secret")
	require.Len(t, decodeJSON[searchOutput](t, s.ok("search", "--json", "zanzibar")).Commits, 1)
	s.ok("checkout", "side")
	s.ok("reset", "--hard", "--force", "HEAD~1")
	assert.Empty(t, decodeJSON[searchOutput](t, s.ok("search", "--json", "zanzibar")).Commits)
	if !onPostgres() {
		assert.NotContains(t, string(s.storedBytes()), "zanzibar", "erased from the file")
	}
}
