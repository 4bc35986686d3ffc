package compress_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/compress"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{strings.Repeat("x", 400), 100},
		{"héllo", 2}, // 5 runes, 6 bytes
		{"日本語です", 2}, // 5 runes, 15 bytes: runes count, not bytes
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, compress.EstimateTokens(tt.text), "EstimateTokens(%q)", tt.text)
		assert.Equal(t, tt.want, compress.Estimator{}.Count(tt.text), "Estimator.Count(%q)", tt.text)
	}
}

func TestMessageTokens_AddsOverhead(t *testing.T) {
	assert.Equal(t, 2+compress.MessageOverhead, compress.MessageTokens(nil, "abcdefgh"))
	words := compress.TokenizerFunc(func(s string) int { return len(strings.Fields(s)) })
	assert.Equal(t, 3+compress.MessageOverhead, compress.MessageTokens(words, "one two three"))
}

func TestItemsTokens_SumsMessages(t *testing.T) {
	items := []compress.Item{user("abcd"), asst("abcdefgh"), user("")}
	assert.Equal(t, 1+2+0+3*compress.MessageOverhead, compress.ItemsTokens(nil, items))
	assert.Equal(t, 0, compress.ItemsTokens(nil, nil))
}
