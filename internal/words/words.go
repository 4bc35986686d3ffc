// Package words is the tokeniser of tract's word search, shared by
// package search (queries, matching, highlighting) and package store
// (the word index), which must split texts alike: a word is a run of
// Unicode letters and digits, lower-cased, and cut at MaxLen bytes (at a
// character boundary). Everything else separates words.
package words

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest word, in bytes: a longer run of letters and
// digits is cut to its first MaxLen bytes.
const MaxLen = 64

// IsWordRune reports whether r belongs in a word: a letter or a digit.
func IsWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Spans calls fn with each word of text, lower-cased and cut to MaxLen,
// and the bytes text[start:end] it came from (the whole run, uncut),
// until fn returns false.
func Spans(text string, fn func(word string, start, end int) bool) {
	start := -1
	for i := 0; i < len(text); {
		c, n := text[i], 1
		var in bool
		if c < utf8.RuneSelf {
			in = asciiWord[c] // a table instead of the unicode package's lookups
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(text[i:])
			in = IsWordRune(r)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			if !fn(Normalise(text[start:i]), start, i) {
				return
			}
			start = -1
		}
		i += n
	}
	if start >= 0 {
		fn(Normalise(text[start:]), start, len(text))
	}
}

// Normalise lower-cases a run of letters and digits and cuts it to
// MaxLen bytes at a character boundary.
func Normalise(run string) string {
	w := run
	for i := 0; i < len(run); i++ {
		if c := run[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			w = strings.ToLower(run)
			break
		}
	}
	if len(w) <= MaxLen {
		return w
	}
	cut := MaxLen
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// asciiWord says which ASCII bytes are letters or digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// Append appends the words of text to ws, in order, repeats included,
// and returns the extended slice.
func Append(ws []string, text string) []string {
	Spans(text, func(w string, _, _ int) bool {
		ws = append(ws, w)
		return true
	})
	return ws
}

// Set returns the distinct words of texts, taken together, sorted.
func Set(texts ...string) []string {
	var out []string
	for _, t := range texts {
		Spans(t, func(w string, _, _ int) bool {
			out = append(out, w)
			return true
		})
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// AppendBytes calls fn with each word of text, as Spans finds them, in
// order, repeats included; the word is in buf (returned for the next
// call, to reuse) and valid until fn returns. Only a word with a
// character beyond ASCII costs an allocation.
func AppendBytes(buf, text []byte, fn func(word []byte)) []byte {
	start := -1
	ascii := true
	emit := func(run []byte) {
		if ascii {
			buf = buf[:0]
			for _, c := range run[:min(len(run), MaxLen)] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
			}
		} else {
			buf = append(buf[:0], Normalise(string(run))...)
		}
		fn(buf)
	}
	for i := 0; i < len(text); {
		c, n := text[i], 1
		var in bool
		if c < utf8.RuneSelf {
			in = asciiWord[c]
		} else {
			var r rune
			r, n = utf8.DecodeRune(text[i:])
			in = IsWordRune(r)
			if in {
				ascii = false
			}
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			emit(text[start:i])
			start, ascii = -1, true
		}
		if !in {
			ascii = true
		}
		i += n
	}
	if start >= 0 {
		emit(text[start:])
	}
	return buf
}
