package tests

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/store/storetest"
)

// The first Ctrl-C stops the wait for the model; the command then records
// what the interruption left, which here waits for the file's lock that
// another process holds (for up to the minute of --lock-timeout). A second
// Ctrl-C exits at once with 130. Nothing is half-written, by construction:
// each write is one transaction, which a process that exits before its
// commit never made; fsck finds the file whole and the branch at a commit.
func TestInterrupt_SecondCtrlCExitsAtOnce(t *testing.T) {
	fileOnly(t, "the lock held is the file's")
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Reply(llmtest.Reply{Content: "too late", Delay: 10 * time.Second})
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("system", "You are terse.")

	chat := chatEnv(s, srv).start("chat", "--lock-timeout", "1m", "--validate", "json", "slow question")
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
	release := storetest.HoldWrite(t, openAPI(t, db).Store())
	interruptTwice(t, chat, "for the lock")
	release()

	s.fsckOK()
	cs := s.log()
	require.NotEmpty(t, cs)
	assert.NotEqual(t, "too late", cs[0].Text)
	assert.Contains(t, texts(cs), "You are terse.")
}

// Ctrl-C ends a command's wait for the file's lock at once, long before
// its --lock-timeout: exit 130, nothing written.
func TestInterrupt_CtrlCEndsTheLockWait(t *testing.T) {
	fileOnly(t, "the lock held is the file's")
	t.Parallel()
	s := newSandbox(t)
	db := s.initRepo()
	release := storetest.HoldWrite(t, openAPI(t, db).Store())
	b := s.start("commit", "--lock-timeout", "1m", "--role", "user", "-m", "never written")
	done := make(chan result, 1)
	go func() { done <- b.wait() }()
	select {
	case r := <-done:
		t.Fatalf("the command did not wait for the lock:\n%s", r)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, b.cmd.Process.Signal(os.Interrupt))
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
		t.Fatal("Ctrl-C did not end the wait for the lock")
	}
	requireExit(t, r, 130)
	assert.Contains(t, r.Stderr, "tract: interrupted")
	release()
	assert.Empty(t, s.log())
}

// The issue this answers: Ctrl-C during a chat on a database server that
// then hangs (no reply_timeout here, so nothing else bounds the wait).
// The first Ctrl-C stops the wait for the model; recording the interrupted
// turn then waits on the hung server; a second Ctrl-C exits at once with
// 130. The server rolls back what the closed connection left: once it
// answers again, the repository is whole.
func TestInterrupt_SecondCtrlCOnAHungDatabase(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Reply(llmtest.Reply{Content: "too late", Delay: 10 * time.Second})
	s, db, p := proxied(t, "0")
	s = chatEnv(s, srv)

	chat := s.start("chat", "--validate", "json", "slow question")
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
	p.Freeze()
	interruptTwice(t, chat, "on the hung server")
	p.Thaw()

	direct := newSandbox(t).withEnv("TRACT_DB", db)
	direct.ok("fsck")
	assert.NotContains(t, direct.ok("log", "--oneline").Stdout, "too late")
}

// interruptTwice sends c a Ctrl-C, checks that it goes on waiting (what
// for, waiting says), then a second one, which must end it at once with
// exit 130.
func interruptTwice(t *testing.T, c *background, waiting string) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(os.Interrupt))
	done := make(chan result, 1)
	go func() { done <- c.wait() }()
	select {
	case r := <-done:
		t.Fatalf("the command did not wait %s after the first Ctrl-C:\n%s", waiting, r)
	case <-time.After(500 * time.Millisecond):
	}
	require.NoError(t, c.cmd.Process.Signal(os.Interrupt))
	start := time.Now()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done // one Wait only: the sandbox's cleanup waits too
		t.Fatal("a second Ctrl-C did not end the command")
	}
	assert.Less(t, time.Since(start), 2*time.Second, "the second Ctrl-C exits at once")
	requireExit(t, r, 130)
	assert.Contains(t, r.Stderr, "tract: interrupted again: exiting at once")
}
