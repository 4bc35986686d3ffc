package events

import (
	"regexp"
	"testing"
)

// maskVariableParts does what the two regular expressions it replaced did,
// one after the other.
func FuzzMaskVariableParts(f *testing.F) {
	quoted := regexp.MustCompile(`"[^"]*"|'[^']*'|` + "`[^`]*`")
	numbers := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	for _, s := range []string{
		"", "line 3: unexpected 'x'", `expected "a" at offset 12.5`, "1.", "1.2.3", ".5", "'unclosed 42",
		"`code` and \"x'y\" and 'a\"b'", "3\"a\"", "1.'a'2'", "version 10.04.1 at 7", "naïve 'é' 9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := numbers.ReplaceAllString(quoted.ReplaceAllString(s, `"…"`), "N")
		if got := maskVariableParts(s); got != want {
			t.Fatalf("maskVariableParts(%q) = %q, want %q", s, got, want)
		}
	})
}
