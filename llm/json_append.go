package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file holds the JSON writer of the request bodies: a conversation
// of 100,000 messages is a body of tens of megabytes, and encoding/json
// (a MarshalJSON per message, its output compacted again, the buffer
// grown by doubling) took several times what the rest of a turn does.
// These functions append to one buffer, sized beforehand from the
// messages' texts, and escape each string once, skipping eight bytes at
// a time through text that needs no escape. What they write is what
// encoding/json writes, byte for byte (TestRequestBody_SameAsEncodingJSON
// and FuzzRequestBody compare the two).

// appendArray appends a JSON array of n elements, each appended by elem.
func appendArray(b []byte, n int, elem func(b []byte, i int) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = elem(b, i); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it: '"', '\\' and the control characters (as \b, \f, \n, \r,
// \t or \u00XX), U+2028 and U+2029 (\u2028, \u2029), each byte of
// invalid UTF-8 as \ufffd, and with escapeHTML '<', '>' and '&' too
// (\u003c, \u003e, \u0026).
func appendString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plainWord(load64(s, i), escapeHTML) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// load64 returns the eight bytes of s from i as a word, the first the
// lowest.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord reports whether none of the eight bytes of w needs a look
// of its own: all are ASCII, none is a control character, '"' or '\\',
// and with escapeHTML none is '<', '>' or '&'.
func plainWord(w uint64, escapeHTML bool) bool {
	special := w | (w - 0x20*lows) // the high bit: ≥ 0x80, or < 0x20
	special |= hasZero(w ^ '"'*lows)
	special |= hasZero(w ^ '\\'*lows)
	if escapeHTML {
		// '<' and '>' (0x3c, 0x3e) differ in one bit, which one test
		// leaves out.
		special |= hasZero((w^'<'*lows)&^(2*lows)) | hasZero(w^'&'*lows)
	}
	return special&highs == 0
}

// hasZero has the high bit of a byte set when a byte of v is zero (some
// bytes above a zero byte may be marked too: the caller asks only
// whether any is).
func hasZero(v uint64) uint64 { return (v - lows) &^ v & highs }

// appendCompact appends the JSON text raw without insignificant white
// space, and with escapeHTML its '<', '>', '&', U+2028 and U+2029
// escaped, as encoding/json writes a json.RawMessage. raw must be valid.
func appendCompact(b []byte, raw []byte, escapeHTML bool) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if !escapeHTML {
		err := json.Compact(buf, raw)
		return buf.Bytes(), err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return b, err
	}
	json.HTMLEscape(buf, compact.Bytes())
	return buf.Bytes(), nil
}

// appendValue appends v as encoding/json writes it, without escaping
// HTML: for the small members of a request around its messages.
func appendValue(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	e := json.NewEncoder(buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return b, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil // Encode's newline
}

// appendKey appends ,"key": (without the comma when first).
func appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// requestBody is a request's wire form, which writes its own JSON.
type requestBody interface {
	// sizeHint is about the bytes of the body when its strings need no
	// escapes.
	sizeHint() int
	// appendJSON appends the body as encoding/json writes it.
	appendJSON(b []byte) ([]byte, error)
}

// encodeBody returns the JSON body of wire, written in one buffer sized
// from its messages with a sixteenth more for escapes. When it cannot be
// written (a message MarshalJSON refuses), encoding/json is asked, for
// its error.
func encodeBody(wire requestBody) ([]byte, error) {
	n := wire.sizeHint()
	b, err := wire.appendJSON(make([]byte, 0, n+n/16+512))
	if err != nil {
		return encodeRequest(wire)
	}
	return b, nil
}
