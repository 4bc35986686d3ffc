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
