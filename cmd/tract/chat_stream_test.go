package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract"
)

// The stream erases exactly the rows an attempt took on a terminal of 10
// columns and 5 rows, and strikes instead of erasing what it cannot.
func TestAttemptStream_ErasesTheRowsOfAnAttempt(t *testing.T) {
	const header = "attempt 1/3 ▸\n"
	cases := []struct {
		name   string
		answer string
		dumb   bool
		want   string // what follows the header
	}{
		{"one row", "abc", false, "abc\r\x1b[1A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"a full row, no wrap yet", "abcdefghij", false, "abcdefghij\r\x1b[1A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"a wrapped row", "abcdefghijk", false, "abcdefghijk\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"a full row, then a line", "abcdefghij\nxy", false, "abcdefghij\nxy\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"ends with a line break", "ab\n", false, "ab\n\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"wide characters wrap sooner", "漢字漢字漢字", false, "漢字漢字漢字\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"tabs", "\t\tx", false, "\t\tx\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"taller than the screen is struck", "1\n2\n3\n4\n5", false, "1\n2\n3\n4\n5\n✗ attempt 1/3 rejected: bad\n"},
		{"dumb terminal is struck", "abc", true, "abc\n✗ attempt 1/3 rejected: bad\n"},
		{"control characters are shown", "a\x1b[2Jb\rc", false, "a^[[2Jb^Mc\r\x1b[1A\x1b[J✗ attempt 1/3 rejected: bad\n"},
		{"a line break after a return", "ab\r\ncd", false, "ab\ncd\r\x1b[2A\x1b[J✗ attempt 1/3 rejected: bad\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			s := &attemptStream{w: &b, erase: !tc.dumb, width: 10, height: 5}
			for _, r := range tc.answer {
				s.delta(tract.AttemptDelta{Attempt: 1, Max: 3, Text: string(r)})
			}
			s.verdict(tract.Attempt{Number: 1, Max: 3, Diagnosis: "bad"})
			assert.Equal(t, header+tc.want, b.String())
		})
	}
}

// An accepted attempt is erased only when the answer is printed again.
func TestAttemptStream_AcceptedAttempt(t *testing.T) {
	for _, eraseAccepted := range []bool{true, false} {
		var b strings.Builder
		s := &attemptStream{w: &b, erase: true, width: 80, height: 24, eraseAccepted: eraseAccepted}
		s.delta(tract.AttemptDelta{Attempt: 2, Max: 3, Text: "ok"})
		s.verdict(tract.Attempt{Number: 2, Max: 3, OK: true})
		want := "attempt 2/3 ▸\nok\n✓ attempt 2/3 passed\n"
		if eraseAccepted {
			want = "attempt 2/3 ▸\nok\r\x1b[1A\x1b[J✓ attempt 2/3 passed\n"
		}
		assert.Equal(t, want, b.String())
	}
}

// An attempt cut short (its model call failed, or Ctrl-C) ends its line,
// and what still arrives of it is dropped; the next attempt starts anew.
func TestAttemptStream_EndAndLatePieces(t *testing.T) {
	var b strings.Builder
	s := &attemptStream{w: &b, erase: true, width: 80, height: 24}
	s.delta(tract.AttemptDelta{Attempt: 1, Max: 2, Text: "par"})
	s.end()
	s.delta(tract.AttemptDelta{Attempt: 1, Max: 2, Text: "tial"})
	s.end()
	s.verdict(tract.Attempt{Number: 2, Max: 2, Diagnosis: "empty"}) // streamed nothing
	assert.Equal(t, "attempt 1/2 ▸\npar\n✗ attempt 2/2 rejected: empty\n", b.String())
	var nilStream *attemptStream
	nilStream.end()
}
