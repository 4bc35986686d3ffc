package dag

import (
	"fmt"
	"unicode/utf8"
)

// This file holds the one rule for text that enters a repository, whether
// as a commit's text or inside JSON: it is valid UTF-8, and nothing is
// replaced with U+FFFD on the way in.

// ValidateText checks that text can be committed: non-empty and valid
// UTF-8 (see InvalidUTF8). The error names the first invalid byte.
func ValidateText(text string) error {
	if text == "" {
		return fmt.Errorf("%w: the text is empty", ErrInvalidText)
	}
	if i := InvalidUTF8(text); i >= 0 {
		return fmt.Errorf("%w: the text is not valid UTF-8 (byte %d)", ErrInvalidText, i)
	}
	return nil
}

// InvalidUTF8 returns the offset of the first byte of text that is not
// part of valid UTF-8 — a stray continuation byte, a truncated or overlong
// sequence, or an encoded surrogate half (U+D800 to U+DFFF) — or -1 when
// text is valid UTF-8.
func InvalidUTF8[T string | []byte](text T) int {
	switch s := any(text).(type) {
	case string:
		if utf8.ValidString(s) {
			return -1
		}
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return i
			}
			i += n
		}
	case []byte:
		if utf8.Valid(s) {
			return -1
		}
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				return i
			}
			i += n
		}
	}
	return -1
}

// InvalidJSONText returns the offset in raw, a JSON document, of the first
// thing in it that does not stand for valid UTF-8 text, or -1 when there is
// none. That is a byte that is not valid UTF-8 (see InvalidUTF8), or a
// \uXXXX escape of a surrogate half that is not part of a pair ("\ud800"
// alone): encoding/json decodes both to U+FFFD without a word, so checking
// the decoded text is too late. InvalidJSONText does not check the JSON's
// syntax, and an escape it cannot read is left to the decoder to report.
func InvalidJSONText(raw []byte) int {
	if i := InvalidUTF8(raw); i >= 0 {
		return i
	}
	// A backslash is only valid inside a string, where it starts an escape:
	// so every backslash outside an escape starts one, and no string state
	// is needed.
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++ // a one-character escape, \" or \\ included
			continue
		}
		r, ok := hex4(raw, i+2)
		switch {
		case !ok:
			// Malformed: the decoder rejects it.
		case r >= 0xDC00 && r <= 0xDFFF:
			return i // a low half with no high half before it
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(raw, i+8); !ok || raw[i+6] != '\\' || raw[i+7] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
				return i // a high half with no low half after it
			}
			i += 11 // the pair
			continue
		}
		i += 5
	}
	return -1
}

// hex4 reads the four hex digits of a \u escape at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at < 0 || at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
