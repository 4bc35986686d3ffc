package main

import (
	"fmt"
	"io"
	"sync"

	"golang.org/x/term"

	"github.com/tractdag/tract"
)

// ANSI sequences of the attempt stream.
const (
	sgrDim   = "\x1b[2m"
	sgrRed   = "\x1b[31m"
	sgrGreen = "\x1b[32m"
	sgrReset = "\x1b[0m"
	// eraseDown clears from the cursor to the end of the screen.
	eraseDown = "\x1b[J"
)

// attemptStream shows the attempts of a validated turn on a terminal
// (standard error) as they stream: a dim "attempt N/M ▸" header, then the
// answer as it arrives. When the validators have spoken, the attempt's
// lines are erased and replaced by its verdict, "✗ attempt N/M rejected:
// DIAGNOSIS" or "✓ attempt N/M passed", so the screen keeps one line per
// attempt; the accepted answer itself is then printed on standard output
// as without a terminal. Lines are erased by moving the cursor up over
// the rows the attempt took (counted from the terminal's width), which
// only works while they are all on the screen and the terminal moves its
// cursor: an attempt taller than the screen, or any attempt on
// TERM=dumb, stays on the screen and its verdict follows it (struck, not
// replaced). An accepted answer that standard output does not show again
// (it is piped, or --json) stays on the screen too.
type attemptStream struct {
	w io.Writer
	// color paints the header dim and the verdicts red and green.
	color bool
	// erase says the terminal moves its cursor (it is not TERM=dumb).
	erase bool
	// eraseAccepted says the accepted answer is printed again below.
	eraseAccepted bool

	// mu guards what follows: pieces arrive on the model call's goroutine,
	// an interrupt on the keyboard's, a new size on the resize watcher's.
	mu sync.Mutex
	// width and height are the terminal's size; 0 when unknown, and then
	// nothing is erased.
	width, height int
	// current is the attempt on screen (0: none); open says its verdict
	// has not been shown yet.
	current int
	open    bool
	// rows is how many rows the cursor is below the attempt's header; col
	// its column (width when a wrap is pending).
	rows, col int
	// screen sanitises the attempt's answer as it streams.
	screen screenState
}

// newAttemptStream returns the stream of f's standard error, for the
// chat options of a validated turn; eraseAccepted as on attemptStream.
func newAttemptStream(f *Factory, w io.Writer, eraseAccepted bool) *attemptStream {
	s := &attemptStream{w: w, color: errColor(f), erase: f.Getenv("TERM") != "dumb", eraseAccepted: eraseAccepted}
	if fd, ok := f.IO.ErrOut.(interface{ Fd() uintptr }); ok {
		if w, h, err := term.GetSize(int(fd.Fd())); err == nil {
			s.width, s.height = w, h
		}
	}
	return s
}

// errColor says whether standard error takes ANSI colour: a terminal,
// NO_COLOR unset, TERM not dumb and no --no-color.
func errColor(f *Factory) bool {
	return f.IO.ErrTTY && !f.NoColor && f.Getenv("NO_COLOR") == "" && f.Getenv("TERM") != "dumb"
}

// options are the chat options that feed the stream.
func (s *attemptStream) options() []tract.ChatOption {
	return []tract.ChatOption{tract.OnAttemptDelta(s.delta), tract.OnAttempt(s.verdict)}
}

// delta shows a piece of an attempt's answer, after the attempt's header
// when it is the first.
func (s *attemptStream) delta(d tract.AttemptDelta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Attempt != s.current {
		s.endLine()
		s.current, s.open, s.rows, s.col, s.screen = d.Attempt, true, 1, 0, screenState{}
		fmt.Fprintf(s.w, "%s\n", s.paint(sgrDim, fmt.Sprintf("attempt %d/%d ▸", d.Attempt, d.Max)))
	}
	if !s.open {
		return // the attempt was interrupted: what still arrives is dropped
	}
	text := string(s.screen.append(nil, []byte(d.Text)))
	s.advance(text)
	io.WriteString(s.w, text)
	flush(s.w)
}

// verdict replaces (or follows) an attempt's stream with its verdict.
func (s *attemptStream) verdict(a tract.Attempt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Number == s.current && s.open {
		if s.erasable() && (!a.OK || s.eraseAccepted) {
			io.WriteString(s.w, "\r")
			if s.rows > 0 {
				fmt.Fprintf(s.w, "\x1b[%dA", s.rows)
			}
			io.WriteString(s.w, eraseDown)
			s.col = 0
		}
		s.endLine()
	}
	if a.OK && a.FixedBy != "" {
		fmt.Fprintf(s.w, "%s\n", s.paint(sgrGreen, fmt.Sprintf("✓ attempt %d/%d fixed by %s", a.Number, a.Max, screenText(a.FixedBy))))
	} else if a.OK {
		fmt.Fprintf(s.w, "%s\n", s.paint(sgrGreen, fmt.Sprintf("✓ attempt %d/%d passed", a.Number, a.Max)))
	} else {
		fmt.Fprintf(s.w, "%s %s\n", s.paint(sgrRed, fmt.Sprintf("✗ attempt %d/%d rejected:", a.Number, a.Max)), indent(screenText(a.Diagnosis), "  ")[2:])
	}
	flush(s.w)
}

// end closes an attempt left without a verdict (its model call failed,
// or the turn was interrupted), so what is printed next starts a line.
// A nil stream does nothing.
func (s *attemptStream) end() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLine()
	flush(s.w)
}

// resize takes the terminal's new size. An attempt on screen keeps the
// rows counted so far: those wrapped at the old width.
func (s *attemptStream) resize(w, h int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.width, s.height = w, h
}

// endLine ends the open attempt's line; later pieces of it are dropped.
// The caller holds mu.
func (s *attemptStream) endLine() {
	if s.open && s.col > 0 {
		io.WriteString(s.w, "\n")
	}
	s.open, s.col = false, 0
}

// erasable says whether the open attempt's rows can all be erased.
func (s *attemptStream) erasable() bool {
	return s.erase && s.width > 0 && s.height > 0 && s.rows < s.height
}

// advance moves the cursor position over text as the terminal does:
// a line break to the next row, a tab to the next multiple of 8, a wrap
// when a character follows a full row.
func (s *attemptStream) advance(text string) {
	for _, r := range text {
		switch {
		case r == '\n':
			s.rows, s.col = s.rows+1, 0
		case r == '\t':
			s.col = min((s.col/8+1)*8, max(s.width, 1))
		default:
			w := runeWidth(r)
			if w == 0 {
				continue
			}
			if s.width > 0 && s.col+w > s.width {
				s.rows, s.col = s.rows+1, 0
			}
			s.col += w
		}
	}
}

func (s *attemptStream) paint(code, text string) string {
	if !s.color {
		return text
	}
	return code + text + sgrReset
}
