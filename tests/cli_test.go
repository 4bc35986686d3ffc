package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// init names a repository file by its absolute path, however --db gave
// it, as git init does.
func TestInit_NamesTheFileByItsAbsolutePath(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	want := filepath.Join(s.dir, "rel.db")
	for _, created := range []bool{true, false} {
		r := s.ok("--db", "rel.db", "init", "--json")
		got := decodeJSON[map[string]any](t, r)
		assert.Equal(t, map[string]any{"path": want, "created": created}, got)
		assert.Contains(t, r.Stderr, " in "+want)
	}
}

// A tour of the everyday commands, in the order a new user meets them.
func TestTour_InitCommitLogShowStatusCompile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	r := s.ok("init")
	assert.Empty(t, r.Stdout)
	if onPostgres() {
		assert.Contains(t, r.Stderr, "Initialized empty tract repository in postgres://")
	} else {
		assert.Contains(t, r.Stderr, "Initialized empty tract repository in "+s.dbPath())
		fi, err := os.Stat(s.dbPath())
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "repository file mode")
	}

	r = s.ok("init")
	assert.Contains(t, r.Stderr, "already exists", "a second init changes nothing")

	// -m, stdin without -m (trailing newline dropped), and "-m -".
	r = s.ok("commit", "--role", "system", "-m", "You are terse.")
	assert.Regexp(t, `^\[main [0-9a-f]{8}\] system: You are terse\.\n$`, r.Stdout)
	s.okStdin("What is 2+2?\n", "commit", "--role", "user")
	s.okStdin("4", "commit", "--role", "assistant", "-m", "-")

	cs := s.log()
	require.Len(t, cs, 3)
	assert.Equal(t, []string{"4", "What is 2+2?", "You are terse."}, texts(cs))
	assert.Equal(t, []string{"assistant", "user", "system"}, []string{cs[0].Role, cs[1].Role, cs[2].Role})
	asst, user, sys := cs[0].Hash, cs[1].Hash, cs[2].Hash
	assert.Equal(t, []string{user}, cs[0].Parents)
	assert.Empty(t, cs[2].Parents)

	t.Run("log", func(t *testing.T) {
		s := s.forTest(t)
		out := s.ok("log").Stdout
		assert.Len(t, commitLine.FindAllString(out, -1), 3, out)
		assert.True(t, strings.HasPrefix(out, "commit "+asst+" (HEAD -> main)\n"), out)
		assert.Contains(t, out, "commit "+user+"\n")
		assert.Contains(t, out, "Role:   system\n")
		assert.Contains(t, out, "\n    What is 2+2?\n")
		assert.Less(t, strings.Index(out, asst), strings.Index(out, sys), "newest first")
	})
	t.Run("log --oneline", func(t *testing.T) {
		s := s.forTest(t)
		assert.Equal(t, []string{
			asst[:8] + " (HEAD -> main) assistant: 4",
			user[:8] + " user: What is 2+2?",
			sys[:8] + " system: You are terse.",
		}, lines(s.ok("log", "--oneline").Stdout))
	})
	t.Run("log -n 1", func(t *testing.T) {
		s := s.forTest(t)
		assert.Equal(t, []string{asst[:8] + " (HEAD -> main) assistant: 4"}, lines(s.ok("log", "-n", "1", "--oneline").Stdout))
		out := s.ok("log", "-n", "1").Stdout
		assert.Len(t, commitLine.FindAllString(out, -1), 1, out)
	})
	t.Run("show", func(t *testing.T) {
		s := s.forTest(t)
		for rev, want := range map[string]string{"HEAD": asst, "HEAD~1": user, "HEAD^^": sys, sys[:6]: sys, "main": asst} {
			out := s.ok("show", rev).Stdout
			assert.True(t, strings.HasPrefix(out, "commit "+want), "show %s\n%s", rev, out)
		}
		assert.Contains(t, s.ok("show").Stdout, "commit "+asst, "show defaults to HEAD")
		c := decodeJSON[commitInfo](t, s.ok("show", "--json", "HEAD"))
		assert.Equal(t, asst, c.Hash)
		assert.Equal(t, []string{user}, c.Parents)
		assert.Equal(t, "message", c.Kind)
		assert.Equal(t, "assistant", c.Role)
		assert.Equal(t, "4", c.Text)
		assert.Equal(t, []string{"HEAD -> main"}, c.Refs)
	})
	t.Run("status", func(t *testing.T) {
		s := s.forTest(t)
		out := s.ok("status").Stdout
		assert.Contains(t, out, "On branch main\n")
		assert.Contains(t, out, "HEAD "+asst[:8]+": 3 commits on the chain, 3 messages (~8 tokens) in the compiled context\n")
		assert.Contains(t, out, "Repository "+s.shownPath()+"\n")
		var st struct {
			Branch   string `json:"branch"`
			Detached bool   `json:"detached"`
			Head     string `json:"head"`
			Length   int    `json:"length"`
			Messages int    `json:"messages"`
			Path     string `json:"path"`
		}
		require.NoError(t, json.Unmarshal([]byte(s.ok("status", "--json").Stdout), &st))
		assert.Equal(t, "main", st.Branch)
		assert.False(t, st.Detached)
		assert.Equal(t, asst, st.Head)
		assert.Equal(t, 3, st.Length)
		assert.Equal(t, 3, st.Messages)
		assert.Equal(t, s.shownPath(), st.Path)
	})
	t.Run("compile", func(t *testing.T) {
		s := s.forTest(t)
		// A note is kept in the history but not sent to the model.
		s.ok("commit", "--role", "assistant", "--kind", "note", "-m", "internal remark")
		assert.Equal(t, "[system]\nYou are terse.\n\n[user]\nWhat is 2+2?\n\n[assistant]\n4\n", s.ok("compile").Stdout)

		var msgs []map[string]any
		require.NoError(t, json.Unmarshal([]byte(s.ok("compile", "--json").Stdout), &msgs))
		assert.Equal(t, []map[string]any{
			{"role": "system", "content": "You are terse."},
			{"role": "user", "content": "What is 2+2?"},
			{"role": "assistant", "content": "4"},
		}, msgs, "an OpenAI messages array, exactly role and content")
	})
	s.fsckOK()
}

// commitLine matches the first line of a commit in 'tract log' output.
var commitLine = regexp.MustCompile(`(?m)^commit [0-9a-f]{64}`)

func TestTour_BranchSwitchAndDetachedHead(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	root := s.commit("system", "You are terse.")
	head := s.commit("user", "hello")

	assert.Equal(t, []string{"* main " + head[:8]}, lines(s.ok("branch").Stdout))

	r := s.ok("branch", "exp")
	assert.Contains(t, r.Stderr, "Created branch exp at "+head[:8])
	assert.Equal(t, []string{"  exp " + head[:8], "* main " + head[:8]}, lines(s.ok("branch").Stdout))
	r = s.ok("branch", "-d", "exp")
	assert.Contains(t, r.Stderr, "Deleted branch exp (was "+head[:8]+")")
	assert.Equal(t, []string{"* main " + head[:8]}, lines(s.ok("branch").Stdout))

	r = s.ok("switch", "-c", "side")
	assert.Contains(t, r.Stderr, "Switched to branch side")
	assert.Contains(t, s.ok("status").Stdout, "On branch side\n")
	onSide := s.commit("assistant", "side answer")
	s.ok("switch", "main")
	assert.NotContains(t, texts(s.log()), "side answer", "main does not see side's commit")
	assert.Equal(t, onSide, decodeJSON[history](t, s.ok("log", "--json", "side")).Commits[0].Hash)

	r = s.ok("checkout", root)
	assert.Contains(t, r.Stderr, "HEAD is now detached at "+root[:8])
	assert.Contains(t, s.ok("status").Stdout, "HEAD detached at "+root[:8])

	before := s.snapshot()
	r = s.tract("commit", "--role", "user", "-m", "lost?")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "detached")
	assert.Contains(t, r.Stderr, "switch -c", "the message says how to create a branch")
	assert.Empty(t, r.Stdout)
	s.requireUnchanged(before)

	s.ok("switch", "-c", "rescue")
	s.commit("user", "kept")
	assert.Equal(t, []string{"kept", "You are terse."}, texts(s.log()))
}

func TestTour_ImportFsckGCVersionCompletion(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()

	in := `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]`
	r := s.okStdin(in, "import")
	assert.Contains(t, r.Stderr, "Imported 3 messages")
	assert.Equal(t, []string{"Hello!", "Hi", "Be brief."}, texts(s.log()))
	assert.JSONEq(t, in, s.ok("compile", "--json").Stdout, "compile --json round-trips an import")

	r = s.ok("fsck")
	assert.Regexp(t, `^checked 3 commits, 3 blobs, \d+ refs?, \d+ reflog entr(y|ies), 3 index entries: ok\n$`, r.Stdout)

	r = s.ok("gc")
	assert.Equal(t, "Removed 0 commits, 0 blobs and 0 reflog entries\n", r.Stdout)

	r = s.ok("version")
	assert.Regexp(t, `^tract \S+ \(go1\.\S+ \S+/\S+, schema \d+\)\n$`, r.Stdout)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(s.ok("version", "--json").Stdout), &v))
	assert.Contains(t, v, "version")

	// completion needs no repository.
	r = newSandbox(t).ok("completion", "bash")
	assert.Contains(t, r.Stdout, "bash completion")
	assert.Contains(t, r.Stdout, "__start_tract")
}

// resetFixture makes a repository with five commits and returns their
// hashes, oldest first.
func resetFixture(t *testing.T, s *sandbox) []string {
	t.Helper()
	s.initRepo()
	return []string{
		s.commit("system", "You are terse."),
		s.commit("user", "q1"),
		s.commit("assistant", "a1"),
		s.commit("user", "q2"),
		s.commit("assistant", "a2"),
	}
}

func TestReset_SoftLeavesOrphansAsSideChain(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := resetFixture(t, s)

	r := s.ok("reset", "HEAD~2")
	assert.Equal(t, "HEAD is now at "+c[2][:8]+"\n", r.Stdout)
	assert.Contains(t, r.Stderr, "2 commits left behind as orphans")
	assert.Equal(t, []string{"a1", "q1", "You are terse."}, texts(s.log()))

	// The orphans hang off the commit they forked from:
	//   | * a2
	//   | * q2
	//   |/  orphaned by reset …
	//   * a1 (HEAD -> main)
	//   * q1
	//   * system
	got := lines(s.ok("log", "--all").Stdout)
	require.Len(t, got, 6, strings.Join(got, "\n"))
	assert.Regexp(t, `^\| \* `+c[4][:8]+` .*assistant: a2$`, got[0])
	assert.Regexp(t, `^\| \* `+c[3][:8]+` user: q2$`, got[1])
	assert.Regexp(t, `^\|/  orphaned by reset`, got[2])
	assert.Regexp(t, `^\* `+c[2][:8]+` \(HEAD -> main\) assistant: a1$`, got[3])
	assert.Regexp(t, `^\* `+c[1][:8]+` user: q1$`, got[4])
	assert.Regexp(t, `^\* `+c[0][:8]+` system: You are terse\.$`, got[5])

	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	assert.Equal(t, c[2], h.Orphans[0].Fork)
	assert.Equal(t, []string{"a2", "q2"}, texts(h.Orphans[0].Commits))
	assert.Contains(t, h.Orphans[0].Action, "reset")

	assert.True(t, strings.HasPrefix(s.ok("show", "ORIG_HEAD").Stdout, "commit "+c[4]))
	assert.Contains(t, s.ok("status").Stdout, "ORIG_HEAD "+c[4][:8])
	s.fsckOK()
}

func TestReset_HardWithoutForceIsUsageError(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	resetFixture(t, s)
	before := s.snapshot()

	r := s.tract("reset", "--hard", "HEAD~2")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "--force")
	assert.Contains(t, r.Stderr, "Run 'tract reset --help' for usage.")
	assert.Empty(t, r.Stdout)
	s.requireUnchanged(before)
}

func TestReset_HardForceDeletesLeftBehindCommits(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := resetFixture(t, s)

	r := s.ok("reset", "--hard", "--force", "HEAD~2")
	assert.Equal(t, "HEAD is now at "+c[2][:8]+"\n", r.Stdout)
	assert.Contains(t, r.Stderr, "Deleted 2 commits")

	h := s.logAll()
	assert.Empty(t, h.Orphans)
	assert.Equal(t, []string{"a1", "q1", "You are terse."}, texts(h.Commits))
	all := s.ok("log", "--all").Stdout
	assert.NotContains(t, all, c[4][:8])
	assert.NotContains(t, all, c[3][:8])

	r = s.tract("show", c[4])
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "unknown revision")
	s.fsckOK()
}

// reset --hard exists to erase a leaked secret: afterwards the text must be
// nowhere in the file, not in a commit, a blob, a reflog message or a
// freed page.
func TestReset_HardEraseRemovesSecretFromFileBytes(t *testing.T) {
	fileOnly(t, "it reads the file's free pages")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("system", "You are terse.")
	base := s.commit("user", "what is my password?")
	secret := "hunter2-SECRET-7f3a9c1e5b"
	s.commit("assistant", "your password is "+secret)
	s.commit("user", "thanks; remember "+secret+" for later")

	data, err := os.ReadFile(db)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(data), secret), "precondition: the secret is in the file")

	s.ok("reset", "--hard", "--force", base)
	s.fsckOK()

	// Every process has exited, so the file is closed.
	data, err = os.ReadFile(db)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(data), secret), "the erased secret is still in the bytes of %s", db)
	assert.False(t, strings.Contains(string(data), "your password is"), "the erased commit's text is still in the file")
	assert.NotContains(t, s.ok("log", "--all").Stdout, secret)
}

func TestDiscovery_SubdirectoryFindsParentRepository(t *testing.T) {
	fileOnly(t, "discovery finds .tract/tract.db")
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	sub := filepath.Join(s.dir, "a", "b", "c")
	require.NoError(t, os.MkdirAll(sub, 0o755))

	in := s.in(sub)
	in.ok("commit", "--role", "user", "-m", "from a subdirectory")
	assert.Contains(t, in.ok("status").Stdout, "Repository "+s.dbPath()+"\n")
	assert.Equal(t, []string{"from a subdirectory"}, texts(s.log()))
	assert.NoDirExists(t, filepath.Join(sub, ".tract"))
}

func TestDiscovery_DBFlagAndTRACT_DBOverride(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "in the default repository")

	other := filepath.Join(s.dir, "elsewhere", "other.db")
	s.ok("--db", other, "init")
	fi, err := os.Stat(other)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	s.ok("--db", other, "commit", "--role", "user", "-m", "in the other repository")

	assert.Equal(t, []string{"in the default repository"}, texts(s.log()))
	assert.Equal(t, []string{"in the other repository"},
		texts(decodeJSON[history](t, s.ok("--db", other, "log", "--json")).Commits))

	env := s.withEnv("TRACT_DB", other)
	assert.Equal(t, []string{"in the other repository"}, texts(env.log()), "TRACT_DB beats .tract")
	assert.Equal(t, []string{"in the default repository"},
		texts(decodeJSON[history](t, env.ok("--db", s.dbPath(), "log", "--json")).Commits), "--db beats TRACT_DB")
}

func TestDiscovery_NoRepositorySaysRunInit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, args := range [][]string{{"log"}, {"status"}, {"commit", "--role", "user", "-m", "x"}} {
		r := s.tract(args...)
		requireExit(t, r, exitNotFound)
		assert.Contains(t, r.Stderr, "tract init", r.String())
		assert.Empty(t, r.Stdout)
	}
	assert.NoDirExists(t, filepath.Join(s.dir, ".tract"), "a failed command creates no repository")

	r := s.withEnv("TRACT_DB", filepath.Join(s.dir, "missing.db")).tract("log")
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "missing.db")
	assert.Contains(t, r.Stderr, "tract init")
	assert.NoFileExists(t, filepath.Join(s.dir, "missing.db"))
}

// Each bad input fails with the documented code and a message that names
// the problem, and leaves the repository exactly as it was.
func TestBadInput_RejectedWithoutPartialState(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You are terse.")
	s.commit("user", "hello")
	s.ok("branch", "other")
	before := s.snapshot()

	str := func(v string) *string { return &v }
	cases := []struct {
		name   string
		args   []string
		stdin  *string
		code   int
		stderr []string
	}{
		{"unknown revision", []string{"show", "nope"}, nil, exitNotFound, []string{`unknown revision "nope"`}},
		{"unknown hash", []string{"show", "deadbeef"}, nil, exitNotFound, []string{"deadbeef"}},
		{"revision past the root", []string{"log", "HEAD~10"}, nil, exitNotFound, []string{"HEAD~10"}},
		{"abbreviation under 4 characters", []string{"show", "abc"}, nil, exitNotFound, []string{"abc", "4 characters"}},
		{"reset to unknown revision", []string{"reset", "nope"}, nil, exitNotFound, []string{`"nope"`}},
		{"checkout unknown revision", []string{"checkout", "nope"}, nil, exitNotFound, []string{`"nope"`}},
		{"branch name with a space", []string{"branch", "a b"}, nil, exitUsage, []string{"invalid branch name", "space"}},
		{"branch name with ..", []string{"branch", "a..b"}, nil, exitUsage, []string{"invalid branch name", "'..'"}},
		{"branch name with leading dash", []string{"branch", "--", "-x"}, nil, exitUsage, []string{"invalid branch name", "'-'"}},
		{"switch -c with leading dash", []string{"switch", "-c", "--", "-x"}, nil, exitUsage, []string{"invalid branch name", "'-'"}},
		{"branch name with a control character", []string{"branch", "a\x01b"}, nil, exitUsage, []string{"invalid branch name", "control"}},
		{"branch name with a tab", []string{"branch", "a\tb"}, nil, exitUsage, []string{"invalid branch name"}},
		{"branch that exists", []string{"branch", "other"}, nil, exitUsage, []string{"other"}},
		{"delete the current branch", []string{"branch", "-d", "main"}, nil, exitError, []string{"cannot delete", "main"}},
		{"delete an unknown branch", []string{"branch", "-d", "nope"}, nil, exitNotFound, []string{"nope"}},
		{"empty -m text", []string{"commit", "--role", "user", "-m", ""}, nil, exitUsage, []string{"empty"}},
		{"empty stdin text", []string{"commit", "--role", "user"}, str(""), exitUsage, []string{"empty"}},
		{"invalid UTF-8 on stdin", []string{"commit", "--role", "user"}, str("ab\xffcd\n"), exitUsage, []string{"UTF-8"}},
		{"meta is an array", []string{"commit", "--role", "user", "-m", "x", "--meta", "[1]"}, nil, exitUsage, []string{"JSON object"}},
		{"meta is a string", []string{"commit", "--role", "user", "-m", "x", "--meta", `"x"`}, nil, exitUsage, []string{"JSON object"}},
		{"meta is not JSON", []string{"commit", "--role", "user", "-m", "x", "--meta", "{bad"}, nil, exitUsage, []string{"JSON object"}},
		{"meta pinned is not a boolean", []string{"commit", "--role", "user", "-m", "x", "--meta", `{"pinned": "yes"}`}, nil, exitUsage,
			[]string{`metadata "pinned" is a string ("yes"); tract reads it as a boolean (true or false)`}},
		{"meta attempt is not a number", []string{"commit", "--role", "assistant", "-m", "x", "--meta", `{"attempt": "2"}`}, nil, exitUsage,
			[]string{`metadata "attempt" is a string ("2"); tract reads it as a whole number`}},
		{"meta usage is not an object", []string{"commit", "--role", "assistant", "-m", "x", "--meta", `{"usage": [1]}`}, nil, exitUsage,
			[]string{`metadata "usage" is an array; tract reads it as an object`}},
		{"import with pinned not a boolean", []string{"import"}, str(`[{"role":"user","content":"ok"},{"role":"user","content":"x","meta":{"pinned":1}}]`), exitUsage,
			[]string{"message 2", `metadata "pinned" is a number (1)`}},
		{"unknown role", []string{"commit", "--role", "wizard", "-m", "x"}, nil, exitUsage, []string{"wizard", "--help"}},
		{"unknown flag", []string{"log", "--bogus"}, nil, exitUsage, []string{"unknown flag --bogus", "Run 'tract log --help' for usage."}},
		{"unknown command", []string{"frobnicate"}, nil, exitUsage, []string{`unknown command "frobnicate"`, "Run 'tract --help' for usage."}},
		{"too many arguments", []string{"show", "HEAD", "HEAD~1"}, nil, exitUsage, []string{"--help"}},
		{"import that is not JSON", []string{"import"}, str("[{bad"), exitUsage, []string{"JSON"}},
		{"import with one bad message", []string{"import"}, str(`[{"role":"user","content":"ok"},{"role":"wizard","content":"x"}]`), exitUsage, []string{"message 2", "wizard"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := s.forTest(t)
			var r result
			if tc.stdin != nil {
				r = s.tractStdin(*tc.stdin, tc.args...)
			} else {
				r = s.tract(tc.args...)
			}
			requireExit(t, r, tc.code)
			assert.Empty(t, r.Stdout)
			assert.True(t, strings.HasPrefix(r.Stderr, "tract: "), r.String())
			for _, want := range tc.stderr {
				assert.Contains(t, r.Stderr, want)
			}
			s.requireUnchanged(before)
		})
	}
}

// An abbreviated hash that matches two commits is an error listing both.
func TestBadInput_AmbiguousAbbreviatedHash(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()

	// Import commits in batches until two hashes share a 4-character prefix
	// (about 300 commits by the birthday bound).
	var a, b string
	byPrefix := map[string]string{}
	for batch := 0; a == "" && batch < 20; batch++ {
		var msgs []map[string]string
		for i := range 150 {
			msgs = append(msgs, map[string]string{"role": "user", "content": fmt.Sprintf("message %d.%d", batch, i)})
		}
		in, err := json.Marshal(msgs)
		require.NoError(t, err)
		s.okStdin(string(in), "import")
		for _, c := range s.log() {
			p := c.Hash[:4]
			if o, ok := byPrefix[p]; ok && o != c.Hash {
				a, b = o, c.Hash
				break
			}
			byPrefix[p] = c.Hash
		}
	}
	require.NotEmpty(t, a, "no 4-character collision after 3000 commits")
	prefix := a[:4]
	before := s.snapshot()

	r := s.tract("show", prefix)
	requireExit(t, r, exitUsage)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "ambiguous")
	assert.Contains(t, r.Stderr, prefix)
	assert.Contains(t, r.Stderr, a[:8], "candidates are listed")
	assert.Contains(t, r.Stderr, b[:8], "candidates are listed")
	s.requireUnchanged(before)

	// One more character (where the two differ) resolves it.
	n := 4
	for a[:n] == b[:n] {
		n++
	}
	assert.True(t, strings.HasPrefix(s.ok("show", a[:n+1]).Stdout, "commit "+a))
}

// A file that is not a tract repository is refused with a clear message
// and left byte for byte as it was.
func TestBadInput_NotATractRepository(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	rng := rand.New(rand.NewPCG(7, 11))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	files := map[string][]byte{
		"random.db": random,
		"text.db":   []byte("just some notes\n"),
		"empty.db":  nil,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			s := s.forTest(t)
			p := filepath.Join(s.dir, name)
			require.NoError(t, os.WriteFile(p, content, 0o644))
			for _, args := range [][]string{{"log"}, {"fsck"}, {"commit", "--role", "user", "-m", "x"}} {
				r := s.tract(append([]string{"--db", p}, args...)...)
				requireExit(t, r, exitNotFound)
				assert.Contains(t, r.Stderr, "not a tract repository", r.String())
				assert.Contains(t, r.Stderr, p, r.String())
				assert.Empty(t, r.Stdout)
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, len(content), len(got), "a failed command changed the size of %s", name)
			assert.True(t, string(content) == string(got), "a failed command changed the bytes of %s", name)
		})
	}
}

// A repository file cut short (half of it, and other cut points, on and
// off page boundaries) is reported with a message, never a Go crash.
func TestBadInput_TruncatedRepository(t *testing.T) {
	fileOnly(t, "it truncates a file")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.importMessages(400, func(i int) string { return strings.Repeat(fmt.Sprintf("line %d ", i), 40) })
	s.fsckOK()

	data, err := os.ReadFile(db)
	require.NoError(t, err)
	used := usedBytes(t, db) // bbolt preallocates past the pages in use
	for _, size := range []int{used / 2, used / 4, used * 3 / 4, used/2 + 1000, 5 * 4096} {
		t.Run(fmt.Sprintf("%d of %d bytes", size, len(data)), func(t *testing.T) {
			s := s.forTest(t)
			cut := filepath.Join(s.dir, fmt.Sprintf("truncated-%d.db", size))
			require.NoError(t, os.WriteFile(cut, data[:size], 0o600))
			for _, args := range [][]string{{"fsck"}, {"log"}} {
				r := s.tract(append([]string{"--db", cut}, args...)...)
				assert.NotEqual(t, exitOK, r.Code, r.String())
				assert.True(t, strings.HasPrefix(r.Stderr, "tract: "), "a message, not a crash\n%s", r)
				assert.Contains(t, r.Stdout+r.Stderr, cut, "the message names the file\n%s", r)
			}
		})
	}
}

// usedBytes returns how much of a repository file bbolt's pages use.
func usedBytes(t *testing.T, db string) int {
	t.Helper()
	b, err := store.OpenBolt(db, store.BoltOptions{ReadOnly: true})
	require.NoError(t, err)
	defer b.Close()
	var n int64
	require.NoError(t, b.Shared(context.Background(), func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			n = tx.Size()
			return nil
		})
	}))
	return int(n)
}

// storedCommit is a commit's key and encoding as stored in a file.
type storedCommit struct {
	hash dag.Hash
	raw  []byte
}

// storedCommits returns every commit of the repository file db.
func storedCommits(t *testing.T, db string) []storedCommit {
	t.Helper()
	b, err := store.OpenBolt(db, store.BoltOptions{ReadOnly: true})
	require.NoError(t, err)
	defer b.Close()
	var out []storedCommit
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		return tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
			out = append(out, storedCommit{h, bytes.Clone(raw)})
			return nil
		})
	}))
	return out
}

// onDamagedPages counts the commits of the file data whose every stored
// copy (the key followed by the encoding) touches a page that damaged
// changed or cut off: what no salvage can bring back.
func onDamagedPages(commits []storedCommit, data, damaged []byte) int {
	const page = 4096
	hurt := func(from, to int) bool {
		for p := from / page; p*page < to; p++ {
			lo, hi := p*page, min((p+1)*page, len(data))
			if hi > len(damaged) || !bytes.Equal(data[lo:hi], damaged[lo:hi]) {
				return true
			}
		}
		return false
	}
	n := 0
	for _, c := range commits {
		copyOf := append(c.hash[:len(c.hash):len(c.hash)], c.raw...)
		lost := true
		for off := 0; ; {
			i := bytes.Index(data[off:], copyOf)
			if i < 0 {
				break
			}
			if !hurt(off+i, off+i+len(copyOf)) {
				lost = false
				break
			}
			off += i + 1
		}
		if lost {
			n++
		}
	}
	return n
}

// damageKinds returns damaged copies of the repository file data, whose
// pages in use end at used bytes: cut short, a run of pages zeroed, bytes
// flipped at random, and the first meta page zeroed (bbolt keeps two).
func damageKinds(data []byte, used int) map[string][]byte {
	page := 4096
	zeroed := bytes.Clone(data)
	from := (used / page / 3) * page
	clear(zeroed[from : from+4*page])
	flipped := bytes.Clone(data)
	rng := rand.New(rand.NewPCG(7, 11))
	for range 40 {
		i := 2*page + rng.IntN(used-2*page)
		flipped[i] ^= byte(1 + rng.IntN(255))
	}
	meta := bytes.Clone(data)
	clear(meta[:page])
	return map[string][]byte{
		"truncated":   data[:used/2],
		"zeroed":      zeroed,
		"bit-flips":   flipped,
		"meta zeroed": meta,
	}
}

// Every command on a damaged file either works or fails with a message
// naming the problem, never Go runtime text; fsck reports the damage on
// any of them; a file found damaged refuses writes; and --salvage copies
// what is intact into a new repository that checks clean and takes
// commits.
func TestDamagedFile_EveryCommandFailsCleanlyAndSalvageRecovers(t *testing.T) {
	fileOnly(t, "it damages a file's pages")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.importMessages(400, func(i int) string { return strings.Repeat(fmt.Sprintf("line %d ", i), 40) })
	s.ok("branch", "side")
	s.commit("user", "on main after the branch")
	s.fsckOK()
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	used := usedBytes(t, db)
	commits := storedCommits(t, db)

	commands := [][]string{
		{"status"}, {"log", "-n", "3"}, {"log", "--all", "--oneline"}, {"show"}, {"compile", "--json"},
		{"reflog"}, {"branch"}, {"commit", "--role", "user", "-m", "more"}, {"gc", "--dry-run"},
	}
	for name, damaged := range damageKinds(data, used) {
		t.Run(name, func(t *testing.T) {
			s := s.forTest(t)
			slug := strings.ReplaceAll(name, " ", "-")
			path := filepath.Join(s.dir, slug+".db")
			require.NoError(t, os.WriteFile(path, damaged, 0o600))
			for _, args := range commands {
				r := s.tract(append([]string{"--db", path}, args...)...)
				assertNoCrash(t, r)
				assert.NotContains(t, r.Stderr, "runtime error", r.String())
				if r.Code != exitOK {
					assert.True(t, strings.HasPrefix(r.Stderr, "tract: "), "a message, not a crash\n%s", r)
				}
			}

			r := s.tract("--db", path, "fsck")
			assertNoCrash(t, r)
			assert.Contains(t, r.Stdout, "checked ", "fsck reports on any file\n%s", r)
			if r.Code == exitOK {
				// Only damage that bbolt routes around may pass.
				require.Equal(t, "meta zeroed", name, "fsck missed the damage\n%s", r)
				return
			}
			requireExit(t, r, exitError)
			assert.Contains(t, r.Stdout, "error: ")

			// Found damaged: writes are refused from now on.
			w := s.tract("--db", path, "commit", "--role", "user", "-m", "after fsck")
			assert.NotEqual(t, exitOK, w.Code, "a write to a repository fsck found damaged\n%s", w)
			assertNoCrash(t, w)

			out := filepath.Join(s.dir, slug+"-salvaged.db")
			before := mustRead(t, path)
			r = s.tract("--db", path, "fsck", "--salvage", out)
			assertNoCrash(t, r)
			requireExit(t, r, exitOK)
			assert.Contains(t, r.Stdout, "the new repository checks clean")
			// Every commit stored off the damaged pages comes back (99%
			// of them at least), its history whole or not.
			m := regexp.MustCompile(`salvaged (\d+) commits?`).FindStringSubmatch(r.Stdout)
			require.NotNil(t, m, r.String())
			got, _ := strconv.Atoi(m[1])
			want := len(commits) - onDamagedPages(commits, data, damaged)
			assert.GreaterOrEqual(t, 100*got, 99*want, "salvaged %d of the %d commits stored off the damaged pages\n%s", got, want, r)
			t.Logf("%s: salvaged %d of the %d commits stored off the damaged pages (%d in the file)", name, got, want, len(commits))
			s.ok("--db", out, "fsck")
			s.ok("--db", out, "log", "--all", "--oneline")
			s.ok("--db", out, "commit", "--role", "user", "-m", "life goes on")
			assert.Equal(t, before, mustRead(t, path), "salvage changed the damaged file")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// zeroAPageOfCommits imports 1,000 messages into s's repository and
// writes a copy of its file at path with one page of commits zeroed: the
// page holding the most commits but not the branch's tip (a lost tip
// leaves the branch to a guess among the surviving chains), so the chain
// below it has no branch. It returns the stored commits and the file's
// bytes before and after.
func zeroAPageOfCommits(t *testing.T, s *sandbox) (path string, commits []storedCommit, data, damaged []byte) {
	t.Helper()
	db := s.initRepo()
	s.importMessages(1000, func(i int) string { return fmt.Sprintf("message %d", i) })
	tip := strings.TrimSpace(s.ok("log", "-1", "--format", "%H").Stdout)
	data = mustRead(t, db)
	commits = storedCommits(t, db)
	const page = 4096
	count := map[int]int{}
	tipPage := -1
	for _, c := range commits {
		p := bytes.Index(data, append(c.hash[:len(c.hash):len(c.hash)], c.raw...)) / page
		count[p]++
		if c.hash.String() == tip {
			tipPage = p
		}
	}
	require.NotEqual(t, -1, tipPage, "the branch's tip is among the stored commits")
	zero := -1
	for p, n := range count {
		if p != tipPage && (zero < 0 || n > count[zero] || n == count[zero] && p < zero) {
			zero = p
		}
	}
	damaged = bytes.Clone(data)
	clear(damaged[zero*page : (zero+1)*page])
	path = filepath.Join(s.dir, "damaged.db")
	require.NoError(t, os.WriteFile(path, damaged, 0o600))
	return path, commits, data, damaged
}

// A page of commits zeroed, salvage keeps every other commit: log ends
// each surviving chain where its history was lost and says so, log --all
// shows the chains under refs/salvaged/, and fsck finds the new repository
// clean with a note of the boundaries.
func TestSalvage_LogSaysWhereHistoryWasLost(t *testing.T) {
	fileOnly(t, "it damages a file's pages")
	t.Parallel()
	s := newSandbox(t)
	path, commits, data, damaged := zeroAPageOfCommits(t, s)
	out := filepath.Join(s.dir, "salvaged.db")
	r := s.ok("--db", path, "fsck", "--salvage", out)
	assert.Contains(t, r.Stdout, fmt.Sprintf("salvaged %d commits", len(commits)-onDamagedPages(commits, data, damaged)), r.String())
	assert.Contains(t, r.Stdout, "whose parent was lost (each now the root of its chain)")
	assert.NotContains(t, r.Stdout, "its history was not recovered whole")

	r = s.ok("--db", out, "log", "--oneline")
	assert.Regexp(t, `\nhistory lost before here \(parent [0-9a-f]{8} not recovered\)\n$`, r.Stdout)
	r = s.ok("--db", out, "log", "--all", "--oneline")
	assert.Contains(t, r.Stdout, "refs/salvaged/")
	r = s.ok("--db", out, "fsck")
	assert.Regexp(t, `note: salvaged from a damaged file: \d+ chains? starts? where history was lost`, r.Stdout)
	s.ok("--db", out, "commit", "--role", "user", "-m", "life goes on")
	s.ok("--db", out, "fsck")
}

// A ref salvage made for a chain no branch reaches is kept on a branch
// and then deleted with 'branch -d' and its full name, as the salvage's
// output says; gc keeps the chain on its branch.
func TestSalvage_SalvagedRefIsDeletedWithBranchD(t *testing.T) {
	fileOnly(t, "it damages a file's pages")
	t.Parallel()
	s := newSandbox(t)
	path, _, _, _ := zeroAPageOfCommits(t, s)
	out := filepath.Join(s.dir, "salvaged.db")
	r := s.ok("--db", path, "fsck", "--salvage", out)
	ref := regexp.MustCompile(`refs/salvaged/[0-9a-f]+`).FindString(r.Stdout)
	require.NotEmpty(t, ref, r.String())
	assert.Contains(t, r.Stdout, "'tract branch -d "+ref+"'")
	salvagedTip := strings.TrimSpace(s.ok("--db", out, "log", "-1", "--format", "%H", ref).Stdout)

	s.ok("--db", out, "branch", "kept", ref)
	r = s.ok("--db", out, "branch", "-d", ref)
	assert.Equal(t, fmt.Sprintf("Deleted branch %s (was %s)\n", ref, salvagedTip[:8]), r.Stderr)
	assert.NotContains(t, s.ok("--db", out, "log", "--all", "--oneline").Stdout, ref)
	assert.Contains(t, s.ok("--db", out, "branch").Stdout, "kept")

	r = s.tract("--db", out, "branch", "-d", ref)
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "no such branch")
	s.ok("--db", out, "gc", "--expire", "now")
	assert.Equal(t, salvagedTip, strings.TrimSpace(s.ok("--db", out, "log", "-1", "--format", "%H", "kept").Stdout))
	s.ok("--db", out, "fsck")
}

// Salvaging an intact repository copies all of it.
func TestSalvage_IntactRepositoryIsCopiedWhole(t *testing.T) {
	fileOnly(t, "salvage reads a file")
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.importMessages(50, func(i int) string { return fmt.Sprintf("message %d", i) })
	s.ok("switch", "-c", "side")
	s.commit("user", "on side")
	before := s.ok("log", "--all", "--oneline").Stdout
	out := filepath.Join(s.dir, "copy.db")
	r := s.ok("fsck", "--salvage", out)
	assert.NotContains(t, r.Stdout, "lost:")
	assert.Equal(t, before, s.ok("--db", out, "log", "--all", "--oneline").Stdout)
	assert.Equal(t, s.ok("reflog").Stdout, s.ok("--db", out, "reflog").Stdout)
	r = s.tract("fsck", "--salvage", out)
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "already exists")
}

// reset --unborn takes every commit off the branch; ORIG_HEAD brings them
// back. A revision with it, or a detached HEAD, is refused and changes
// nothing.
func TestReset_UnbornEmptiesTheBranch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	c := resetFixture(t, s)

	before := s.snapshot()
	requireExit(t, s.tract("reset", "--unborn", "HEAD~1"), exitUsage)
	s.requireUnchanged(before)

	r := s.ok("reset", "--unborn")
	assert.Equal(t, "branch main has no commits now\n", r.Stdout)
	assert.Contains(t, r.Stderr, "5 commits left behind as orphans")
	assert.Empty(t, s.log())
	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	assert.Len(t, h.Orphans[0].Commits, 5)
	assert.Contains(t, s.ok("reflog").Stdout, "HEAD@{0}: reset --soft: moving to unborn")
	s.fsckOK()

	s.ok("reset", "ORIG_HEAD")
	assert.Equal(t, []string{"a2", "q2", "a1", "q1", "You are terse."}, texts(s.log()))

	s.ok("checkout", c[1])
	r = s.tract("reset", "--unborn")
	requireExit(t, r, 1)
	assert.Contains(t, r.Stderr, "only a branch can be unborn")
	assert.Contains(t, r.Stderr, "tract switch -c NAME")
}
