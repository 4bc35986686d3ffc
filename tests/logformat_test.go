package tests

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// isoDate is --date iso: seconds, never nanoseconds, and the offset.
const isoDate = `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}`

// Each --format placeholder on the commits of a validated retry: the
// failed attempt, its steering and the clean answer HEAD is on.
func TestLog_FormatPlaceholders(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)
	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	chain := h.Orphans[0].Commits // newest first: accepted attempt, steering, failed attempt
	failed, steering := chain[2], chain[1]
	head := h.Commits[0]
	var when struct {
		Time time.Time `json:"time"`
	}
	require.NoError(t, json.Unmarshal([]byte(s.ok("show", "--json", failed.Hash).Stdout), &when))

	cases := []struct {
		name, rev, format string
		want              string // a regular expression for the whole output, without its final newline
	}{
		{"hash", failed.Hash, "%H", failed.Hash},
		{"short hash", failed.Hash, "%h", failed.Hash[:8]},
		{"parents", failed.Hash, "%P", failed.Parents[0]},
		{"short parents", failed.Hash, "%p", failed.Parents[0][:8]},
		{"role", failed.Hash, "%r", "assistant"},
		{"kind", steering.Hash, "%k", "steering"},
		{"role of steering", steering.Hash, "%r", "user"},
		{"date", failed.Hash, "%d", isoDate},
		{"author date", failed.Hash, "%ad", isoDate},
		{"iso date", failed.Hash, "%ai", isoDate},
		{"relative date", failed.Hash, "%ar", `\d+ seconds? ago`},
		{"unix date", failed.Hash, "%at", fmt.Sprint(when.Time.Unix())},
		{"subject", steering.Hash, "%s", regexp.QuoteMeta("Your previous response failed validation: json: invalid JSON at line 1, column 27: unexpected end of JSON input")},
		{"body", steering.Hash, "%b", regexp.QuoteMeta("Please try again, addressing the issue above.")},
		{"whole text", steering.Hash, "%B", regexp.QuoteMeta(steering.Text)},
		{"refs", head.Hash, "%D", regexp.QuoteMeta("HEAD -> main")},
		{"no refs", failed.Hash, "[%D]", regexp.QuoteMeta("[]")},
		{"diagnosis", failed.Hash, "%x", regexp.QuoteMeta("verification_failed: json: invalid JSON at line 1, column 27: unexpected end of JSON input")},
		{"no diagnosis", head.Hash, "[%x]", regexp.QuoteMeta("[]")},
		{"newline", failed.Hash, "%h%n%r", failed.Hash[:8] + "\nassistant"},
		{"percent", failed.Hash, "100%% %r", "100% assistant"},
		{"literal text", failed.Hash, "commit %h by %r.", "commit " + failed.Hash[:8] + ` by assistant\.`},
		{"format: prefix", failed.Hash, "format:%r", "assistant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.forTest(t).ok("log", "-n", "1", "--format", tc.format, tc.rev)
			assert.Regexp(t, "^"+tc.want+"$", strings.TrimSuffix(r.Stdout, "\n"))
			assert.True(t, strings.HasSuffix(r.Stdout, "\n"), "each commit ends with a newline")
		})
	}

	// One line per commit, the first-parent history.
	assert.Equal(t, []string{"user", "assistant", "user", "system"}, lines(s.ok("log", "--format", "%r").Stdout))
	// --date unix and relative change %d.
	assert.Regexp(t, `^\d+$`, strings.TrimSpace(s.ok("log", "-n", "1", "--date", "unix", "--format", "%d").Stdout))
	assert.Regexp(t, ` ago$`, strings.TrimSpace(s.ok("log", "-n", "1", "--date", "relative", "--format", "%d").Stdout))

	r := s.tract("log", "--format", "%h %z")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, `unknown placeholder "%z"`)
	assert.Regexp(t, `--format TEMPLATE +print by TEMPLATE \(see 'tract help history'\)`, s.ok("log", "--help").Stdout, "the help says where the placeholders are")
	assert.Contains(t, s.ok("help", "history").Stdout, "%x the diagnosis of a failed attempt", "the guide lists them")
}

// Human output writes dates to the second, as --date says.
func TestLog_Dates(t *testing.T) {
	t.Parallel()
	s := divergedRepo(t)
	failed := s.logAll().Orphans[0].Commits[2]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "-n", "1"}, `(?m)^Date:   ` + isoDate + `$`},
		{[]string{"log", "-n", "1", "--date", "iso"}, `(?m)^Date:   ` + isoDate + `$`},
		{[]string{"log", "-n", "1", "--date", "unix"}, `(?m)^Date:   \d{10}$`},
		{[]string{"log", "-n", "1", "--date", "relative"}, `(?m)^Date:   \d+ seconds? ago$`},
		{[]string{"show"}, `(?m)^Date:   ` + isoDate + `$`},
		{[]string{"show", "--date", "unix"}, `(?m)^Date:   \d{10}$`},
		{[]string{"show", failed.Hash}, `(?m)^Failure: attempt 1, verification_failed, at ` + isoDate + `$`},
	} {
		out := s.ok(tc.args...).Stdout
		assert.Regexp(t, tc.want, out, tc.args)
		// The metadata show prints last is the record as stored, in JSON.
		words, _, _ := strings.Cut(out, "\nMetadata:\n")
		assert.NotRegexp(t, `\d\d:\d\d:\d\d\.\d`, words, "no fractions of a second: %v", tc.args)
	}
	requireExit(t, s.tract("show", "--date", "rfc"), exitUsage)

	// reflog names each move by its time with --date, by its index without.
	assert.Regexp(t, `^[0-9a-f]{8} HEAD@\{0\}: `, lines(s.ok("reflog").Stdout)[0])
	assert.Regexp(t, `^[0-9a-f]{8} HEAD@\{`+isoDate+`\}: `, lines(s.ok("reflog", "--date", "iso").Stdout)[0])
	assert.Regexp(t, `^[0-9a-f]{8} main@\{\d+ seconds? ago\}: `, lines(s.ok("reflog", "main", "--date", "relative").Stdout)[0])
	requireExit(t, s.tract("reflog", "--date", ""), exitUsage)
	assert.Equal(t, []string{"iso", "relative", "unix", ":4"}, lines(s.ok("__complete", "log", "--date", "").Stdout), "the shell completes the modes")
	assert.Equal(t, []string{"dot", "mermaid", ":4"}, lines(s.ok("__complete", "graph", "--format", "").Stdout))
}

// log --json and log --all --json have one shape, an object of commits
// and orphan chains, and every empty list is [] (never null or absent).
func TestLog_JSONShape(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	empty := "{\n  \"commits\": [],\n  \"orphans\": []\n}\n"
	assert.Equal(t, empty, s.ok("log", "--json").Stdout)
	assert.Equal(t, empty, s.ok("log", "--all", "--json").Stdout)
	assert.Equal(t, "[]\n", s.ok("reflog", "--json").Stdout)

	root := s.commit("system", "be brief")
	s.commit("user", "hello")
	s.commit("assistant", "hi")
	s.ok("branch", "side")
	s.ok("reset", "--soft", "HEAD~1")
	for _, args := range [][]string{{"log", "--json"}, {"log", "--all", "--json"}} {
		var v map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(s.ok(args...).Stdout), &v), args)
		assert.Len(t, v, 2, "commits and orphans: %v", args)
		var commits []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(v["commits"], &commits))
		require.NotEmpty(t, commits)
		for _, c := range commits {
			for _, field := range []string{"hash", "parents", "kind", "role", "text", "time", "refs"} {
				assert.Contains(t, c, field, "%v: every commit has %s", args, field)
			}
		}
		last := commits[len(commits)-1]
		assert.JSONEq(t, `"`+root+`"`, string(last["hash"]))
		assert.Equal(t, "[]", string(last["parents"]), "a root's parents")
		assert.Equal(t, "[]", string(last["refs"]), "no refs")
		assert.Equal(t, "[]", string(v["orphans"]), "nothing is orphaned: the branch keeps it")
	}
	show := s.ok("show", "--json", root).Stdout
	assert.Contains(t, show, `"parents": [],`)
	assert.Contains(t, show, `"refs": []`)
}

// A one-line --format stays one line per commit when a placeholder holds
// several lines (a cmd: validator's multi-line diagnosis in %x): the
// lines are joined with spaces. A format with %n prints them as they are.
func TestLog_OneLineFormatWithAMultiLineDiagnosis(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("bad"), llmtest.Answer("ok"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.ok("chat", "--validate", "cmd:grep -q ok || { echo 'x.go:3: first problem'; echo '  x.go:5: second problem'; exit 1; }", "Fix it.")

	commits := len(s.logAll().Commits)
	for _, o := range s.logAll().Orphans {
		commits += len(o.Commits)
	}
	out := s.ok("log", "--all", "--format", "%h %k %x").Stdout
	assert.Len(t, lines(out), commits+1, "one line per commit and the line where the side chain joins:\n%s", out)
	assert.Contains(t, out, ": x.go:3: first problem x.go:5: second problem\n", "the lines joined with a space")

	flat := s.ok("log", "--format", "%h %x").Stdout
	assert.Len(t, lines(flat), len(s.logAll().Commits), flat)

	multi := s.ok("log", "--all", "--format", "%h %k%n%x").Stdout
	assert.Contains(t, multi, "| | x.go:3: first problem\n", "a format with %n keeps the lines, beside the graph")
	assert.Contains(t, multi, "x.go:5: second problem\n")
}
