//go:build linux

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// printed waits until the process, which may have ended, has printed
// want: what a short-lived command printed can still be on its way out
// of the terminal when it exits.
func (p *ptySession) printed(want string) {
	p.t.Helper()
	deadline := time.Now().Add(ptyWait)
	for !strings.Contains(p.output(), want) {
		if time.Now().After(deadline) {
			require.Failf(p.t, "not printed", "waiting for %q; output:\n%q", want, p.output())
		}
		time.Sleep(5 * time.Millisecond) // a poll, bounded by the deadline
	}
}

// On a terminal, log, reflog and show write through the pager
// (TRACT_PAGER, else PAGER); never with --no-pager or when standard
// output is not a terminal; a pager that cannot start leaves the output
// written directly.
func TestPager_OnlyOnATerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "be brief")
	s.commit("user", "a question worth paging")
	dir := t.TempDir()
	paged := func(name string) string { return filepath.Join(dir, name) }
	read := func(name string) string {
		b, err := os.ReadFile(paged(name))
		require.NoError(t, err, "the pager ran")
		return string(b)
	}

	for _, cmd := range [][]string{{"log"}, {"log", "--all"}, {"reflog"}, {"show"}, {"log", "--json"}} {
		name := filepath.Base(cmd[0]) + "-" + cmd[len(cmd)-1]
		want := s.ok(cmd...).Stdout
		p := s.withEnv("TRACT_PAGER", "cat > "+paged(name)).startPTY(cmd...)
		require.Equal(t, 0, p.exit(), p.output())
		assert.Equal(t, want, read(name), "%v went through TRACT_PAGER", cmd)
	}

	// PAGER when TRACT_PAGER is not set; TRACT_PAGER first.
	p := s.withEnv("PAGER", "cat > "+paged("pager")).startPTY("log")
	require.Equal(t, 0, p.exit())
	assert.Equal(t, s.ok("log").Stdout, read("pager"))
	p = s.withEnv("PAGER", "cat > "+paged("not-this"), "TRACT_PAGER", "cat > "+paged("this")).startPTY("log")
	require.Equal(t, 0, p.exit())
	assert.Equal(t, s.ok("log").Stdout, read("this"))
	assert.NoFileExists(t, paged("not-this"))

	// --no-pager, before or after the command, and TRACT_PAGER=cat.
	for _, args := range [][]string{{"log", "--no-pager"}, {"--no-pager", "log"}} {
		p := s.withEnv("TRACT_PAGER", "cat > "+paged("no-pager")).startPTY(args...)
		require.Equal(t, 0, p.exit())
		p.printed("a question worth paging")
		assert.NoFileExists(t, paged("no-pager"), args)
	}

	// Not a terminal: never.
	r := s.withEnv("TRACT_PAGER", "cat > "+paged("piped")).ok("log")
	assert.Contains(t, r.Stdout, "a question worth paging")
	assert.NoFileExists(t, paged("piped"))

	// A pager that cannot start: the output is written directly, and a
	// pager the user named is reported.
	for _, pager := range []string{"/nonexistent/pager", "no-such-pager -R"} {
		p = s.withEnv("TRACT_PAGER", pager).startPTY("log", "--oneline")
		assert.Equal(t, 0, p.exit(), pager)
		p.printed("could not start")
		p.printed("a question worth paging")
	}
	// The default, less, missing: no pager, and nothing to report.
	p = s.withEnv("PATH", t.TempDir()).startPTY("log", "--oneline")
	require.Equal(t, 0, p.exit())
	p.printed("a question worth paging")
	assert.NotContains(t, p.output(), "could not start")
}

// Ctrl-C while the pager shows a long log stops tract as git stops: no
// message written over the pager's screen or after it, once the user
// quits the pager.
func TestPager_InterruptWhilePaging(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.importMessages(3000, func(i int) string { return strings.Repeat("a line long enough to fill pages ", 3) })
	// A pager that ignores Ctrl-C as less does, reads one byte of the
	// log (so tract is left writing the rest), and quits on a line typed
	// at the terminal.
	pager := `sh -c 'trap "" INT; head -c 1 >/dev/null; echo paging; read x </dev/tty; echo quit'`
	p := s.withEnv("TRACT_PAGER", pager).startPTY("log")
	p.waitFor("paging")
	p.send("\x03")
	p.send("q\n")
	p.waitFor("quit")
	code := p.exit()
	out := p.finalOutput()
	assert.NotContains(t, out, "interrupted")
	assert.NotContains(t, out, "tract:")
	assert.Equal(t, 130, code, out)
}

// A pager that ignores Ctrl-C (as less does) and is never quit: the first
// Ctrl-C leaves tract waiting for the user to quit it; a second exits at
// once with 130, and asks the pager to quit first, so that no pager is
// left holding the terminal: a pager run directly, and one run through a
// shell (whose shell does not become it).
func TestPager_SecondCtrlCStopsThePager(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.importMessages(3000, func(i int) string { return strings.Repeat("a line long enough to fill pages ", 3) })
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pager.pid")
	// It ignores the hangup too: tract, the session leader of this test's
	// terminal, leaves one behind when it exits, which a shell's pager
	// would not get.
	script := `trap "" INT HUP; echo $$ >` + pidFile + `; head -c 1 >/dev/null; echo paging; read x </dev/tty; echo quit`
	direct := filepath.Join(dir, "pager")
	require.NoError(t, os.WriteFile(direct, []byte("#!/bin/sh\n"+script+"\n"), 0o700))

	for name, pager := range map[string]string{"direct": direct + " -x", "through a shell": `sh -c '` + script + `'`} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(pidFile))
			p := s.withEnv("TRACT_PAGER", pager).startPTY("log")
			p.waitFor("paging")
			b, err := os.ReadFile(pidFile)
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)

			p.send("\x03")
			select {
			case <-p.exited:
				t.Fatalf("tract ended at the first Ctrl-C, while the pager ran:\n%q", p.output())
			case <-time.After(500 * time.Millisecond):
			}
			require.True(t, running(pid), "the pager ignores Ctrl-C")
			p.send("\x03")
			start := time.Now()
			assert.Equal(t, 130, p.exit(), "output:\n%q", p.output())
			assert.Less(t, time.Since(start), 2*time.Second, "the second Ctrl-C exits at once")
			assert.Eventually(t, func() bool { return !running(pid) }, 5*time.Second, 10*time.Millisecond, "the pager was stopped")
			assert.Contains(t, p.finalOutput(), "tract: interrupted again: exiting at once")
			assert.NotContains(t, p.output(), "quit", "the pager was not quit by a key")
		})
	}
}

// running says whether process pid runs (a zombie, ended but not yet
// reaped, does not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
