package postgres

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidRepositoryName(t *testing.T) {
	for name, want := range map[string]bool{
		"default":                true,
		"a":                      true,
		"Team-1/agents_v2.prod":  true,
		"9lives":                 true,
		strings.Repeat("a", 128): true,
		"":                       false,
		"-x":                     false,
		".hidden":                false,
		"/root":                  false,
		"a b":                    false,
		"naïve":                  false,
		"a?b":                    false,
		strings.Repeat("a", 129): false,
	} {
		assert.Equal(t, want, validRepositoryName(name), "%q", name)
	}
}
