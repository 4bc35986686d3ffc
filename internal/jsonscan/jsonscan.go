// Package jsonscan reads a JSON object in one pass: it checks the
// document as json.Valid does and hands back the object's members as
// slices of it, so that a caller decodes only the values it needs, and
// decodes nothing twice.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Member is a member of a JSON object: its key, unquoted, and its value,
// a slice of the document it was read from; when the value is an array,
// Elems are its elements, slices of it.
type Member struct {
	Key   string
	Val   []byte
	Elems []json.RawMessage
}

// MaxDepth is how deeply Members lets arrays and objects nest, as
// encoding/json does (10,000).
const MaxDepth = 10000

// Members reads body, one JSON object, in one pass: it checks that body
// is valid JSON as json.Valid does and returns the object's members in
// their order (a key given twice is there twice), their values as slices
// of body. ok is false when body is not valid JSON or holds another
// value than an object: the caller asks encoding/json why, so that its
// users read the errors they know. Where json.Unmarshal checks a
// document whole, then reads it again to decode it, and a third time to
// find the end of each value kept raw, Members reads it once.
func Members(body []byte) (ms []Member, ok bool) {
	if !whole(body, '{', func(s *scanner) bool { ms, ok = s.object(1, true); return ok }) {
		return nil, false
	}
	return ms, true
}

// Elements reads body, one JSON array, in one pass as Members reads an
// object, and returns its elements as slices of body; ok is false when
// body is not valid JSON or holds another value than an array.
func Elements(body []byte) (elems []json.RawMessage, ok bool) {
	if !whole(body, '[', func(s *scanner) bool { elems, ok = s.array(1, true); return ok }) {
		return nil, false
	}
	return elems, true
}

// whole reports whether body is one value that opens with the byte open
// and that read reads, with nothing but white space around it.
func whole(body []byte, open byte, read func(*scanner) bool) bool {
	s := scanner{b: body}
	s.space()
	if s.peek() != open || !read(&s) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// Unquote returns the string a JSON string literal q (valid, quotes
// included) holds, as encoding/json decodes it (which makes invalid
// UTF-8 U+FFFD): its bytes when it has no escape and is valid UTF-8.
func Unquote(q []byte) (string, bool) {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(q, &s) == nil
}

// scanner checks JSON at b[i:], a value at a time, moving i past what it
// read.
type scanner struct {
	b []byte
	i int
}

// peek returns the byte at i, or 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// space skips JSON's white space.
func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value nested depth deep and reports whether it is
// valid.
func (s *scanner) value(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str()
	case c == '{':
		if depth >= MaxDepth {
			return false
		}
		_, ok := s.object(depth+1, false)
		return ok
	case c == '[':
		if depth >= MaxDepth {
			return false
		}
		_, ok := s.array(depth+1, false)
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

// object reads an object whose members' values are nested depth deep
// and, with keep, returns its members (an array's elements with them).
func (s *scanner) object(depth int, keep bool) (ms []Member, ok bool) {
	s.i++ // '{'
	s.space()
	if s.peek() == '}' {
		s.i++
		return ms, true
	}
	for {
		key := s.i
		if !s.str() {
			return nil, false
		}
		quoted := s.b[key:s.i]
		s.space()
		if s.peek() != ':' {
			return nil, false
		}
		s.i++
		s.space()
		from := s.i
		var elems []json.RawMessage
		if keep && s.peek() == '[' {
			elems, ok = s.array(depth+1, true)
		} else {
			ok = s.value(depth)
		}
		if !ok {
			return nil, false
		}
		if keep {
			k, ok := Unquote(quoted)
			if !ok {
				return nil, false
			}
			ms = append(ms, Member{Key: k, Val: s.b[from:s.i], Elems: elems})
		}
		s.space()
		c := s.peek()
		s.i++
		switch c {
		case '}':
			return ms, true
		case ',':
			s.space()
		default:
			return nil, false
		}
	}
}

// array reads an array whose elements are nested depth deep and, with
// keep, returns its elements.
func (s *scanner) array(depth int, keep bool) (elems []json.RawMessage, ok bool) {
	s.i++ // '['
	s.space()
	if s.peek() == ']' {
		s.i++
		return elems, true
	}
	for {
		from := s.i
		if !s.value(depth) {
			return nil, false
		}
		if keep {
			elems = append(elems, s.b[from:s.i])
		}
		s.space()
		c := s.peek()
		s.i++
		switch c {
		case ']':
			return elems, true
		case ',':
			s.space()
		default:
			return nil, false
		}
	}
}

// str reads a string, quotes included: no control character inside, and
// every escape one of JSON's.
func (s *scanner) str() bool {
	b, i := s.b, s.i
	if i >= len(b) || b[i] != '"' {
		return false
	}
	for i++; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return true
		case c < 0x20 || i+1 == len(b):
			return false
		}
		i++ // the escape's letter
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				return false
			}
			i += 4
		default:
			return false
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// literal reads word (true, false or null).
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number reads a number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (s *scanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one digit or more.
func (s *scanner) digits() bool {
	from := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > from
}
