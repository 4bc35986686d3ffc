package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres/pgtest"
)

// Exit codes of the tract command (cmd/tract/root.go).
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitExhausted = 3
	exitModel     = 4
	exitSkipped   = 6
	exitEscalated = 7
	exitNotFound  = 8
	exitWaiting   = 9
)

// commandTimeout bounds every run of the binary, so a hang fails the test
// instead of the whole package.
const commandTimeout = 30 * time.Second

// sandbox is a working directory and an environment to run tract in. Its
// methods return modified copies, so a test can write
// s.withEnv("TRACT_DB", p).tract("log").
type sandbox struct {
	t   *testing.T
	dir string
	env map[string]string
	// prepare, when set, adjusts every command before it starts.
	prepare func(*exec.Cmd)
	// repo, on the PostgreSQL backend, is the URL of the sandbox's own
	// repository (TRACT_DB); empty on the file backend.
	repo string
}

// newSandbox returns a sandbox in a fresh temporary directory, which is
// also HOME. The environment is built from scratch: nothing of the
// caller's OPENAI_* or TRACT_* leaks in; PATH is kept so that 'cmd:'
// validators can run sh. TRACT_BACKOFF makes the model client's retries
// of transient failures wait a millisecond instead of seconds.
//
// On the PostgreSQL backend (see onPostgres) TRACT_DB names a fresh
// repository in the test database instead, not created yet: 'tract init'
// creates it, as it creates .tract/tract.db on the file backend.
func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{t: t, dir: dir, env: map[string]string{
		"HOME":          dir,
		"NO_COLOR":      "1",
		"PATH":          os.Getenv("PATH"),
		"LANG":          "C.UTF-8",
		"TRACT_BACKOFF": "1ms",
	}}
	if onPostgres() {
		s.repo = pgtest.RepositoryURL(t, pgtest.URL(t))
		s.env["TRACT_DB"] = s.repo
	}
	return s
}

// backendEnv chooses where the end-to-end tests keep the repositories
// they work on: "file" (the default, .tract/tract.db in each test's
// directory) or "postgres" (a repository of its own per test in the
// database TRACT_TEST_POSTGRES_URL names). .ci/run runs this package
// once for each:
//
//	scripts/postgres -- env TRACT_TEST_BACKEND=postgres go test ./tests/
const backendEnv = "TRACT_TEST_BACKEND"

// onPostgres reports whether the tests run on the PostgreSQL backend.
func onPostgres() bool { return os.Getenv(backendEnv) == "postgres" }

// fileOnly skips t on the PostgreSQL backend: what it tests is about
// repository files (their discovery, damage, locks, compaction), and why
// says which.
func fileOnly(t *testing.T, why string) {
	t.Helper()
	if onPostgres() {
		t.Skip("file backend only: " + why)
	}
}

// withEnv returns a copy with the variables set (key, value pairs); an
// empty value removes the variable.
func (s *sandbox) withEnv(kv ...string) *sandbox {
	s.t.Helper()
	require.True(s.t, len(kv)%2 == 0, "withEnv takes key, value pairs")
	c := *s
	c.env = maps.Clone(s.env)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(c.env, kv[i])
			continue
		}
		c.env[kv[i]] = kv[i+1]
	}
	return &c
}

// forTest returns a copy that reports to t (a subtest).
func (s *sandbox) forTest(t *testing.T) *sandbox {
	c := *s
	c.t = t
	return &c
}

// in returns a copy that runs in dir.
func (s *sandbox) in(dir string) *sandbox {
	c := *s
	c.dir = dir
	return &c
}

// result is what one run of the binary produced.
type result struct {
	Args   []string
	Stdout string
	Stderr string
	Code   int
}

func (r result) String() string {
	return fmt.Sprintf("tract %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
}

// tract runs the binary with standard input from /dev/null.
func (s *sandbox) tract(args ...string) result {
	s.t.Helper()
	return s.exec(nil, args)
}

// tractStdin runs the binary with stdin as standard input (a pipe).
func (s *sandbox) tractStdin(stdin string, args ...string) result {
	s.t.Helper()
	return s.exec(strings.NewReader(stdin), args)
}

func (s *sandbox) command(ctx context.Context, stdin *strings.Reader, args []string) (*exec.Cmd, *output, *output) {
	cmd := exec.CommandContext(ctx, tractBin, args...)
	cmd.Dir = s.dir
	cmd.Env = make([]string, 0, len(s.env))
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if s.prepare != nil {
		s.prepare(cmd)
	}
	var stdout, stderr output
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// output collects what a command writes to one of its streams; a test
// may read it while the command runs.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func (s *sandbox) exec(stdin *strings.Reader, args []string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd, stdout, stderr := s.command(ctx, stdin, args)
	return s.finish(args, cmd.Run(), stdout, stderr)
}

// finish turns a finished command into a result and checks what must hold
// for every run: no ANSI escapes (NO_COLOR is set and the streams are not
// terminals) and no Go crash report.
func (s *sandbox) finish(args []string, err error, stdout, stderr *output) result {
	s.t.Helper()
	r := result{Args: args, Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.Code = exitErr.ExitCode()
	default:
		require.NoError(s.t, err, "running %v", args)
	}
	assertNoANSI(s.t, r)
	assertNoCrash(s.t, r)
	return r
}

// background is a tract process started with start.
type background struct {
	s      *sandbox
	args   []string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdout *output
	stderr *output
}

// start runs the binary in the background; wait collects it. A process
// still running when the test ends is killed.
func (s *sandbox) start(args ...string) *background {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	cmd, stdout, stderr := s.command(ctx, nil, args)
	require.NoError(s.t, cmd.Start())
	b := &background{s: s, args: args, cmd: cmd, cancel: cancel, stdout: stdout, stderr: stderr}
	s.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait() // no-op error when wait already ran
	})
	return b
}

// startShell runs script with sh -c in the background, in the sandbox's
// directory and environment; wait collects it.
func (s *sandbox) startShell(script string) *background {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	cmd, stdout, stderr := s.command(ctx, nil, nil)
	cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", script}
	require.NoError(s.t, cmd.Start())
	b := &background{s: s, args: []string{"(sh -c)", script}, cmd: cmd, cancel: cancel, stdout: stdout, stderr: stderr}
	s.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return b
}

// awaitStderr waits until the process has written a line matching re to
// its standard error, and returns the line's submatches.
func (b *background) awaitStderr(re *regexp.Regexp) []string {
	b.s.t.Helper()
	var m []string
	require.Eventually(b.s.t, func() bool {
		m = re.FindStringSubmatch(b.stderr.String())
		return m != nil
	}, commandTimeout, 5*time.Millisecond, "tract %s wrote no line matching %s to stderr:\n%s", strings.Join(b.args, " "), re, b.stderr)
	return m
}

func (b *background) wait() result {
	b.s.t.Helper()
	err := b.cmd.Wait()
	b.cancel()
	return b.s.finish(b.args, err, b.stdout, b.stderr)
}

func assertNoANSI(t *testing.T, r result) {
	t.Helper()
	assert.NotContains(t, r.Stdout, "\x1b[", "ANSI escape on stdout\n%s", r)
	assert.NotContains(t, r.Stderr, "\x1b[", "ANSI escape on stderr\n%s", r)
}

// assertNoCrash fails when the output looks like a Go panic or runtime
// fault: the user must get a message, never a stack trace.
func assertNoCrash(t *testing.T, r result) {
	t.Helper()
	for _, out := range []string{r.Stdout, r.Stderr} {
		for _, sign := range []string{"goroutine ", "panic:", "fatal error:", "[signal "} {
			assert.NotContains(t, out, sign, "Go crash output\n%s", r)
		}
	}
}

// requireExit fails the test unless r exited with code.
func requireExit(t *testing.T, r result, code int) {
	t.Helper()
	require.Equal(t, code, r.Code, "unexpected exit code\n%s", r)
}

// ok runs tract and requires exit 0.
func (s *sandbox) ok(args ...string) result {
	s.t.Helper()
	r := s.tract(args...)
	requireExit(s.t, r, exitOK)
	return r
}

// okStdin runs tract with standard input and requires exit 0.
func (s *sandbox) okStdin(stdin string, args ...string) result {
	s.t.Helper()
	r := s.tractStdin(stdin, args...)
	requireExit(s.t, r, exitOK)
	return r
}

// importMessages imports n user messages whose texts text returns, with
// 'tract import' (one transaction).
func (s *sandbox) importMessages(n int, text func(i int) string) {
	s.t.Helper()
	msgs := make([]map[string]string, n)
	for i := range msgs {
		msgs[i] = map[string]string{"role": "user", "content": text(i)}
	}
	in, err := json.Marshal(msgs)
	require.NoError(s.t, err)
	s.okStdin(string(in), "import")
}

// dbPath is where 'tract init' creates the repository: the file in the
// sandbox's directory, or its database URL on the PostgreSQL backend.
func (s *sandbox) dbPath() string {
	if s.repo != "" {
		return s.repo
	}
	return filepath.Join(s.dir, ".tract", "tract.db")
}

// shownPath is the repository as tract prints it: the file's path, or
// the database URL with its password replaced by "xxxxx".
func (s *sandbox) shownPath() string {
	if s.repo == "" {
		return s.dbPath()
	}
	u, err := url.Parse(s.repo)
	require.NoError(s.t, err)
	return u.Redacted()
}

// storedBytes returns every byte the sandbox's repository holds, to
// search for what must never be stored: the file itself, or, on the
// PostgreSQL backend, a file that 'tract copy' makes of the repository
// (every object, ref and reflog entry).
func (s *sandbox) storedBytes() []byte {
	s.t.Helper()
	p := s.dbPath()
	if s.repo != "" {
		p = filepath.Join(s.t.TempDir(), "stored.db")
		s.ok("copy", s.repo, p)
	}
	data, err := os.ReadFile(p)
	require.NoError(s.t, err)
	return data
}

// initRepo runs 'tract init' and returns the repository path.
func (s *sandbox) initRepo() string {
	s.t.Helper()
	s.ok("init")
	return s.dbPath()
}

// commit commits text with role and returns the new commit's full hash.
func (s *sandbox) commit(role, text string) string {
	s.t.Helper()
	r := s.ok("commit", "--role", role, "-m", text, "--json")
	var c commitInfo
	require.NoError(s.t, json.Unmarshal([]byte(r.Stdout), &c), r.String())
	require.Len(s.t, c.Hash, 64, r.String())
	return c.Hash
}

// commitInfo is a commit as 'tract log --json' and 'tract show --json'
// print it.
type commitInfo struct {
	Hash    string          `json:"hash"`
	Parents []string        `json:"parents"`
	Kind    string          `json:"kind"`
	Role    string          `json:"role"`
	Text    string          `json:"text"`
	Meta    json.RawMessage `json:"meta"`
	Refs    []string        `json:"refs"`
}

// history is 'tract log --all --json', and 'tract log --json' (with no
// orphans).
type history struct {
	Commits []commitInfo `json:"commits"`
	Orphans []struct {
		Fork    string       `json:"fork"`
		Commits []commitInfo `json:"commits"`
		Action  string       `json:"action"`
		Reason  string       `json:"reason"`
	} `json:"orphans"`
}

func decodeJSON[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &v), "stdout is not the expected JSON\n%s", r)
	return v
}

// log returns 'tract log --json' (first-parent from HEAD, newest first).
func (s *sandbox) log() []commitInfo {
	s.t.Helper()
	return decodeJSON[history](s.t, s.ok("log", "--json")).Commits
}

// logAll returns 'tract log --all --json'.
func (s *sandbox) logAll() history {
	s.t.Helper()
	return decodeJSON[history](s.t, s.ok("log", "--all", "--json"))
}

// texts returns the commits' texts, in order.
func texts(cs []commitInfo) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

// fsckOK requires 'tract fsck' to pass.
func (s *sandbox) fsckOK() {
	s.t.Helper()
	r := s.ok("fsck")
	assert.Contains(s.t, r.Stdout, ": ok", r.String())
}

// state is everything a failing command must leave untouched.
type state struct {
	Log, All, Branches, Status string
}

func (s *sandbox) snapshot() state {
	s.t.Helper()
	return state{
		Log:      s.ok("log", "--json").Stdout,
		All:      s.ok("log", "--all", "--json").Stdout,
		Branches: s.ok("branch", "--json").Stdout,
		Status:   s.ok("status", "--json").Stdout,
	}
}

// requireUnchanged checks that the repository still passes fsck and shows
// the same history, branches and HEAD as before.
func (s *sandbox) requireUnchanged(before state) {
	s.t.Helper()
	s.fsckOK()
	after := s.snapshot()
	require.Equal(s.t, before.Log, after.Log, "log --json changed")
	require.Equal(s.t, before.All, after.All, "log --all --json changed")
	require.Equal(s.t, before.Branches, after.Branches, "branch --json changed")
	require.Equal(s.t, before.Status, after.Status, "status --json changed")
}

// lines splits output into lines without the final newline.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
