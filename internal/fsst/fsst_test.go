package fsst

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fsstSample returns n texts of words, as conversations hold.
func fsstSample(n int) [][]byte {
	words := strings.Fields("the answer is a JSON object with fields name and value; please validate the schema of each message before you reply")
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "Message %d:", i)
		for b.Len() < 120+rng.IntN(200) {
			b.WriteByte(' ')
			b.WriteString(words[rng.IntN(len(words))])
		}
		out[i] = []byte(b.String())
	}
	return out
}

// A trained table compresses texts like its sample, and every text —
// of its sample, of bytes it has no symbol for, empty — decodes back.
func TestFSST_RoundTrip(t *testing.T) {
	sample := fsstSample(2000)
	tab, err := New(Train(sample, 8))
	require.NoError(t, err)
	back, err := Parse(tab.Marshal())
	require.NoError(t, err)
	assert.Equal(t, tab.Marshal(), back.Marshal(), "the stored form parses back to the table")

	var in, out int
	for _, text := range sample {
		codes := tab.Encode(nil, text)
		got, err := tab.Decode(codes)
		require.NoError(t, err)
		require.Equal(t, text, got)
		in, out = in+len(text), out+len(codes)
	}
	assert.Less(t, out, in/2, "texts like the sample take under half their size")

	odd := [][]byte{{}, []byte("x"), []byte("ünïcödé ✓ 日本語"), {0, 255, 254, 1}, bytes.Repeat([]byte{0xff}, 300)}
	for _, text := range odd {
		got, err := tab.Decode(tab.Encode(nil, text))
		require.NoError(t, err)
		assert.Equal(t, text, got)
	}
}

// Codes that are damaged never panic and never decode to more than 8
// bytes a code; a table that does not parse is an error.
func TestFSST_DamagedCodesAndTables(t *testing.T) {
	tab, err := New([][]byte{[]byte("ab"), []byte("c"), []byte("abcdefgh")})
	require.NoError(t, err)
	_, err = tab.Decode([]byte{Escape})
	assert.Error(t, err, "an escape at the end")
	_, err = tab.Decode([]byte{0, 7})
	assert.Error(t, err, "a code past the table's symbols")
	got, err := tab.Decode([]byte{2, 0, Escape, 'z', 1})
	require.NoError(t, err)
	assert.Equal(t, "abcdefghabzc", string(got))
	assert.Equal(t, []byte{2, 0, 1}, tab.Encode(nil, []byte("abcdefghabc")), "the longest symbol first")

	for _, bad := range [][]byte{{0}, {9, 'a'}, {3, 'a'}, {1, 'a', 1, 'a'}} {
		_, err := Parse(bad)
		assert.ErrorIs(t, err, ErrBadTable, "%v", bad)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		codes := make([]byte, rng.IntN(40))
		for i := range codes {
			codes[i] = byte(rng.IntN(256))
		}
		if text, err := tab.Decode(codes); err == nil {
			assert.LessOrEqual(t, len(text), 8*len(codes))
		}
	}
}

// Every symbol of two bytes or more is in at least minShared distinct
// texts of the sample: a string of fewer texts, however often it repeats
// in them, is not in the table.
func TestFSST_SymbolsAreSharedByManyTexts(t *testing.T) {
	sample := fsstSample(1000)
	const secret = "QX7-SECRET-ZK9 "
	for i := range 5 {
		sample[i] = append(bytes.Repeat([]byte(secret), 40), sample[i]...)
	}
	symbols := Train(sample, 16)
	require.NotEmpty(t, symbols)
	for _, s := range symbols {
		if len(s) < 2 {
			continue
		}
		n := 0
		for _, text := range sample {
			if bytes.Contains(text, s) {
				n++
			}
		}
		assert.GreaterOrEqual(t, n, 16, "symbol %q is in %d texts", s, n)
	}
}

// A text's codes anywhere in raw bytes decode loosely to the text, but
// perhaps a first symbol.
func TestFSST_DecodeLooseFindsTextsInRawBytes(t *testing.T) {
	sample := fsstSample(1000)
	tab, err := New(Train(sample, 8))
	require.NoError(t, err)
	text := []byte("Message 77: please validate the answer [tag-0042] before you reply [tag-0042]")
	raw := append([]byte{1, 2, 3, Escape}, tab.Encode(nil, text)...)
	raw = append(raw, 9, 9, 250, 251)
	assert.Contains(t, string(tab.DecodeLoose(raw)), string(text[8:]))
	assert.Equal(t, 2, bytes.Count(tab.DecodeLoose(raw), []byte("[tag-0042]")))
}
