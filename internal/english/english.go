// Package english holds the small wording helpers tract's messages share.
package english

import "strconv"

// Count says n things: "1 commit", "3 commits".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
