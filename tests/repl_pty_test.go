//go:build linux

package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tractdag/tract/llm/llmtest"
)

// ptyWait bounds each wait for the REPL's output.
const ptyWait = 15 * time.Second

// ptySession is tract running in a pseudo-terminal: keys go in through
// the master side, everything it prints comes out of it.
type ptySession struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	// mu guards out, which the reading goroutine appends to.
	mu  sync.Mutex
	out bytes.Buffer
	// seen is how much of out earlier waits consumed.
	seen int
	// exited is closed when the process has ended; err is its Wait's.
	exited chan struct{}
	err    error
	// read is closed when everything the process printed was read.
	read chan struct{}
}

// startPTY runs tract with args on a new pseudo-terminal of 200 columns
// that is its standard input, output and error and its controlling
// terminal.
func (s *sandbox) startPTY(args ...string) *ptySession {
	s.t.Helper()
	return s.startPTYOut(nil, args...)
}

// startPTYOut is startPTY with standard output sent to stdout instead of
// the terminal, unless stdout is nil.
func (s *sandbox) startPTYOut(stdout io.Writer, args ...string) *ptySession {
	s.t.Helper()
	return s.startPTYSized(200, stdout, args...)
}

// startPTYSized is startPTYOut on a terminal of cols columns.
func (s *sandbox) startPTYSized(cols uint16, stdout io.Writer, args ...string) *ptySession {
	s.t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(s.t, err)
	fd := int(master.Fd())
	require.NoError(s.t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0), "unlock the pty")
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(s.t, err)
	require.NoError(s.t, unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: cols}))
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(s.t, err)

	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	cmd, _, _ := s.command(ctx, nil, args)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(s.t, cmd.Start())
	require.NoError(s.t, slave.Close())
	p := &ptySession{t: s.t, master: master, cmd: cmd, exited: make(chan struct{}), read: make(chan struct{})}
	go func() {
		defer close(p.read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return // EIO once the process and its terminal are gone
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	s.t.Cleanup(func() {
		cancel()
		<-p.exited
		master.Close()
	})
	return p
}

// output is everything the process printed so far.
func (p *ptySession) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until what the process printed since the last wait
// contains want, and consumes it up to there.
func (p *ptySession) waitFor(want string) {
	p.t.Helper()
	deadline := time.Now().Add(ptyWait)
	for {
		out := p.output()
		if i := strings.Index(out[p.seen:], want); i >= 0 {
			p.seen += i + len(want)
			return
		}
		select {
		case <-p.exited:
			require.Failf(p.t, "tract exited", "waiting for %q; output:\n%q", want, out)
		default:
		}
		if time.Now().After(deadline) {
			require.Failf(p.t, "no output", "waiting for %q; output since the last wait:\n%q", want, out[p.seen:])
		}
		time.Sleep(5 * time.Millisecond) // a poll, bounded by the deadline
	}
}

// send types keys.
func (p *ptySession) send(keys string) {
	p.t.Helper()
	_, err := p.master.Write([]byte(keys))
	require.NoError(p.t, err)
}

// exit waits for the process to end and returns its exit code.
func (p *ptySession) exit() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(ptyWait):
		require.Failf(p.t, "tract did not exit", "output:\n%q", p.output())
	}
	var exitErr *exec.ExitError
	if errors.As(p.err, &exitErr) {
		return exitErr.ExitCode()
	}
	require.NoError(p.t, p.err)
	return 0
}

// finalOutput waits for the process to end and returns everything it
// printed, read to the end.
func (p *ptySession) finalOutput() string {
	p.t.Helper()
	p.exit()
	select {
	case <-p.read:
	case <-time.After(ptyWait):
		require.Failf(p.t, "the terminal was not read to its end", "output:\n%q", p.output())
	}
	return p.output()
}

// sgr matches an ANSI colour escape (escapes that move the cursor are
// the line editor's and are not colour).
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// 'tract chat' on a terminal: the REPL with prompts, a turn, Ctrl-C during
// a streamed answer (nothing of the turn stays on the branch), Ctrl-C at
// the prompt (the line is cleared), a multi-line message typed and one
// pasted, a history that skips what was typed in secret mode, and Ctrl-D. NO_COLOR is set: no
// colour.
func TestREPL_Terminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(
		llmtest.Answer("Paris is the capital."),
		llmtest.Reply{Content: "Marseille is second, and this answer never ends", ChunkDelay: time.Hour},
		llmtest.Answer("Lyon, say some."),
		llmtest.Answer("Two lines read."),
		llmtest.Answer("A secret answer."),
		llmtest.Answer("Paste read."),
	)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat")
	p.waitFor("tract chat on main")
	p.waitFor("> ")
	p.send("capital of France?\r")
	p.waitFor("Paris is the capital.")
	p.waitFor("> ")

	p.send("second city?\r")
	p.waitFor("Marseille ")
	p.send("\x03")
	p.waitFor("[message cancelled]")
	p.waitFor("> ")

	p.send("typed, then cleared\x03")
	p.send("second city, again\r")
	p.waitFor("Lyon, say some.")
	p.waitFor("> ")

	p.send("line one\\\r")
	p.waitFor(". ")
	p.send("line two\r")
	p.waitFor("Two lines read.")
	p.waitFor("> ")

	p.send("/secret on\r")
	p.waitFor("secret> ")
	p.send("a secret question\r")
	p.waitFor("A secret answer.")
	p.send("/secret off\r")
	p.waitFor("secret mode off")
	p.waitFor("> ")
	// Up recalls "/secret on": the two lines typed in secret mode are not
	// in the history.
	p.send("\x1b[A\r")
	p.waitFor("secret mode on")
	p.waitFor("secret> ")
	p.send("/secret off\r")
	p.waitFor("> ")

	// A bracketed paste of two lines is one message, sent by the Enter
	// typed after it.
	p.send("\x1b[200~pasted one\rpasted two\x1b[201~")
	p.send("\r")
	p.waitFor("Paste read.")
	p.waitFor("> ")

	p.send("\x04")
	assert.Equal(t, 0, p.exit())
	assert.False(t, sgr.MatchString(p.output()), "colour despite NO_COLOR: %q", p.output())

	var sent []string
	for _, r := range srv.Requests() {
		sent = append(sent, r.LastMessage())
	}
	assert.Equal(t, []string{"capital of France?", "second city?", "second city, again", "line one\nline two", "a secret question", "pasted one\npasted two"}, sent)
	assert.Equal(t, []string{"Paste read.", "pasted one\npasted two", "Two lines read.", "line one\nline two", "Lyon, say some.", "second city, again", "Paris is the capital.", "capital of France?"},
		texts(s.log()), "the cancelled turn is not on the branch")
	var orphans []string
	for _, o := range s.logAll().Orphans {
		for _, c := range o.Commits {
			orphans = append(orphans, c.Text)
		}
	}
	assert.Equal(t, []string{"second city?"}, orphans, "the cancelled message stays inspectable")
	assert.Contains(t, s.ok("reflog").Stdout, "cancel: message ")
	s.fsckOK()
}

// On a terminal without NO_COLOR, the mode banners are coloured.
func TestREPL_TerminalColour(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := chatEnv(newSandbox(t), srv).withEnv("NO_COLOR", "", "TERM", "xterm")
	s.initRepo()

	p := s.startPTY("chat", "--interactive")
	p.waitFor("> ")
	p.send("hello\r")
	p.waitFor("an answer")
	p.send("/retry\r")
	p.waitFor("\x1b[33mretry(0)\x1b[0m> ")
	p.send("/exit\r")
	assert.Equal(t, 0, p.exit())
}

// The line editor follows the window's width: after the terminal shrinks
// to 20 columns, a 30-character line wraps, so Home moves the cursor up a
// row (at the 200 columns the REPL started with, it would not).
func TestREPL_TerminalFollowsResize(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat")
	p.waitFor("tract chat on main")
	p.waitFor("> ")
	require.NoError(t, unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 20}))
	// The resize reaches the REPL as a signal: wait until a wrapped line
	// shows it has the new width, retyping until it does.
	deadline := time.Now().Add(ptyWait)
	for {
		p.send("abcdefghijklmnopqrstuvwxyz0123\x01")
		time.Sleep(20 * time.Millisecond) // a poll, bounded by the deadline
		out := p.output()[p.seen:]
		if strings.Contains(out, "\x1b[A") { // the line editor's "one row up"
			break
		}
		require.True(t, time.Now().Before(deadline), "the line never wrapped at 20 columns: %q", out[max(0, len(out)-300):])
		p.send("\x03") // clear the line and try again
	}
	p.send("\x03\x04")
	assert.Equal(t, 0, p.exit())
	assert.Empty(t, srv.Requests(), "nothing was sent")
}

// A paste into a half-typed line joins it: the typed start, every pasted
// line and the Enter typed after it are one message.
func TestREPL_TerminalPasteIntoHalfTypedLine(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("read"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat")
	p.waitFor("> ")
	p.send("half ")
	p.send("\x1b[200~one\rtwo\x1b[201~")
	p.send(" end\r")
	p.waitFor("read")
	p.waitFor("> ")
	p.send("\x04")
	assert.Equal(t, 0, p.exit())
	require.Len(t, srv.Requests(), 1)
	assert.Equal(t, "half one\ntwo end", srv.Requests()[0].LastMessage())
}

// Up recalls a whole message of several lines, typed with "\" or pasted,
// not its last line: shown on one line with ⏎ for its breaks, and sent
// again as it was.
func TestREPL_TerminalUpRecallsAWholeMessage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("first"), llmtest.Answer("second"), llmtest.Answer("third"), llmtest.Answer("fourth"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	p := s.startPTY("chat")
	p.waitFor("> ")
	p.send("line one\\\r")
	p.waitFor(". ")
	p.send("line two\r")
	p.waitFor("first")
	p.waitFor("> ")
	p.send("\x1b[A")
	p.waitFor("line one⏎line two")
	p.send("\r")
	p.waitFor("second")
	p.waitFor("> ")
	p.send("\x1b[200~pasted one\rpasted two\x1b[201~\r")
	p.waitFor("third")
	p.waitFor("> ")
	p.send("\x1b[A\x1b[A")
	p.waitFor("line one⏎line two")
	p.send("\x1b[B")
	p.waitFor("pasted one⏎pasted two")
	p.send("!\r")
	p.waitFor("fourth")
	p.waitFor("> ")
	p.send("\x04")
	assert.Equal(t, 0, p.exit())

	var sent []string
	for _, r := range srv.Requests() {
		sent = append(sent, r.LastMessage())
	}
	assert.Equal(t, []string{"line one\nline two", "line one\nline two", "pasted one\npasted two", "pasted one\npasted two!"}, sent)
}
