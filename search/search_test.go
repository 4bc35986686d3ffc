package search_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
)

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"Hello, hello WORLD!", []string{"hello", "world"}},
		{"x=42; ÉTÉ café_3", []string{"x", "42", "été", "café", "3"}},
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
		{"\x1b[2Jred\u00a0line", []string{"2jred", "line"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, search.Words(tt.text), "%q", tt.text)
	}
	long := strings.Repeat("é", 40) // 80 bytes
	w := search.Words(long)
	require.Len(t, w, 1)
	assert.Equal(t, strings.Repeat("é", 32), w[0], "cut at a character boundary within MaxWordLen")
}

func TestQuery(t *testing.T) {
	_, err := search.ParseQuery("  ,;  ")
	require.ErrorIs(t, err, search.ErrEmptyQuery)

	_, err = search.ParseQuery("a b c d e f g h i")
	require.ErrorIs(t, err, search.ErrTooManyTerms)
	_, err = search.ParseQuery("a b c d e f g h A")
	require.NoError(t, err, "terms are counted once")

	q, err := search.ParseQuery("Integer valid*")
	require.NoError(t, err)
	assert.Equal(t, "integer valid*", q.String())
	assert.Equal(t, []string{"integer", "valid*"}, q.Terms())
	tests := []struct {
		texts []string
		want  bool
	}{
		{[]string{"use an INTEGER; validation failed"}, true},
		{[]string{"use an integer", "invalid: validator said no"}, true}, // the words may sit in different texts
		{[]string{"use an integer"}, false},                              // every term is needed
		{[]string{"integers are valid"}, false},                          // a word matches whole unless a prefix
		{nil, false},
		{[]string{"INTEGER VALIDATED"}, true},
		{[]string{"integer Kelvin"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, q.Match(tt.texts...), "%q", tt.texts)
	}
	kelvin, err := search.ParseQuery("kelvin")
	require.NoError(t, err)
	assert.True(t, kelvin.Match("Kelvin"), "KELVIN SIGN lower-cases to k: the quick test leaves it to the tokeniser")
	assert.False(t, kelvin.Match("kel vin"))

	text := "Valid integer, validated: INTEGER."
	var got []string
	for _, s := range q.Highlight(text) {
		got = append(got, text[s.Start:s.End])
	}
	assert.Equal(t, []string{"Valid", "integer", "validated", "INTEGER"}, got)
}

func TestGrep(t *testing.T) {
	_, err := search.NewGrep([]string{"a("})
	var pe *search.PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "a(", pe.Pattern)
	_, err = search.NewGrep(nil)
	require.Error(t, err)

	tests := []struct {
		name     string
		patterns []string
		opts     []search.GrepOption
		texts    []string
		want     bool
	}{
		{"one pattern", []string{`colou?r`}, nil, []string{"three colors"}, true},
		{"case matters", []string{`JSON`}, nil, []string{"not json"}, false},
		{"-i", []string{`JSON`}, []search.GrepOption{search.IgnoreCase()}, []string{"not json"}, true},
		{"in the diagnosis", []string{`invalid character`}, nil, []string{"{oops", "invalid character 'o'"}, true},
		{"any of several", []string{`xyz`, `oops`}, nil, []string{"{oops"}, true},
		{"all-match needs each", []string{`xyz`, `oops`}, []search.GrepOption{search.AllMatch()}, []string{"{oops"}, false},
		{"all-match across texts", []string{`int`, `oops`}, []search.GrepOption{search.AllMatch()}, []string{"{oops", "want int"}, true},
		{"empty texts skipped", []string{`^$`}, nil, []string{"text", ""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := search.NewGrep(tt.patterns, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, g.Match(tt.texts...))
		})
	}
}

// The word index reads a commit's diagnosis under the key package record
// writes it.
func TestCommitWords_ReadTheDiagnosis(t *testing.T) {
	meta, err := json.Marshal(map[string]string{record.KeyDiagnosis: "Unexpected EOF", "Diagnosis": "not this"})
	require.NoError(t, err)
	c := &dag.Commit{Kind: dag.KindMessage, Meta: meta}
	assert.Equal(t, []string{"eof", "text", "the", "unexpected"}, store.CommitWords(c, "the text"))
	assert.Equal(t, []string{"text", "the"}, store.CommitWords(&dag.Commit{Kind: dag.KindMessage}, "the text"))
}
