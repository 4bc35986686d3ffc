package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/store/storetest"
)

// documentedExitCodes reads the exit-code table of docs/exit-codes.md:
// each class's name and its code.
func documentedExitCodes(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "exit-codes.md"))
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([a-z-]+) \| .+ \|$`)
	codes := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		code, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		codes[m[2]] = code
	}
	require.Len(t, codes, 11, "docs/exit-codes.md's table: %v", codes)
	return codes
}

// 'tract help exit-codes' prints docs/exit-codes.md's table, 'tract --help' lists
// the topic, and the codes these tests use are the documented ones.
func TestExitCodes_HelpTopicIsTheDocumentedTable(t *testing.T) {
	t.Parallel()
	codes := documentedExitCodes(t)
	s := newSandbox(t)
	help := s.ok("help", "exit-codes").Stdout
	for name, code := range codes {
		assert.Regexp(t, regexp.MustCompile(`(?m)^ +`+strconv.Itoa(code)+` +`+name+` `), help)
	}
	assert.Regexp(t, `(?m)^  exit-codes +The exit codes of every command$`, s.ok("--help").Stdout)
	for name, code := range map[string]int{"ok": exitOK, "error": exitError, "usage": exitUsage, "exhausted": exitExhausted,
		"model": exitModel, "conflict": exitConflict, "skipped": exitSkipped, "escalated": exitEscalated, "not-found": exitNotFound, "waiting": exitWaiting} {
		assert.Equal(t, codes[name], code, name)
	}
}

// exitCase is one error path of a command: what to run, the class of
// docs/exit-codes.md's table it must exit with, and what stderr says.
type exitCase struct {
	command string // the command whose error path it is
	name    string
	args    []string
	stdin   *string
	// model, when set, scripts the model server the command talks to.
	model []llmtest.Reply
	class string
	// stderr holds what the message must contain; notStderr what it must not.
	stderr, notStderr []string
	// env holds variables to set (key, value pairs; an empty value unsets).
	env []string
}

// Every command's error paths exit with the code of their class in the
// table of docs/exit-codes.md: a usage error for each command, a not-found where it
// names something, and the other classes where they apply.
func TestExitCodes_EveryCommandsErrorPaths(t *testing.T) {
	t.Parallel()
	codes := documentedExitCodes(t)
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You are terse.")
	s.commit("user", "hello")
	s.ok("branch", "other")
	str := func(v string) *string { return &v }
	notJSON := llmtest.Answer("not JSON")

	cases := []exitCase{
		{command: "init", name: "an argument", args: []string{"init", "x"}, class: "usage"},
		{command: "init", name: "a path under a file", args: []string{"--db", "/dev/null/x.db", "init"}, class: "error"},
		{command: "commit", name: "unknown role", args: []string{"commit", "--role", "wizard", "-m", "x"}, class: "usage"},
		{command: "commit", name: "empty message", args: []string{"commit", "--role", "user", "-m", ""}, class: "usage",
			notStderr: []string{"--help"}},
		{command: "commit", name: "metadata not an object", args: []string{"commit", "--role", "user", "-m", "x", "--meta", "[1]"}, class: "usage"},
		{command: "commit", name: "unknown branch", args: []string{"commit", "--role", "user", "-m", "x", "--branch", "nope"}, class: "not-found"},
		{command: "log", name: "unknown flag", args: []string{"log", "--bogus"}, class: "usage"},
		{command: "log", name: "unknown revision", args: []string{"log", "nope"}, class: "not-found"},
		{command: "show", name: "two revisions", args: []string{"show", "HEAD", "HEAD~1"}, class: "usage"},
		{command: "show", name: "bad revision syntax", args: []string{"show", "HEAD~~x"}, class: "usage"},
		{command: "show", name: "unknown revision", args: []string{"show", "nope"}, class: "not-found",
			stderr: []string{`unknown revision "nope"`, "'tract log --all'"}},
		{command: "show", name: "past the root", args: []string{"show", "HEAD~5"}, class: "not-found"},
		{command: "reset", name: "hard without force", args: []string{"reset", "--hard", "HEAD~1"}, class: "usage"},
		{command: "reset", name: "unknown revision", args: []string{"reset", "nope"}, class: "not-found"},
		{command: "branch", name: "invalid name", args: []string{"branch", "a..b"}, class: "usage"},
		{command: "branch", name: "name taken", args: []string{"branch", "other"}, class: "usage"},
		{command: "branch", name: "json with a name", args: []string{"branch", "--json", "x"}, class: "usage"},
		{command: "branch", name: "delete unknown", args: []string{"branch", "-d", "nope"}, class: "not-found"},
		{command: "branch", name: "delete current", args: []string{"branch", "-d", "main"}, class: "error"},
		{command: "checkout", name: "no argument", args: []string{"checkout"}, class: "usage"},
		{command: "checkout", name: "unknown revision", args: []string{"checkout", "nope"}, class: "not-found"},
		{command: "switch", name: "no argument", args: []string{"switch"}, class: "usage"},
		{command: "switch", name: "create a taken name", args: []string{"switch", "-c", "other"}, class: "usage"},
		{command: "switch", name: "unknown branch", args: []string{"switch", "nope"}, class: "not-found"},
		{command: "status", name: "an argument", args: []string{"status", "x"}, class: "usage"},
		{command: "status", name: "unknown branch", args: []string{"status", "--branch", "nope"}, class: "not-found"},
		{command: "compile", name: "unknown flag", args: []string{"compile", "--bogus"}, class: "usage"},
		{command: "compile", name: "unknown revision", args: []string{"compile", "nope"}, class: "not-found"},
		{command: "chat", name: "bad validator", args: []string{"chat", "--validate", "nope:x", "hi"}, class: "usage"},
		{command: "chat", name: "unknown branch", args: []string{"chat", "--branch", "nope", "hi"}, model: []llmtest.Reply{}, class: "not-found"},
		{command: "chat", name: "exhausted", args: []string{"chat", "--validate", "json", "--max-attempts", "2", "hi"},
			model: []llmtest.Reply{notJSON, notJSON}, class: "exhausted"},
		{command: "chat", name: "skipped", args: []string{"chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "skip", "--task", "t", "hi"},
			model: []llmtest.Reply{notJSON}, class: "skipped"},
		{command: "chat", name: "server error", args: []string{"chat", "hi"},
			model: []llmtest.Reply{llmtest.Error(500, "down"), llmtest.Error(500, "down"), llmtest.Error(500, "down"), llmtest.Error(500, "down")}, class: "model"},
		{command: "chat", name: "unauthorized", args: []string{"chat", "hi"}, model: []llmtest.Reply{llmtest.Unauthorized()}, class: "escalated"},
		{command: "events", name: "unknown format", args: []string{"events", "--format", "xml"}, class: "usage"},
		{command: "events", name: "json and text", args: []string{"events", "--json", "--format", "text"}, class: "usage"},
		{command: "stats", name: "bad since", args: []string{"stats", "--since", "bogus"}, class: "usage"},
		{command: "compress", name: "to and keep-last", args: []string{"compress", "--to", "HEAD", "--keep-last", "1"}, class: "usage"},
		{command: "compress", name: "reversed range", args: []string{"compress", "--from", "HEAD", "--to", "HEAD~1", "--content", "x"}, class: "usage"},
		{command: "compress", name: "llm validator without a model", args: []string{"compress", "--content", "x", "--validate", "llm:short"}, class: "usage",
			stderr: []string{"needs a judge model", "--model NAME (-m NAME), TRACT_MODEL"}, notStderr: []string{"WithJudge"}},
		{command: "compress", name: "unknown revision", args: []string{"compress", "--from", "nope", "--content", "x"}, class: "not-found"},
		{command: "import", name: "not JSON", args: []string{"import"}, stdin: str("[{bad"), class: "usage"},
		{command: "import", name: "unknown role", args: []string{"import"}, stdin: str(`[{"role":"wizard","content":"x"}]`), class: "usage"},
		{command: "import", name: "missing file", args: []string{"import", "missing.jsonl"}, class: "not-found"},
		{command: "fsck", name: "an argument", args: []string{"fsck", "x"}, class: "usage"},
		{command: "gc", name: "bad expiry", args: []string{"gc", "--expire", "soon"}, class: "usage"},
		{command: "compact", name: "an argument", args: []string{"compact", "x"}, class: "usage"},
		{command: "copy", name: "one argument", args: []string{"copy", "x.db"}, class: "usage"},
		{command: "copy", name: "into itself", args: []string{"copy", s.dbPath(), s.dbPath()}, class: "usage",
			stderr: []string{"same repository"}},
		{command: "copy", name: "missing source", args: []string{"copy", "missing.db", "new.db"}, class: "not-found",
			stderr: []string{"copy from missing.db"}},
		{command: "migrate", name: "an argument", args: []string{"migrate", "x"}, class: "usage"},
		{command: "migrate", name: "no database", args: []string{"migrate"}, class: "usage", stderr: []string{"migrate needs a database"},
			env: []string{"TRACT_DB", ""}},
		{command: "migrate", name: "a repository file", args: []string{"--db", "repo.db", "migrate"}, class: "usage", stderr: []string{"not a postgres:// URL"}},
		{command: "reflog", name: "negative count", args: []string{"reflog", "-n", "-1"}, class: "usage"},
		{command: "reflog", name: "unknown ref", args: []string{"reflog", "nope"}, class: "not-found"},
		{command: "version", name: "an argument", args: []string{"version", "x"}, class: "usage"},
		{command: "help", name: "unknown command", args: []string{"frobnicate"}, class: "usage"},
		{command: "help", name: "unknown topic", args: []string{"help", "nosuch"}, class: "usage",
			stderr: []string{`no help topic "nosuch"`, "'tract help' lists"}},
		{command: "completion", name: "unknown shell", args: []string{"completion", "tcsh"}, class: "usage"},
		{command: "chat", name: "escalation waits", args: []string{"chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "hi"},
			model: []llmtest.Reply{notJSON}, class: "waiting", stderr: []string{"tract escalation answer", "tract chat --resume"}},
		{command: "chat", name: "resume of no escalation", args: []string{"chat", "--resume", "nosuch"}, class: "not-found",
			stderr: []string{"no escalation nosuch", "'tract escalations' lists"}},
		{command: "chat", name: "resume with a message", args: []string{"chat", "--resume", "k3x9qa", "hi"}, class: "usage"},
		{command: "escalations", name: "an argument", args: []string{"escalations", "x"}, class: "usage"},
		{command: "escalation", name: "answer without an answer", args: []string{"escalation", "answer", "k3x9qa"}, class: "usage"},
		{command: "escalation", name: "answer of no escalation", args: []string{"escalation", "answer", "nosuch", "retry"}, class: "not-found"},
		{command: "escalation", name: "show of no escalation", args: []string{"escalation", "show", "nosuch"}, class: "not-found"},
		{command: "escalation", name: "a bad id", args: []string{"escalation", "show", "a/b"}, class: "usage"},
		{command: "chat", name: "retry-last with a message", args: []string{"chat", "--retry-last", "hi"}, class: "usage"},
		{command: "chat", name: "retry-last with nothing to retry", args: []string{"chat", "--retry-last"}, model: []llmtest.Reply{}, class: "error",
			stderr: []string{"nothing to retry"}},
		{command: "chat", name: "unknown provider", args: []string{"chat", "--provider", "bard", "hi"}, class: "usage"},
		{command: "config", name: "unknown setting", args: []string{"config", "set", "nosuch", "x"}, class: "usage",
			stderr: []string{"model, system, provider"}},
		{command: "config", name: "setting not set", args: []string{"config", "get", "model"}, class: "error"},
		{command: "demo", name: "an argument", args: []string{"demo", "x"}, class: "usage", stderr: []string{"(got 1 argument: x)"}},
		{command: "export", name: "unknown format", args: []string{"export", "--format", "nosuch"}, class: "usage"},
		{command: "export", name: "unknown revision", args: []string{"export", "nope"}, class: "not-found"},
		{command: "import", name: "unknown format", args: []string{"import", "--format", "nosuch"}, class: "usage"},
		{command: "models", name: "an argument", args: []string{"models", "x"}, class: "usage"},
		{command: "serve", name: "a public address without a token", args: []string{"serve", "--addr", "0.0.0.0:0"}, class: "usage",
			stderr: []string{"not a loopback address", "TRACT_SERVE_TOKEN"}},
		{command: "mcp", name: "an argument", args: []string{"mcp", "x"}, class: "usage", stderr: []string{"(got 1 argument: x)"}},
		{command: "graph", name: "unknown format", args: []string{"graph", "--format", "svg"}, class: "usage"},
		{command: "graph", name: "unknown revision", args: []string{"graph", "nope"}, class: "not-found"},
		{command: "log", name: "unknown placeholder", args: []string{"log", "--format", "%q"}, class: "usage"},
		{command: "log", name: "unknown date mode", args: []string{"log", "--date", "someday"}, class: "usage"},
		{command: "log", name: "a bad --grep pattern", args: []string{"log", "--grep", "a("}, class: "usage"},
		{command: "search", name: "no query", args: []string{"search"}, class: "usage"},
		{command: "search", name: "a query without a word", args: []string{"search", "--", "-*-"}, class: "usage", stderr: []string{"has no word"}},
		{command: "search", name: "too many words", args: []string{"search", "a", "b", "c", "d", "e", "f", "g", "h", "i"}, class: "usage"},
	}
	for _, tc := range cases {
		t.Run(tc.command+" "+tc.name, func(t *testing.T) {
			run := s
			if tc.model != nil {
				// A turn writes: each gets a repository of its own.
				srv := llmtest.NewServer(t, llmtest.WithoutVerify())
				srv.Reply(tc.model...)
				run = chatEnv(newSandbox(t), srv)
				run.initRepo()
			}
			if tc.env != nil {
				run = run.withEnv(tc.env...)
			}
			var r result
			if tc.stdin != nil {
				r = run.tractStdin(*tc.stdin, tc.args...)
			} else {
				r = run.tract(tc.args...)
			}
			code, ok := codes[tc.class]
			require.True(t, ok, "class %q is not in docs/exit-codes.md's table", tc.class)
			requireExit(t, r, code)
			assertNoCrash(t, r)
			for _, want := range tc.stderr {
				assert.Contains(t, r.Stderr, want)
			}
			for _, not := range tc.notStderr {
				assert.NotContains(t, r.Stderr, not)
			}
		})
	}

	// Every command has its usage error in the table.
	covered := map[string]bool{}
	for _, tc := range cases {
		if tc.class == "usage" {
			covered[tc.command] = true
		}
	}
	for _, name := range commandNames(t, s) {
		assert.True(t, covered[name], "no usage error of 'tract %s' in the table", name)
	}
}

// commandNames lists the commands 'tract --help' shows.
func commandNames(t *testing.T, s *sandbox) []string {
	t.Helper()
	help := s.ok("--help").Stdout
	_, after, ok := strings.Cut(help, "\nCommands:\n")
	require.True(t, ok, help)
	var names []string
	for _, l := range strings.Split(after, "\n") {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		names = append(names, strings.Fields(l)[0])
	}
	require.True(t, slices.Contains(names, "chat"), names)
	return names
}

// The classes that need a situation rather than a command line: no
// repository, a repository another process holds, a detached HEAD, a
// conflict and an interrupt.
func TestExitCodes_Situations(t *testing.T) {
	t.Parallel()
	codes := documentedExitCodes(t)

	t.Run("no repository", func(t *testing.T) {
		t.Parallel()
		r := newSandbox(t).tract("log")
		requireExit(t, r, codes["not-found"])
		assert.Contains(t, r.Stderr, "tract init")
	})
	t.Run("locked", func(t *testing.T) {
		fileOnly(t, "a database's readers never wait for its writers")
		t.Parallel()
		s := newSandbox(t)
		db := s.initRepo()
		storetest.HoldWrite(t, openAPI(t, db).Store())
		r := s.tract("status", "--lock-timeout", "100ms")
		requireExit(t, r, codes["error"])
		assert.Contains(t, r.Stderr, "--lock-timeout")
	})
	t.Run("detached HEAD", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		s.initRepo()
		root := s.commit("user", "one")
		s.commit("user", "two")
		s.ok("checkout", root)
		r := s.tract("commit", "--role", "user", "-m", "three")
		requireExit(t, r, codes["error"])
		assert.Contains(t, r.Stderr, "tract: commit: HEAD is detached at "+root[:8]+": commits go on a branch\n")
		assert.Contains(t, r.Stderr, "'tract switch -c NAME'", "the CLI gives the remedy in its own terms")
		assert.NotContains(t, r.Stderr, "Switch(", "no Go call reaches the command line")
	})
	t.Run("no model configured", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		s.initRepo()
		r := s.tract("chat", "hi")
		requireExit(t, r, codes["usage"])
		assert.Contains(t, r.Stderr, "no model: set TRACT_MODEL\n")
		assert.Contains(t, r.Stderr, "Pass --model NAME (-m NAME), set TRACT_MODEL, or set a default with 'tract config set model NAME'.")
		assert.NotContains(t, r.Stderr, "WithModel")
	})
	t.Run("conflict", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		s.initRepo()
		chat, _, release := heldChat(t, s, "the answer", "question")
		s.withEnv("TRACT_LOCK_TIMEOUT", whileChatting).commit("user", "interloper")
		release()
		requireExit(t, chat.wait(), codes["conflict"])
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		s.initRepo()
		srv := llmtest.NewServer(t, llmtest.WithoutVerify())
		srv.Reply(llmtest.Reply{Content: "too late", Delay: 10 * time.Second})
		chat := chatEnv(s, srv).start("chat", "slow question")
		require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, chat.cmd.Process.Signal(os.Interrupt))
		requireExit(t, chat.wait(), codes["interrupted"])
	})
}
