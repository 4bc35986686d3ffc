package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/llm"
)

// Delays of the waiting line: it shows once a call has waited waitDelay
// (a quick answer shows none), and is redrawn every waitEvery.
const (
	waitDelay = 200 * time.Millisecond
	waitEvery = 100 * time.Millisecond
)

// waitLine shows on a terminal's standard error that a model call is
// under way: "waiting for MODEL… 3.2s", redrawn as the time passes, and
// erased when the first piece of the answer arrives or the call ends, so
// that what follows (the streamed answer, a verdict, an error) starts on
// a clean line. 'tract chat' and the REPL show it when standard error is
// a terminal and -q is not given.
type waitLine struct {
	w io.Writer
	// dim paints the line dim; erase says the terminal takes "\x1b[K"
	// (not TERM=dumb, where spaces cover the line instead).
	dim, erase  bool
	delay, each time.Duration

	// mu guards what follows and the writes to w: the redraws come from
	// the line's own goroutine, the rest from the model call's.
	mu sync.Mutex
	// shown is the length, in characters, of the line on the screen (0:
	// none).
	shown int
}

// newWaitLine returns the waiting line of f's standard error, or nil when
// it shows none: standard error is no terminal, or -q.
func newWaitLine(f *Factory) *waitLine {
	if !f.IO.ErrTTY || f.Quiet {
		return nil
	}
	return &waitLine{w: f.IO.ErrOut, dim: errColor(f), erase: f.Getenv("TERM") != "dumb", delay: waitDelay, each: waitEvery}
}

// start shows the line for a call to model until the returned function
// is called (any number of times, from any goroutine).
func (l *waitLine) start(model string) (stop func()) {
	if model == "" {
		model = "the model"
	}
	if utf8.RuneCountInString(model) > 40 {
		model = string([]rune(model)[:39]) + "…"
	}
	began := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(l.delay)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			l.mu.Lock()
			select {
			case <-done: // stopped while waiting for mu: draw nothing more
			default:
				l.draw(fmt.Sprintf("waiting for %s… %.1fs", model, time.Since(began).Seconds()))
			}
			l.mu.Unlock()
			t.Reset(l.each)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			close(done)
			l.clear()
		})
	}
}

// printf writes a line of its own (a transport retry's) above the waiting
// line, which the next redraw brings back.
func (l *waitLine) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	fmt.Fprintf(l.w, format, args...)
	flush(l.w)
}

// draw replaces the line on the screen by text. The caller holds mu.
func (l *waitLine) draw(text string) {
	l.clear()
	if l.dim {
		fmt.Fprint(l.w, sgrDim+text+sgrReset)
	} else {
		io.WriteString(l.w, text)
	}
	l.shown = utf8.RuneCountInString(text)
	flush(l.w)
}

// clear erases the line on the screen, if one is. The caller holds mu.
func (l *waitLine) clear() {
	if l.shown == 0 {
		return
	}
	if l.erase {
		io.WriteString(l.w, "\r\x1b[K")
	} else {
		io.WriteString(l.w, "\r"+strings.Repeat(" ", l.shown)+"\r")
	}
	l.shown = 0
	flush(l.w)
}

// waitingClient is a model client whose calls show a waiting line.
type waitingClient struct {
	llm.Remote
	line *waitLine
}

// Complete shows the waiting line until the answer starts or the call
// ends.
func (c waitingClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	stop := c.line.start(cmp.Or(req.Model, c.DefaultModel()))
	defer stop()
	if onDelta := req.OnDelta; onDelta != nil {
		req.OnDelta = func(d string) {
			stop()
			onDelta(d)
		}
	}
	return c.Remote.Complete(ctx, req)
}

// withoutWaitLine returns c without its waiting line, for the calls a turn makes
// while an attempt's answer is on the screen (an llm: judge's, an
// analysis): the line would be drawn over the answer's last line.
func withoutWaitLine(c llm.Remote) llm.Remote {
	if w, ok := c.(waitingClient); ok {
		return w.Remote
	}
	return c
}
