package main

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Text that tract did not write itself (a model's answer, streamed or
// not; a stored message; a validator's diagnosis; a tool's output; a
// server's error message) reaches a terminal only through the screen
// sanitiser below, so that it cannot move the cursor, erase the screen,
// set the window's title, or write over what is shown: screenText for a
// whole text, screenWriter for a stream. Standard output that is not a
// terminal gets the bytes as they are.
//
// Line breaks and tabs pass. Every other control character is shown in
// caret notation, as 'cat -v' and less show them: ESC as "^[", BEL as
// "^G", backspace as "^H", DEL as "^?", so "\x1b]0;title\a" reads
// "^[]0;title^G" and "\x1b[2J" reads "^[[2J". A carriage return before a
// line break is dropped ("\r\n" ends a line as "\n" does); any other one
// would return to the start of the line and let what follows overwrite
// it, and is shown as "^M". A C1 control (U+0080–U+009F), which some
// terminals obey as ESC and a letter, is shown as that pair: U+009B
// (CSI) as "^[[". Bytes that are not UTF-8 become U+FFFD. A sequence
// split across the pieces of a stream is shown the same as whole: each
// control character is shown on its own, and a "\r" or an unfinished
// UTF-8 character at the end of a piece waits for the next.

// screenState is the sanitiser's memory between the pieces of a stream.
type screenState struct {
	// cr says the last piece ended in a carriage return, not shown yet:
	// a line break next drops it.
	cr bool
	// partial is the start of a UTF-8 character the last piece ended in.
	partial []byte
}

// screenText returns s as the screen sanitiser shows it.
func screenText(s string) string {
	if !hasControl(s) && utf8.ValidString(s) {
		return s // most texts: nothing to change
	}
	var st screenState
	return string(st.finish(st.append(make([]byte, 0, len(s)+16), []byte(s))))
}

// append appends to dst the sanitised form of p, the next piece of a
// stream.
func (st *screenState) append(dst, p []byte) []byte {
	if len(st.partial) > 0 {
		p = append(st.partial, p...)
		st.partial = nil
	}
	for i := 0; i < len(p); {
		c := p[i]
		if st.cr {
			st.cr = false
			if c != '\n' {
				dst = append(dst, "^M"...)
			}
		}
		if c < utf8.RuneSelf {
			switch {
			case c == '\r':
				st.cr = true
			case c == '\n' || c == '\t':
				dst = append(dst, c)
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '^', c^0x40)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			st.partial = append([]byte(nil), p[i:]...)
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\uFFFD"...)
		case r >= 0x80 && r <= 0x9f:
			dst = append(dst, '^', '[', byte(r-0x40))
		default:
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst
}

// finish appends what the stream's last piece left waiting: a carriage
// return, an unfinished UTF-8 character.
func (st *screenState) finish(dst []byte) []byte {
	if st.cr {
		dst = append(dst, "^M"...)
	}
	for range st.partial { // as when something follows: one per byte
		dst = append(dst, "\uFFFD"...)
	}
	st.cr, st.partial = false, nil
	return dst
}

// screenWriter passes what is written to it through the screen
// sanitiser, as one stream: for everything a command writes to a
// terminal that holds text tract did not write (an answer as it streams
// and the line break after it; the REPL's replies).
type screenWriter struct {
	w io.Writer
	// mu guards st and buf: pieces of an answer arrive on the model
	// call's goroutine, the rest on the command's.
	mu  sync.Mutex
	st  screenState
	buf []byte
}

// newScreenWriter returns w behind the screen sanitiser when terminal
// is true, and w itself otherwise: output that is not a terminal keeps
// its bytes as they are.
func newScreenWriter(w io.Writer, terminal bool) io.Writer {
	if !terminal {
		return w
	}
	return &screenWriter{w: w}
}

// Write sanitises p and writes it; it reports all of p written when the
// sanitised bytes were.
func (s *screenWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = s.st.append(s.buf[:0], p)
	if len(s.buf) > 0 {
		if _, err := s.w.Write(s.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush flushes the writer underneath. What waits for the next piece
// (a carriage return, part of a character) stays waiting: the next
// write, a line break after an answer, says what it was.
func (s *screenWriter) Flush() error {
	flush(s.w)
	return nil
}
