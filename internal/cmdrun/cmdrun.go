// Package cmdrun runs the commands tract starts for its users (a "cmd:"
// validator, a command tool): each in a process group of its own that a
// timeout or a cancelled context kills whole, with its output kept within
// bounds. It also splits a command line into argv the way a shell would,
// without expanding anything (Split).
package cmdrun

import (
	"context"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

// WaitDelay bounds how long a run waits for a command's output pipes to
// close after the command has been killed (a child that kept them open).
const WaitDelay = 2 * time.Second

// Command returns the exec.Cmd that runs name with args under ctx: in a
// process group of its own on Unix, so that ctx ending kills the command
// with every process it started, and with WaitDelay set.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = WaitDelay
	killProcessGroup(cmd)
	return cmd
}

// Head keeps the first Limit bytes written to it, cut back to a whole
// UTF-8 character, and counts the rest. It needs no lock when exec.Cmd
// writes to it from one goroutine (one writer given as both Stdout and
// Stderr, or a writer given to only one of them).
type Head struct {
	// Limit is the most bytes kept.
	Limit   int
	buf     []byte
	dropped int
	full    bool
}

// Write keeps what fits and counts the rest; it never fails.
func (b *Head) Write(p []byte) (int, error) {
	if b.full {
		b.dropped += len(p)
		return len(p), nil
	}
	room := b.Limit - len(b.buf)
	if len(p) <= room {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	keep := p[:room]
	// Do not split a character: back up to the start of the last one if
	// it is incomplete.
	for i := len(keep) - 1; i >= 0 && i >= len(keep)-utf8.UTFMax; i-- {
		if utf8.RuneStart(keep[i]) {
			if !utf8.FullRune(keep[i:]) {
				keep = keep[:i]
			}
			break
		}
	}
	b.buf = append(b.buf, keep...)
	b.dropped += len(p) - len(keep)
	b.full = true
	return len(p), nil
}

// Bytes returns the bytes kept.
func (b *Head) Bytes() []byte { return b.buf }

// Dropped returns how many bytes were written past the limit.
func (b *Head) Dropped() int { return b.dropped }

// Tail keeps the last Limit bytes written to it.
type Tail struct {
	// Limit is the most bytes kept.
	Limit int
	buf   []byte
}

// Write keeps the end of what was written; it never fails.
func (b *Tail) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns the bytes kept, from the first whole UTF-8 character.
func (b *Tail) String() string {
	s := b.buf
	for n := 0; n < utf8.UTFMax && len(s) > 0 && !utf8.RuneStart(s[0]); n++ {
		s = s[1:]
	}
	return string(s)
}

// LastLines returns the last n lines of the output kept, trimmed of
// trailing white space ("" when there is none).
func (b *Tail) LastLines(n int) string {
	text := strings.TrimRight(b.String(), " \t\r\n")
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Join(lines, "\n")
}
