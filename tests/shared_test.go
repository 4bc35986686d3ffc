package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/store/storetest"
)

// A bounded wait for the commands run while another process works: were
// the file locked across the model call, each would fail after it with
// "locked" (exit 1) instead of succeeding.
const whileChatting = "2s"

// heldChat starts 'tract chat' against a model whose answer is held until
// release is called, and waits until the model was asked.
func heldChat(t *testing.T, s *sandbox, reply string, args ...string) (chat *background, srv *llmtest.Server, release func()) {
	t.Helper()
	srv = llmtest.NewServer(t)
	hold := make(chan struct{})
	srv.Reply(llmtest.Reply{Content: reply, Hold: hold})
	chat = chatEnv(s, srv).start(append([]string{"chat"}, args...)...)
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 5*time.Millisecond,
		"the chat never reached the model")
	released := false
	release = func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release)
	return chat, srv, release
}

// While a chat waits for its model, reads and writes from other processes
// succeed at once. The message is committed once the model answers (a
// wrong setup then leaves nothing), so until then nothing of the turn
// shows; its attempts show as they happen (below).
func TestShared_CommandsWhileChatWaitsForModel(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You are terse.")
	chat, _, release := heldChat(t, s, "the answer", "what is it?")

	other := s.withEnv("TRACT_LOCK_TIMEOUT", whileChatting)
	all := decodeJSON[history](t, other.ok("log", "--all", "--json"))
	assert.Equal(t, []string{"You are terse."}, texts(all.Commits), "nothing written before the model answers")
	assert.Contains(t, other.ok("status").Stdout, "On branch main")
	assert.Contains(t, other.ok("show").Stdout, "You are terse.")
	other.ok("branch", "side")
	other.ok("commit", "--branch", "side", "-r", "user", "-m", "written meanwhile on side")
	other.ok("log", "--all", "--oneline")

	release()
	r := chat.wait()
	requireExit(t, r, exitOK)
	assert.Equal(t, "the answer\n", r.Stdout)
	assert.Equal(t, []string{"the answer", "what is it?", "You are terse."}, texts(s.log()))
	side := decodeJSON[history](t, s.ok("log", "side", "--json")).Commits
	assert.Equal(t, "written meanwhile on side", side[0].Text)
	s.fsckOK()
}

// With validation, each attempt and its steering are visible to log --all
// while the model is still answering the next attempt.
func TestShared_AttemptsVisibleWhileModelAnswersTheNext(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	srv := llmtest.NewServer(t)
	hold := make(chan struct{})
	srv.Reply(llmtest.Answer("not json"), llmtest.Reply{Content: `{"ok": true}`, Hold: hold})
	chat := chatEnv(s, srv).start("chat", "--validate", "json", "answer in JSON")
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 10*time.Second, 5*time.Millisecond)

	all := decodeJSON[history](t, s.withEnv("TRACT_LOCK_TIMEOUT", whileChatting).ok("log", "--all", "--json"))
	require.Len(t, all.Commits, 3)
	assert.Equal(t, "steering", all.Commits[0].Kind)
	assert.Equal(t, "not json", all.Commits[1].Text)
	assert.Equal(t, "answer in JSON", all.Commits[2].Text)

	close(hold)
	r := chat.wait()
	requireExit(t, r, exitOK)
	assert.Equal(t, "{\"ok\": true}\n", r.Stdout)
	s.fsckOK()
}

// A commit on the chat's branch while the model answers: the chat exits
// with the conflict code and names the answer it kept, with the message
// before it, which log --all lists; the other commit stays on the
// branch.
func TestShared_CommitOnChatBranchEndsChatWithConflict(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	chat, _, release := heldChat(t, s, "the answer", "question")
	interloper := s.withEnv("TRACT_LOCK_TIMEOUT", whileChatting).commit("user", "interloper")
	release()

	r := chat.wait()
	requireExit(t, r, exitConflict)
	assert.Empty(t, r.Stdout, "no answer on stdout: it is not on the branch")
	assert.Contains(t, r.Stderr, "tract: chat: branch main moved from ")
	assert.Contains(t, r.Stderr, "to "+interloper[:8])
	assert.Contains(t, r.Stderr, "the answer was kept off the branch as commit ")
	all := s.logAll()
	require.Len(t, all.Orphans, 1, "the answer is kept\n%s", r)
	kept := all.Orphans[0]
	assert.Equal(t, "conflict", kept.Action)
	assert.Equal(t, []string{"the answer", "question"}, texts(kept.Commits))
	short := kept.Commits[0].Hash[:8]
	assert.Contains(t, r.Stderr, "commit "+short)
	assert.Contains(t, r.Stderr, "'tract show "+short+"'")
	assert.Contains(t, r.Stderr, "'tract branch NAME "+short+"'")
	assert.Contains(t, r.Stderr, "'tract reset --soft "+short+"'")
	assert.Equal(t, interloper, s.log()[0].Hash)

	graph := s.ok("log", "--all").Stdout
	assert.Contains(t, graph, "stranded by a conflict: answer kept off main, which moved from", graph)

	// The user applies it on a branch of its own.
	s.ok("branch", "kept", short)
	kb := decodeJSON[history](t, s.ok("log", "kept", "--json")).Commits
	assert.Equal(t, []string{"the answer", "question"}, texts(kb))
	s.fsckOK()
}

// An agent chats on its own branch while a person commits on main: both
// succeed and HEAD stays on main.
func TestShared_ChatOnSideBranchBesideCommitOnMain(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "shared prompt")
	s.ok("branch", "side")
	chat, srv, release := heldChat(t, s, "side answer", "--branch", "side", "side question")
	s.withEnv("TRACT_LOCK_TIMEOUT", whileChatting).ok("commit", "--branch", "main", "-r", "user", "-m", "main message")
	release()
	requireExit(t, chat.wait(), exitOK)

	st := decodeJSON[struct {
		Branch string `json:"branch"`
	}](t, s.ok("status", "--json"))
	assert.Equal(t, "main", st.Branch)
	assert.Equal(t, []string{"main message", "shared prompt"}, texts(s.log()))
	side := decodeJSON[history](t, s.ok("log", "side", "--json")).Commits
	assert.Equal(t, []string{"side answer", "side question", "shared prompt"}, texts(side))
	assert.Equal(t, []string{"shared prompt", "side question"}, contentsOf(srv.Requests()[0].Messages),
		"the model saw the side branch's context")
	s.fsckOK()
}

func contentsOf(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// Eight processes commit continuously, on one branch and on eight
// branches: all 640 commits are reachable and fsck is clean.
func TestShared_EightProcessesCommit(t *testing.T) {
	t.Parallel()
	const procs, each = 8, 40
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("system", "root")
	var branches []string
	for i := range procs {
		name := fmt.Sprintf("agent-%d", i)
		s.ok("branch", name)
		branches = append(branches, name)
	}
	onMain := workers(t, db, make([]string, procs), each) // "" acts on HEAD's branch
	onOwn := workers(t, db, branches, each)
	require.Len(t, onMain, procs*each)
	require.Len(t, onOwn, procs*each)

	all := s.logAll()
	assert.Empty(t, all.Orphans)
	assert.Len(t, all.Commits, 1+2*procs*each, "every commit is reachable")
	reachable := make(map[string]bool)
	for _, c := range all.Commits {
		reachable[c.Hash] = true
	}
	for _, h := range append(onMain, onOwn...) {
		assert.True(t, reachable[h], "commit %s a worker was told is durable is not reachable", h)
	}
	log := s.log()
	assert.Len(t, log, 1+procs*each, "the main line holds the root and its 320 commits")
	for _, b := range branches {
		assert.Len(t, decodeJSON[history](t, s.ok("log", b, "--json")).Commits, 1+each, "branch %s", b)
	}
	assert.Contains(t, s.ok("status").Stdout, "On branch main")
	s.fsckOK()
}

// The same through the command line: eight shells commit concurrently.
func TestShared_ConcurrentCLICommits(t *testing.T) {
	t.Parallel()
	const procs, each = 8, 5
	s := newSandbox(t).withEnv("TRACT_LOCK_TIMEOUT", "20s")
	s.initRepo()
	var shells []*background
	for i := range procs {
		script := fmt.Sprintf(`for i in 1 2 3 4 5; do "%s" commit -r user -m "shell %d commit $i" || exit 1; done`, tractBin, i)
		shells = append(shells, s.startShell(script))
	}
	for _, sh := range shells {
		r := sh.wait()
		require.Equal(t, 0, r.Code, r.String())
	}
	assert.Len(t, s.log(), procs*each)
	s.fsckOK()
}

// An idle open handle in another process (here, this test process) does
// not keep commands out.
func TestShared_IdleAPIHandleDoesNotBlockCLI(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tr := openAPI(t, s.initRepo())
	_, err := tr.User(context.Background(), "from the Go API")
	require.NoError(t, err)

	quick := s.withEnv("TRACT_LOCK_TIMEOUT", "1s")
	quick.commit("assistant", "from the command line")
	assert.Equal(t, []string{"from the command line", "from the Go API"}, texts(quick.log()))
	_, err = tr.User(context.Background(), "the handle still works")
	require.NoError(t, err)
}

// A command that waits for longer than its lock timeout says which file is
// locked and how to wait longer, with the flag and variable that exist.
func TestShared_LockedErrorNamesFlagAndVariable(t *testing.T) {
	fileOnly(t, "the file lock")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	storetest.HoldWrite(t, openAPI(t, db).Store())

	for _, r := range []result{
		s.tract("log", "--lock-timeout", "200ms"),
		s.withEnv("TRACT_LOCK_TIMEOUT", "200ms").tract("commit", "-r", "user", "-m", "x"),
	} {
		requireExit(t, r, exitError)
		assert.Contains(t, r.Stderr, "tract: repository "+db+" is locked")
		assert.Equal(t, 1, strings.Count(r.Stderr, db), "the path is named once\n%s", r)
		assert.Contains(t, r.Stderr, "(200ms)")
		assert.Contains(t, r.Stderr, "--lock-timeout DURATION or TRACT_LOCK_TIMEOUT")
		assert.Empty(t, r.Stdout)
	}
}

// An invalid lock timeout is a usage error, not silently ignored.
func TestShared_InvalidLockTimeoutIsRejected(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	for _, tt := range []struct {
		s    *sandbox
		args []string
		want string
	}{
		{s.withEnv("TRACT_LOCK_TIMEOUT", "5"), []string{"log"}, `TRACT_LOCK_TIMEOUT="5" is not a lock timeout: give a duration such as 10s`},
		{s.withEnv("TRACT_LOCK_TIMEOUT", "soon"), []string{"status"}, `TRACT_LOCK_TIMEOUT="soon" is not a lock timeout`},
		{s.withEnv("TRACT_LOCK_TIMEOUT", "-1s"), []string{"commit", "-r", "user", "-m", "x"}, `TRACT_LOCK_TIMEOUT="-1s" is not a lock timeout`},
		{s, []string{"log", "--lock-timeout", "soon"}, `--lock-timeout: "soon" is not a duration: give a number with a unit`},
		{s, []string{"log", "--lock-timeout", "-2s"}, "--lock-timeout -2s: the wait cannot be negative"},
	} {
		r := tt.s.tract(tt.args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, tt.want, r.String())
		if strings.HasPrefix(tt.want, "TRACT_") {
			// The variable is wrong, not the command line: no "Run 'tract log --help'".
			assert.Contains(t, r.Stderr, "fix it (export TRACT_LOCK_TIMEOUT=10s) or unset it (unset TRACT_LOCK_TIMEOUT)", r.String())
			assert.NotContains(t, r.Stderr, "--help", r.String())
		}
	}
	// A valid flag wins over the variable.
	s.withEnv("TRACT_LOCK_TIMEOUT", "bogus").ok("log", "--lock-timeout", "1s")
}

// A file the user may only read: the read commands work, a write says the
// repository is read-only, once, and changes nothing.
func TestShared_ReadOnlyFile(t *testing.T) {
	fileOnly(t, "file permissions")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("user", "hello")
	s.commit("assistant", "hi")
	before := s.snapshot()
	reader := readOnlyUser(t, s, db)

	for _, args := range [][]string{{"log"}, {"show"}, {"status"}, {"log", "--all"}, {"compile", "--json"}, {"branch"}, {"fsck"}} {
		r := reader.tract(args...)
		requireExit(t, r, exitOK)
		assert.NotEmpty(t, r.Stdout, r.String())
	}
	assert.Contains(t, reader.ok("log", "--oneline").Stdout, "hello")

	for _, args := range [][]string{{"commit", "-r", "user", "-m", "refused"}, {"reset", "--soft", "HEAD~1"}, {"branch", "new"}} {
		r := reader.tract(args...)
		requireExit(t, r, exitError)
		assert.Contains(t, r.Stderr, "repository "+db+" is read-only for this user", r.String())
		assert.Equal(t, 1, strings.Count(r.Stderr, db), "the path is named once\n%s", r)
		assert.Contains(t, r.Stderr, "Commands that only read")
	}
	s.requireUnchanged(before)
}

// readOnlyUser returns a sandbox whose commands may read db but not write
// it: as an unprivileged user when the tests run as root (root may write
// any file), else after taking the write permission away.
func readOnlyUser(t *testing.T, s *sandbox, db string) *sandbox {
	t.Helper()
	if os.Geteuid() != 0 {
		require.NoError(t, os.Chmod(db, 0o400))
		t.Cleanup(func() { os.Chmod(db, 0o600) })
		return s
	}
	// Let "nobody" reach and read the file, and run the binary.
	for d := filepath.Dir(db); strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	require.NoError(t, os.Chmod(db, 0o644))
	require.NoError(t, os.Chmod(filepath.Dir(tractBin), 0o755))
	return s.asNobody()
}

// openAPI opens db through the Go API in this test process (another process
// to the commands the test runs), closed when the test ends.
func openAPI(t *testing.T, db string) *tract.Tract {
	t.Helper()
	tr, err := tract.Open(db)
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr
}

// exitConflict is the exit code of a conflict (cmd/tract/root.go).
const exitConflict = 5
