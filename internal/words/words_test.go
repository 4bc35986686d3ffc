package words

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAppendBytes checks that AppendBytes finds the words Append finds,
// in order, for ASCII and other texts, long runs and bad UTF-8.
func TestAppendBytes(t *testing.T) {
	long := strings.Repeat("Ab", 40)
	for _, text := range []string{
		"",
		"Hello, World! hello",
		"  spaces\tand\nlines  ",
		"x1 2y _under_score don't",
		"Ünïcödé WORDS and ÄÖÜ ß ΣΊΣΥΦΟΣ",
		"日本語のテキスト、漢字",
		long + " " + long + "é" + " é" + long,
		strings.Repeat("é", 40) + "A",
		"bad \xff\xfe utf8\xc3 end\xe2\x82",
		"mixedCASEé123 done",
		"a",
		"é",
	} {
		want := Append(nil, text)
		var got []string
		buf := AppendBytes(nil, []byte(text), func(w []byte) { got = append(got, string(w)) })
		_ = buf
		assert.Equal(t, want, got, "text %q", text)
	}
}
