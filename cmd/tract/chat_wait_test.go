package main

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// lockedBuffer is a strings.Builder the waiting line's goroutine writes
// to while the test reads.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The waiting line is drawn after its delay, redrawn, erased by stop (on
// TERM=dumb with spaces), moved aside by a line printed meanwhile, and
// never drawn again once stopped.
func TestWaitLine(t *testing.T) {
	blank := "\r" + strings.Repeat(" ", utf8.RuneCountInString("waiting for m… 0.0s")) + "\r"
	for _, tc := range []struct {
		name  string
		erase bool
	}{
		{"terminal", true},
		{"TERM=dumb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out lockedBuffer
			l := &waitLine{w: &out, erase: tc.erase, delay: time.Millisecond, each: time.Millisecond}
			stop := l.start("m")
			assert.Eventually(t, func() bool { return strings.Count(out.String(), "waiting for m… ") >= 2 }, 5*time.Second, time.Millisecond)
			l.printf("model: busy; retrying in 1s\n")
			assert.Eventually(t, func() bool {
				s := out.String()
				return strings.Contains(s[strings.Index(s, "retrying in 1s\n"):], "waiting for m… ")
			}, 5*time.Second, time.Millisecond, "redrawn below the printed line")
			stop()
			stop()
			after := out.String()
			assert.True(t, strings.HasSuffix(after, "\r\x1b[K") || strings.HasSuffix(after, "\r"), "erased: %q", after)
			assert.Contains(t, after, "retrying in 1s\n")
			if !tc.erase {
				assert.NotContains(t, after, "\x1b")
				assert.Contains(t, after, blank)
			}
			time.Sleep(10 * time.Millisecond)
			assert.Equal(t, after, out.String(), "nothing drawn after stop")
		})
	}
}

// A quick call shows no line at all.
func TestWaitLine_QuickCallShowsNothing(t *testing.T) {
	var out lockedBuffer
	l := &waitLine{w: &out, erase: true, delay: time.Hour, each: time.Hour}
	l.start("m")()
	assert.Empty(t, out.String())
}
