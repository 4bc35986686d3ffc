//go:build linux

package tests

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// progressEscape is how a progress line starts and how it is erased.
const progressEscape = "\r\x1b[K"

// A long command draws no progress line on a pipe.
func TestProgress_NothingWhenPiped(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(`{"role":"user","content":"message ` + string(rune('a'+i%26)) + `"}` + "\n")
	}
	r := s.okStdin(b.String(), "import")
	assert.NotContains(t, r.Stderr, "\r")
	s.ok("reset", "--soft", "HEAD~500")
	for _, args := range [][]string{{"fsck"}, {"stats"}, {"gc", "--expire", "0s"}, {"--quiet", "fsck"}, {"export"}} {
		r := s.ok(args...)
		assert.NotContains(t, r.Stderr, "\r", "tract %v", args)
		assert.NotContains(t, r.Stdout, "\r", "tract %v", args)
	}
}

// ptyOutput waits for p to end and returns everything it printed.
func ptyOutput(t *testing.T, p *ptySession, want *regexp.Regexp) string {
	t.Helper()
	require.Equal(t, exitOK, p.exit(), p.output())
	deadline := time.Now().Add(ptyWait)
	for !want.MatchString(p.output()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the reader drains the terminal
	}
	return p.output()
}

// On a terminal, fsck shows the objects it checked on a line it erases
// before its report; --quiet (-q) hides it.
func TestProgress_LineOnATerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.importMessages(300, func(i int) string { return "m" })
	out := ptyOutput(t, s.startPTY("fsck"), regexp.MustCompile(`(?s)objects.*checked`))
	assert.Regexp(t, regexp.MustCompile(`\r\x1b\[Kfsck: [\d,]+ (of [\d,]+ )?objects( \(\d+%\))?\r\x1b\[Kchecked`), out)

	quiet := ptyOutput(t, s.startPTY("-q", "fsck"), regexp.MustCompile(`checked`))
	assert.NotContains(t, quiet, progressEscape)
}

// On a terminal, an export to a file shows the conversations written; one
// to the terminal itself draws no line among the lines it writes.
func TestProgress_ExportToAFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.importMessages(300, func(i int) string { return "m" })
	out := ptyOutput(t, s.startPTY("export", "-o", filepath.Join(s.dir, "out.jsonl")), regexp.MustCompile(`Exported`))
	assert.Regexp(t, regexp.MustCompile(`\r\x1b\[Kexport: 1 conversation, 1 line\r\x1b\[KExported 1 conversation`), out)

	onScreen := ptyOutput(t, s.startPTY("export"), regexp.MustCompile(`Exported`))
	assert.NotContains(t, onScreen, progressEscape)
}

// On a terminal, copy shows the objects it copied on a line it erases
// before its report.
func TestCopy_ProgressOnATerminal(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	src := s.initRepo()
	s.importMessages(300, func(i int) string { return "m" })
	out := ptyOutput(t, s.startPTY("copy", src, filepath.Join(s.dir, "copy.db")), regexp.MustCompile(`Copied`))
	assert.Regexp(t, regexp.MustCompile(`\r\x1b\[Kcopy: [\d,]+ (of [\d,]+ )?objects( \(\d+%\))?\r\x1b\[KCopied`), out)
}

// On a terminal, the first write to a file of an older tract shows the
// build of its word index on a line it redraws and ends with "done",
// before the command's own output.
func TestProgress_IndexBuildOnATerminal(t *testing.T) {
	t.Parallel()
	fileOnly(t, "the word index of a repository file")
	s := newSandbox(t)
	olderFile(t, s, true)
	out := ptyOutput(t, s.startPTY("commit", "--role", "user", "-m", "hello"), regexp.MustCompile(`user: hello`))
	assert.Regexp(t, regexp.MustCompile(`^(\r\x1b\[Kbuilding the search index of 303 commits… \d+%)*\r\x1b\[Kbuilding the search index of 303 commits… done\r?\n\[main [0-9a-f]+\] user: hello`), out)
}
