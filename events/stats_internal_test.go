package events

import (
	"regexp"
	"testing"
)

// maskVariableParts does what the two regular expressions it replaced did,
// one after the other, on text without paths or hashes (which it masks
// too: see TestNormaliseDiagnosis).
func FuzzMaskVariableParts(f *testing.F) {
	quoted := regexp.MustCompile(`"[^"]*"|'[^']*'|` + "`[^`]*`")
	numbers := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	for _, s := range []string{
		"", "line 3: unexpected 'x'", `expected "a" at offset 12.5`, "1.", "1.2.3", ".5", "'unclosed 42",
		"`code` and \"x'y\" and 'a\"b'", "3\"a\"", "1.'a'2'", "version 10.04.1 at 7", "naïve 'é' 9",
	} {
		f.Add(s)
	}
	pathOrHash := regexp.MustCompile(`/|(^|[^0-9a-z])[0-9a-f]{7,}([^0-9a-z]|$)`)
	f.Fuzz(func(t *testing.T, s string) {
		if pathOrHash.MatchString(s) {
			t.Skip("a path or a hash")
		}
		want := numbers.ReplaceAllString(quoted.ReplaceAllString(s, `"…"`), "N")
		if got := maskVariableParts(s); got != want {
			t.Fatalf("maskVariableParts(%q) = %q, want %q", s, got, want)
		}
	})
}

// Failures of one kind normalise to one diagnosis, whatever the temporary
// directory, the absolute path, the hash or the numbers they quote; other
// text is left alone.
func TestNormaliseDiagnosis(t *testing.T) {
	vet := func(dir string) string {
		return `f=$(mktemp -d)/main.go && cat > "$f" && go vet "$f" exited with status 1: ` + dir +
			"main.go:6:2: fmt.Printf format %d reads arg #1, but call has 0 args"
	}
	cases := []struct {
		name string
		in   []string // all normalise to want
		want string
	}{
		{"go vet in temporary directories", []string{vet("../tmp.dzuryo5sx1/"), vet("../tmp.rmlmnglmf4/"), vet("/tmp/tmp.S9xeoj3cpq/")},
			`f=$(mktemp -d)/main.go && cat > "…" && go vet "…" exited with status N: …/main.go:N:N: fmt.printf format %d reads arg #N, but call has N args`},
		{"absolute paths", []string{"open /home/ada/work/a.json: no such file", "open /Users/bob/a.json: no such file"},
			"open …/a.json: no such file"},
		{"relative paths", []string{"./build/x.go:3: oops", "internal/turn/x.go:12: oops", "~/src/x.go:9: oops"}, "…/x.go:N: oops"},
		{"temporary files", []string{"/tmp/tmp.k2Xq9ZbP1c: line 3: syntax error", "/tmp/tmpk2x_q9zb: line 4: syntax error"},
			"…/tmp…: line N: syntax error"},
		{"temporary files with an extension", []string{"/tmp/tmpk2x_q9zb.py:4", "/var/tmp/tmp.AAbb12cc.py:7"}, "…/tmp….py:N"},
		{"hashes", []string{"commit 8e8ef83b not found", "commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 not found"}, "commit HASH not found"},
		{"numbers stay numbers", []string{"wrote 12345678 bytes", "wrote 3 bytes"}, "wrote N bytes"},
		{"words that are not paths or hashes", []string{"and/or deadbeef /x.go"}, "and/or deadbeef /x.go"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range tc.in {
				if got := normaliseDiagnosis(in); got != tc.want {
					t.Errorf("normaliseDiagnosis(%q) = %q, want %q", in, got, tc.want)
				}
			}
		})
	}
}
