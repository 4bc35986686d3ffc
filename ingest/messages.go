package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/llm"
)

// ReadOption configures ReadMessages.
type ReadOption func(*Limits)

// ReadLimits makes ReadMessages enforce l (its unset fields at their
// defaults) instead of the default limits. ReadLimits(t.Limits()) reads
// what a repository t takes.
func ReadLimits(l Limits) ReadOption {
	return func(c *Limits) { *c = c.Merge(l) }
}

// ReadMessages returns the messages of r, read as a stream: a JSON array of
// OpenAI messages (objects as Compile's JSON prints them, optionally with
// "kind" and "meta"; see Message.UnmarshalJSON for the shapes read)
// or one such object per line. A shape tract does not support is an error
// naming the message and the member ("content[1].type").
//
// Memory stays bounded whatever r holds. Each message's JSON (a line, or
// an element of the array) is read up to the line size limit, and r up to
// the input size limit (see Limits and ReadLimits); the text and metadata
// of each are checked against the message and metadata size limits.
// Reading stops at the first limit broken, with a *TooLargeError.
//
// Text must be valid UTF-8, as Commit requires: a byte that is not, or a
// \uXXXX escape of a lone surrogate half, is an error wrapping
// dag.ErrInvalidText that gives its byte offset in the input (encoding/json
// would have turned either into U+FFFD).
//
// A malformed input ends the sequence with an error naming the message
// by its position (and the line it starts on).
func ReadMessages(r io.Reader, opts ...ReadOption) iter.Seq2[Message, error] {
	var lim Limits
	for _, o := range opts {
		o(&lim)
	}
	lim = lim.WithDefaults()
	return func(yield func(Message, error) bool) {
		size := 64 << 10
		if b, ok := r.(interface{ Len() int }); ok && b.Len() < size {
			// An input in memory (a conversation's messages) needs no
			// more buffer than its length: a line of fine-tuning data is
			// read so, once per conversation.
			size = b.Len() + 1
		}
		mr := &messageReader{
			br:   bufio.NewReaderSize(&cappedReader{r: r, left: lim.InputSize}, size),
			lim:  lim,
			line: 1,
		}
		mr.run(yield)
	}
}

// errInputLimit is cappedReader's error once the input size limit is
// reached.
var errInputLimit = errors.New("input size limit reached")

// cappedReader reads at most left bytes of r, then fails with
// errInputLimit unless r ends right there. Its errors are sticky.
type cappedReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left <= 0 {
		var one [1]byte
		for c.err == nil {
			n, err := c.r.Read(one[:])
			switch {
			case n > 0:
				c.err = errInputLimit
			case err != nil:
				c.err = err
			}
		}
		return 0, c.err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// messageReader splits an import's input into the JSON values of its
// messages, one at a time, without decoding more than one.
type messageReader struct {
	br   *bufio.Reader
	lim  Limits
	off  int64 // input bytes consumed
	line int   // the line at off, from 1

	array bool
	// buf holds the JSON of the message being read (up to lim.LineSize).
	buf []byte
}

func (mr *messageReader) run(yield func(Message, error) bool) {
	c, err := mr.skipSpace()
	if err == io.EOF {
		return
	}
	if err != nil {
		yield(Message{}, mr.inputError(1, err))
		return
	}
	if c == '[' {
		mr.array = true
		mr.skipByte()
		c, err := mr.skipSpace()
		if err != nil {
			yield(Message{}, mr.arrayError(0, err))
			return
		}
		if c == ']' {
			mr.skipByte()
			mr.end(yield, 0)
			return
		}
	}
	for n := 1; ; n++ {
		if !mr.array {
			if _, err := mr.skipSpace(); err != nil {
				if err != io.EOF {
					yield(Message{}, mr.inputError(n, err))
				}
				return
			}
		}
		m, err := mr.message(n)
		if !yield(m, err) || err != nil {
			return
		}
		if !mr.array {
			continue
		}
		// After an element: "," and the next one, or "]" and the end.
		c, err := mr.skipSpace()
		switch {
		case err != nil:
			yield(Message{}, mr.arrayError(n, err))
			return
		case c == ']':
			mr.skipByte()
			mr.end(yield, n)
			return
		case c != ',':
			yield(Message{}, fmt.Errorf("input is not a JSON array of messages: expected , or ] after message %d, found %q at byte offset %d (line %d)", n, c, mr.off, mr.line))
			return
		}
		mr.skipByte()
		if _, err := mr.skipSpace(); err != nil {
			yield(Message{}, mr.arrayError(n, err))
			return
		}
	}
}

// end checks that nothing but white space follows the array of n messages.
func (mr *messageReader) end(yield func(Message, error) bool, n int) {
	c, err := mr.skipSpace()
	switch {
	case err == io.EOF:
	case err != nil:
		yield(Message{}, mr.inputError(n+1, err))
	default:
		yield(Message{}, fmt.Errorf("trailing data after the messages: unexpected %q at byte offset %d (line %d)", c, mr.off, mr.line))
	}
}

// arrayError is an array that breaks off after message n: it ends, or
// reading it fails.
func (mr *messageReader) arrayError(n int, err error) error {
	if err == io.EOF {
		return errors.New("input is not a JSON array of messages: it ends without ]")
	}
	return mr.inputError(n+1, err)
}

// inputError is a read error while reading message n.
func (mr *messageReader) inputError(n int, err error) error {
	if errors.Is(err, errInputLimit) {
		return &MessageError{N: n, Line: mr.line, Err: &TooLargeError{What: "the input",
			Size: mr.lim.InputSize, More: true, Limit: mr.lim.InputSize, Which: LimitInputSize}}
	}
	return fmt.Errorf("read input: %w", err)
}

// message reads and decodes message n, whose JSON starts at the next byte.
func (mr *messageReader) message(n int) (Message, error) {
	start, line := mr.off, mr.line
	fail := func(err error) (Message, error) {
		return Message{}, &MessageError{N: n, Line: line, Err: err}
	}
	raw, err := mr.value()
	if err != nil {
		if err != errLineLimit {
			return Message{}, mr.inputError(n, err)
		}
		what := "the line"
		if mr.array {
			what = "the array element"
		}
		return fail(&TooLargeError{What: what, Size: mr.lim.LineSize, More: true, Limit: mr.lim.LineSize, Which: LimitLineSize})
	}
	defer mr.release()
	if i := dag.InvalidJSONText(raw); i >= 0 {
		at := ""
		if l := line + bytes.Count(raw[:i], []byte{'\n'}); l != line {
			at = fmt.Sprintf(", on line %d", l)
		}
		what := "not valid UTF-8"
		if raw[i] == '\\' {
			what = fmt.Sprintf("the escape %s is half of a UTF-16 surrogate pair, not a character,", raw[i:i+6])
		}
		return fail(fmt.Errorf("%w: %s at byte offset %d of the input%s", dag.ErrInvalidText, what, start+int64(i), at))
	}
	if string(raw) == "null" {
		return fail(errors.New("not a JSON object with role and content: got null"))
	}
	m := new(Message)
	// Called directly, not through json.Unmarshal, which would check the
	// whole message's syntax once more first: UnmarshalJSON checks it.
	if err := m.UnmarshalJSON(raw); err != nil {
		if fe := (*llm.FieldError)(nil); errors.As(err, &fe) {
			return fail(err) // names the member: "content[1].type …"
		}
		return fail(fmt.Errorf("not a JSON object with role and content: %w", jsonerr.Wrap(err)))
	}
	// Checked here too (the commit checks it again) so that the error
	// names the line.
	if err := CheckKindRole(m.CommitKind(), m.Role); err != nil {
		return fail(err)
	}
	if err := mr.lim.CheckMessage(m); err != nil {
		return fail(err)
	}
	if err := mr.lim.CheckMeta(m.Meta); err != nil {
		return fail(err)
	}
	return *m, nil
}

// errLineLimit is value's error for a value longer than the line limit.
var errLineLimit = errors.New("line size limit reached")

// value reads the JSON value that starts at the next byte into mr.buf and
// returns it: an object or array up to its closing bracket, a string up to
// its closing quote, anything else up to white space or a delimiter. It
// checks no more of the syntax than that (the decoder does), and stops
// with errLineLimit once the value is longer than the line size limit.
func (mr *messageReader) value() ([]byte, error) {
	mr.buf = mr.buf[:0]
	depth := 0
	inString, escaped := false, false
	for {
		chunk, err := mr.peek()
		if len(chunk) == 0 {
			if err == io.EOF && len(mr.buf) > 0 {
				return mr.buf, nil // cut short: the decoder says how
			}
			return nil, err
		}
		end := -1 // where the value ends in chunk
		quote := -1
	scan:
		for i := 0; i < len(chunk); i++ {
			if inString {
				// Jump to the next backslash or quote, whichever comes
				// first (the quote's place is kept across escapes).
				if escaped {
					escaped = false
					continue
				}
				if quote < i {
					if quote = bytes.IndexByte(chunk[i:], '"'); quote < 0 {
						quote = len(chunk)
					} else {
						quote += i
					}
				}
				if b := bytes.IndexByte(chunk[i:quote], '\\'); b >= 0 {
					i += b
					escaped = true
					continue
				}
				i = quote
				if i < len(chunk) {
					inString = false
					if depth == 0 {
						end = i + 1
						break scan
					}
				}
				continue
			}
			switch chunk[i] {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					// Closes what encloses the value, unless nothing of
					// the value came before it: then it is the value.
					end = i
					if len(mr.buf)+i == 0 {
						end = 1
					}
					break scan
				}
				depth--
				if depth == 0 {
					end = i + 1
					break scan
				}
			case ' ', '\t', '\r', '\n', ',':
				if depth == 0 {
					end = i
					break scan
				}
			}
		}
		n := len(chunk)
		if end >= 0 {
			n = end
		}
		if err := mr.grow(n); err != nil {
			return nil, err
		}
		mr.buf = append(mr.buf, chunk[:n]...)
		mr.consume(chunk[:n])
		if end >= 0 {
			return mr.buf, nil
		}
	}
}

// grow makes room for n more bytes in mr.buf, or fails with errLineLimit
// when that would pass the line size limit. It doubles the buffer rather
// than growing it as append would, which copies a long line about four
// times over, and goes straight to the limit when the doubling after next
// would pass it: at most two buffers, the new one the limit, are held at
// once.
func (mr *messageReader) grow(n int) error {
	need := int64(len(mr.buf)) + int64(n)
	if need > mr.lim.LineSize {
		return errLineLimit
	}
	if need > int64(cap(mr.buf)) {
		want := max(2*int64(cap(mr.buf)), need, 4096)
		if want > mr.lim.LineSize/2 {
			want = mr.lim.LineSize
		}
		mr.buf = slices.Grow(mr.buf, int(want)-len(mr.buf))
	}
	return nil
}

// release lets go of a large buffer once its message is decoded, so that
// one long message does not keep its size in memory for the whole import.
func (mr *messageReader) release() {
	if cap(mr.buf) > 1<<20 {
		mr.buf = nil
	}
}

// skipSpace consumes JSON white space and returns the next byte, unread.
func (mr *messageReader) skipSpace() (byte, error) {
	for {
		chunk, err := mr.peek()
		if len(chunk) == 0 {
			return 0, err
		}
		i := 0
		for i < len(chunk) && isJSONSpace(chunk[i]) {
			i++
		}
		mr.consume(chunk[:i])
		if i < len(chunk) {
			return chunk[i], nil // still buffered: consume only moved past it
		}
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// peek returns the bytes buffered, reading more when there are none.
func (mr *messageReader) peek() ([]byte, error) {
	if mr.br.Buffered() == 0 {
		if _, err := mr.br.Peek(1); err != nil {
			return nil, err
		}
	}
	return mr.br.Peek(mr.br.Buffered())
}

// consume moves past b, the next bytes peek returned, counting the lines
// they end.
func (mr *messageReader) consume(b []byte) {
	mr.line += bytes.Count(b, []byte{'\n'})
	mr.off += int64(len(b))
	_, _ = mr.br.Discard(len(b))
}

// skipByte moves past the next byte, which skipSpace returned (not a line
// end).
func (mr *messageReader) skipByte() {
	mr.off++
	_, _ = mr.br.Discard(1)
}

// MessageError is an invalid message of a bulk import, by its 1-based
// position in the input and, when it was read from text, the line it
// starts on.
type MessageError struct {
	N    int
	Line int // 0 when unknown
	Err  error
}

// Error returns the MessageError message.
func (e *MessageError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("message %d (line %d): %v", e.N, e.Line, e.Err)
	}
	return fmt.Sprintf("message %d: %v", e.N, e.Err)
}

// Unwrap returns the message's error.
func (e *MessageError) Unwrap() error { return e.Err }
