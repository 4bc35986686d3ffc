package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/tractdag/tract/repl"
)

// The REPL on a terminal. golang.org/x/term gives the line editing
// (arrows, Home/End, Ctrl-A/E/K/U/W, history on Up/Down) and bracketed
// paste; the standard library has neither, and x/term was already a
// dependency. The terminal is in raw mode for the whole session, so
// Ctrl-C is a key, not a signal: at the prompt it clears the line, while
// a line runs it cancels it (see keyboard). In raw mode the terminal does
// not turn "\n" into "\r\n": the line editor's Write does it for standard
// output, crlfWriter for standard error.

// Keys the REPL reads itself.
const (
	keyCtrlC = 0x03
	// keyKillLine is Ctrl-K then Ctrl-U: the line editor's "delete to the
	// end" and "delete to the start", which together clear the line.
	keyKillLine = "\x0b\x15"
)

// historySize is how many typed lines the in-memory history keeps.
const historySize = 100

// terminalREPL runs a session on a terminal: prompts with coloured
// banners, line editing and history, multi-line input and Ctrl-C.
type terminalREPL struct {
	term *term.Terminal
	// out is the terminal under the line editor.
	out     io.Writer
	keys    *keyboard
	history *lineHistory
	errOut  io.Writer
	// errTerminal says errOut is a terminal: the errors printed there
	// go through the screen sanitiser.
	errTerminal bool
	color       bool
	// attempts shows a validated turn's attempts as they stream; nil
	// when they do not (no validators, --no-stream).
	attempts *attemptStream
	// hardExit is what a second Ctrl-C while a line runs does: exit at
	// once (see interrupts); nil: nothing more than the first.
	hardExit func()
}

// bracketedPasteOff turns the terminal's bracketed paste mode off, as the
// line editor does when the REPL ends.
const bracketedPasteOff = "\x1b[?2004l"

// newTerminalREPL reads keys from in and writes to out, which must be the
// terminal (in raw mode: see openTerminal); errors go to errOut.
func newTerminalREPL(ctx context.Context, in io.Reader, out, errOut io.Writer, width, height int, color bool) *terminalREPL {
	keys := newKeyboard(ctx, in)
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, out}, "> ")
	if width > 0 {
		_ = t.SetSize(width, height) // nothing is on the line yet: nothing to write
	}
	h := &lineHistory{}
	t.History = h
	return &terminalREPL{term: t, out: out, keys: keys, history: h, errOut: errOut, color: color}
}

// openTerminal puts the terminal fd in raw mode; restore puts it back.
func openTerminal(fd int) (restore func() error, width, height int, err error) {
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("terminal: %w", err)
	}
	width, height, err = term.GetSize(fd)
	if err != nil {
		width, height = 0, 0 // the line editor's default, 80 columns
	}
	return func() error { return term.Restore(fd, state) }, width, height, nil
}

// run reads lines until Ctrl-D, /exit or the end of ctx. A line ending in
// "\" continues on the next; so does each line of a paste, which is sent
// by the Enter typed after it. Each line's failure is printed and the REPL
// goes on.
func (r *terminalREPL) run(ctx context.Context, s *repl.Session) error {
	r.term.SetBracketedPasteMode(true)
	defer r.term.SetBracketedPasteMode(false)
	var msg strings.Builder
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if msg.Len() == 0 {
			r.term.SetPrompt(repl.PromptOf(s.Banners(ctx), r.paint))
			r.history.startMessage()
		} else {
			r.term.SetPrompt(". ")
		}
		// A line typed in secret mode is kept out of the history, so that
		// nothing of a secret conversation can be recalled after it.
		r.history.secret = s.Mode() == "secret"
		r.history.startLine()
		line, err := r.term.ReadLine()
		pasted := errors.Is(err, term.ErrPasteIndicator)
		if err == nil || pasted {
			// A paste into a half-typed line: the editor does not say so.
			pasted = r.keys.paste.endedInPaste() || pasted
		}
		switch {
		case err == io.EOF:
			// Past the line editor, which would repaint the prompt.
			_, err := io.WriteString(r.out, "\r\n")
			return err
		case err != nil && !pasted && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !pasted:
			return fmt.Errorf("read the terminal: %w", err)
		}
		line = r.history.expand(line)
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			msg.WriteString(cont + "\n")
			continue
		}
		if pasted {
			msg.WriteString(line + "\n")
			continue
		}
		text := msg.String() + line
		if line == "" {
			text = strings.TrimSuffix(text, "\n")
		}
		msg.Reset()
		r.history.endMessage(text)
		err = r.handle(ctx, s, text)
		if errors.Is(err, repl.ErrExit) {
			return nil
		}
		if err != nil {
			msg, h := err.Error(), replHint(err)
			if r.errTerminal {
				msg, h = screenText(msg), screenText(h)
			}
			fmt.Fprintf(r.errOut, "%s %s\n", r.paintText(r.term.Escape.Red, "error:"), msg)
			if h != "" {
				fmt.Fprintln(r.errOut, h)
			}
		}
	}
}

// handle runs one line, which Ctrl-C cancels. A second Ctrl-C, while the
// cancelled line still waits (on a server or a lock, recording what the
// interruption left), exits at once.
func (r *terminalREPL) handle(ctx context.Context, s *repl.Session, text string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := false // only the watch's goroutine reads and sets it
	stop := r.keys.watch(func() {
		if interrupted && r.hardExit != nil {
			r.hardExit()
			return
		}
		interrupted = true
		r.attempts.end() // before the session says the message was cancelled
		cancel()
	})
	defer stop()
	err := s.Handle(ctx, text)
	r.attempts.end()
	return err
}

// paint colours a prompt banner by its kind.
func (r *terminalREPL) paint(kind repl.BannerKind, text string) string {
	e := r.term.Escape
	switch kind {
	case repl.BannerError:
		return r.paintText(e.Red, text)
	case repl.BannerRetry:
		return r.paintText(e.Yellow, text)
	case repl.BannerSecret:
		return r.paintText(e.Magenta, text)
	case repl.BannerConfirm:
		return r.paintText(e.Cyan, text)
	}
	return text
}

func (r *terminalREPL) paintText(code []byte, text string) string {
	if !r.color {
		return text
	}
	return string(code) + text + string(r.term.Escape.Reset)
}

// keyboard is the terminal's input. One goroutine reads it, so that a
// Ctrl-C is seen while a line runs as well as at the prompt: Read gives
// the bytes to the line editor, watch looks at them while a line runs.
// Read and watch never run at once (handle stops the watch before the
// next ReadLine), so pending needs no lock. The reading goroutine ends
// with the input; at the end of the REPL it may still wait on a read,
// and the process exits from under it.
type keyboard struct {
	// chunks carries what the goroutine read; it is closed after err is
	// set.
	chunks chan []byte
	err    error
	// ctx ends a Read waiting for a key: the REPL is over.
	ctx context.Context
	// pending is read but not yet given to the line editor: the rest of
	// a chunk, or what was typed while a line ran.
	pending []byte
	// paste follows the bracketed pastes in what the line editor was
	// given, to tell which lines ended inside one (see endedInPaste).
	paste pasteTracker
	// mu guards question.
	mu sync.Mutex
	// question, while a question waits for its answer (see answer),
	// takes the keys typed while a line runs instead of pending.
	question chan []byte
}

// Bracketed paste: the terminal wraps pasted text in these.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// pasteTracker reads the keys given to the line editor as it does and
// notes, for each Enter (each ends a line), whether a bracketed paste was
// open at it. The line editor says a line was pasted only when the paste
// began on an empty line, so a paste into a half-typed line would send
// its first line on its own; the REPL asks the tracker instead.
type pasteTracker struct {
	open bool
	// match is how much of the next marker (pasteEnd when open, else
	// pasteStart) the last keys began.
	match int
	// cr is set when the last key was "\r": a "\n" after it is part of
	// the same Enter.
	cr bool
	// enters holds, for each Enter not yet read back, whether it was in
	// a paste.
	enters []bool
}

// keys notes what b, given to the line editor, holds; it returns b with
// each "\r\n" made one "\r", as the line editor would read it anyway
// when both arrive together.
func (pt *pasteTracker) keys(b []byte) []byte {
	out := b[:0]
	for _, c := range b {
		if pt.cr && c == '\n' {
			pt.cr = false
			continue
		}
		pt.cr = c == '\r'
		out = append(out, c)
		marker := pasteStart
		if pt.open {
			marker = pasteEnd
		}
		switch {
		case c == marker[pt.match]:
			pt.match++
			if pt.match == len(marker) {
				pt.open, pt.match = !pt.open, 0
			}
			continue
		case c == marker[0]:
			pt.match = 1
			continue
		}
		pt.match = 0
		if c == '\r' || c == '\n' {
			pt.enters = append(pt.enters, pt.open)
		}
	}
	return out
}

// endedInPaste reports whether the line the editor returned last ended
// with an Enter inside a bracketed paste. Call it once for each line.
func (pt *pasteTracker) endedInPaste() bool {
	if len(pt.enters) == 0 {
		return false
	}
	in := pt.enters[0]
	pt.enters = pt.enters[1:]
	return in
}

func newKeyboard(ctx context.Context, in io.Reader) *keyboard {
	k := &keyboard{chunks: make(chan []byte), ctx: ctx}
	go func() {
		defer close(k.chunks)
		for {
			buf := make([]byte, 256)
			n, err := in.Read(buf)
			if n > 0 {
				k.chunks <- buf[:n]
			}
			if err != nil {
				k.err = err
				return
			}
		}
	}()
	return k
}

// Read gives the line editor the next keys. A Ctrl-C becomes the keys
// that clear the line: the line editor would end the input on it.
func (k *keyboard) Read(p []byte) (int, error) {
	if len(k.pending) == 0 {
		select {
		case b, ok := <-k.chunks:
			if !ok {
				return 0, k.err
			}
			k.pending = b
		case <-k.ctx.Done():
			return 0, k.ctx.Err()
		}
	}
	k.pending = bytes.ReplaceAll(k.pending, []byte{keyCtrlC}, []byte(keyKillLine))
	n := copy(p, k.pending)
	k.pending = k.pending[n:]
	return len(k.paste.keys(p[:n])), nil
}

// watch calls interrupt when Ctrl-C is typed, until stop is called; other
// keys are kept for the next line (the chunk with the Ctrl-C is dropped).
func (k *keyboard) watch(interrupt func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case b, ok := <-k.chunks:
				if !ok {
					return // the next Read reports the end
				}
				if bytes.IndexByte(b, keyCtrlC) >= 0 {
					interrupt()
					continue
				}
				k.mu.Lock()
				q := k.question
				k.mu.Unlock()
				if q != nil {
					select {
					case q <- b:
					default: // the question is over, or has keys enough
					}
					continue
				}
				k.pending = append(k.pending, b...)
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// lineBreakMark stands for a line break in the line editor's one line:
// Up shows a message of several lines (typed with "\" or pasted) as one
// line, its breaks as this mark, and sends it again as it was.
const lineBreakMark = "⏎"

// lineHistory is the line editor's history (term.History): in memory
// only, the last historySize messages, none typed while secret is set. A
// message of several lines is one entry (the editor adds each line it
// reads; endMessage makes them one), so that Up recalls all of it.
type lineHistory struct {
	entries []historyEntry // oldest first
	secret  bool
	// added is how many entries Add kept since startMessage: the lines of
	// the message being typed.
	added int
	// recalledMessage says that At gave a message of several lines since
	// startLine: the line read holds its marks (see expand).
	recalledMessage bool
}

// historyEntry is a line of the history; message says it is a message of
// several lines, its breaks written as lineBreakMark.
type historyEntry struct {
	line    string
	message bool
}

var _ term.History = (*lineHistory)(nil)

// Add keeps entry unless it is empty, repeats the last line, or was typed
// in secret mode.
func (h *lineHistory) Add(entry string) {
	if h.add(historyEntry{line: entry}) {
		h.added++
	}
}

func (h *lineHistory) add(e historyEntry) bool {
	if h.secret || e.line == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1].line == e.line) {
		return false
	}
	h.entries = append(h.entries, e)
	if len(h.entries) > historySize {
		h.entries = h.entries[len(h.entries)-historySize:]
	}
	return true
}

// Len returns the number of lines kept.
func (h *lineHistory) Len() int { return len(h.entries) }

// At returns the line idx back from the newest (0).
func (h *lineHistory) At(idx int) string {
	e := h.entries[len(h.entries)-1-idx]
	if e.message {
		h.recalledMessage = true
	}
	return e.line
}

// startMessage is called before the first line of a message is read.
func (h *lineHistory) startMessage() { h.added = 0 }

// startLine is called before each line is read.
func (h *lineHistory) startLine() { h.recalledMessage = false }

// expand returns the line read with its marks made line breaks again
// when it came from a message of several lines that Up recalled (and was
// perhaps edited); any other line as it was typed.
func (h *lineHistory) expand(line string) string {
	if !h.recalledMessage {
		return line
	}
	return strings.ReplaceAll(line, lineBreakMark, "\n")
}

// endMessage replaces the lines of the message text, which the editor
// added one by one, with one entry that holds all of them, when it has
// several.
func (h *lineHistory) endMessage(text string) {
	if h.secret || !strings.Contains(text, "\n") {
		return
	}
	h.entries = h.entries[:len(h.entries)-min(h.added, len(h.entries))]
	h.added = 0
	h.add(historyEntry{line: strings.ReplaceAll(text, "\n", lineBreakMark), message: true})
}

// crlfWriter writes "\r\n" for each "\n": standard error on a terminal in
// raw mode.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// answer waits, while a line runs (under watch), for one of the keys in
// keys, or Enter (which answers ""); other keys are ignored. A Ctrl-C
// interrupts the line, whose ctx then ends the wait. asked, when not nil,
// is called once the question takes the keys typed: it shows the
// question, so that a key typed as soon as it shows answers it rather
// than going to the next line.
func (k *keyboard) answer(ctx context.Context, keys string, asked func()) (string, error) {
	q := make(chan []byte, 16)
	k.mu.Lock()
	k.question = q
	k.mu.Unlock()
	if asked != nil {
		asked()
	}
	defer func() {
		k.mu.Lock()
		k.question = nil
		k.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case b := <-q:
			for _, c := range b {
				switch {
				case c == '\r' || c == '\n':
					return "", nil
				case strings.IndexByte(keys, c|0x20) >= 0:
					return string(c | 0x20), nil
				}
			}
		}
	}
}

// askTool asks at the terminal, on w, whether to run each tool call
// (--approve-tools): a key answers, y, n (or Enter) or a for always.
func (r *terminalREPL) askTool(w io.Writer) func(ctx context.Context, name, args string) (string, error) {
	return func(ctx context.Context, name, args string) (string, error) {
		key, err := r.keys.answer(ctx, "yna", func() {
			fmt.Fprintf(w, "run tool %s(%s)? [y]es, [N]o, [a]lways: ", name, args)
		})
		if err != nil {
			fmt.Fprintln(w)
			return "", err
		}
		key = cmp.Or(key, "n")
		fmt.Fprintln(w, map[string]string{"y": "yes", "n": "no", "a": "always"}[key])
		return key, nil
	}
}
