package words

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func BenchmarkSet(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	var sb strings.Builder
	for sb.Len() < 300 {
		fmt.Fprintf(&sb, "w%d ", z.Uint64())
	}
	text := sb.String()
	for b.Loop() {
		Set(text)
	}
}
