package english

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 commits"}, {1, "1 commit"}, {2, "2 commits"}, {-1, "-1 commits"}} {
		assert.Equal(t, tc.want, Count(tc.n, "commit", "commits"))
	}
}

func TestA(t *testing.T) {
	for phrase, want := range map[string]string{
		"user message": "a user message", "assistant message": "an assistant message",
		"object": "an object", "string": "a string", "unknown kind": "an unknown kind", "": "a ",
	} {
		assert.Equal(t, want, A(phrase))
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {1536, "1.5 KiB"},
		{49357, "48.2 KiB"}, {16 << 20, "16 MiB"}, {50_000_000, "47.7 MiB"}, {4 << 30, "4 GiB"},
		{1<<40 + 1, "1.0 TiB"}, {1 << 62, "4 EiB"}, {1<<63 - 1, "8.0 EiB"},
	} {
		assert.Equal(t, tc.want, Bytes(tc.n), "%d", tc.n)
	}
}
