//go:build linux

package tests

import (
	"os"
	"path/filepath"
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
