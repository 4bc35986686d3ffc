// Package english holds the small wording helpers tract's messages share.
package english

import (
	"fmt"
	"strconv"
	"strings"
)

// Count says n things: "1 commit", "3 commits".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// A puts "a" or "an" before phrase, by how it starts: "an assistant
// message", "a user message" (a "u" that sounds "you": us…, uni…).
func A(phrase string) string {
	lower := strings.ToLower(phrase)
	if lower != "" && strings.ContainsRune("aeiou", rune(lower[0])) &&
		!strings.HasPrefix(lower, "us") && !strings.HasPrefix(lower, "uni") {
		return "an " + phrase
	}
	return "a " + phrase
}

// Bytes says n bytes for people, in binary units: "512 B", "16 MiB" (a
// whole number of units), "48.2 KiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	div, suffix := int64(unit), "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB", "PiB", "EiB"} {
		if n/div < unit && n/div > -unit {
			break
		}
		div, suffix = div*unit, s
	}
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, suffix)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), suffix)
}

// FirstLine returns the first line of s, cut to max runes with "…" as
// the last. It reads no further than that: s may be large.
func FirstLine(s string, max int) string {
	n, cut := 0, 0
	for i, r := range s {
		if r == '\n' || r == '\r' {
			return s[:i]
		}
		if n == max-1 {
			cut = i
		}
		if n++; n > max {
			return s[:cut] + "…"
		}
	}
	return s
}
