package tool_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/tool"
)

// TestCheckNameMatchesRule checks the name rule against the regular
// expression it was written from, on names at and around each edge.
func TestCheckNameMatchesRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{
		"", "a", "Z", "0", "9", "_", "-", "look_up-2", "lookUp",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65),
		"look up", "look.up", "look/up", "a\n", "\na", "é", "aé", "a\x00",
		"@", "[", "`", "{", "/", ":", strings.Repeat("é", 32),
	}
	for _, name := range names {
		assert.Equal(t, rule.MatchString(name), tool.CheckName(name) == nil, "%q", name)
	}
}
