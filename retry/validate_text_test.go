package retry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTextValidators(t *testing.T) {
	mustRegex := func(p string) Validator {
		v, err := Regex(p)
		require.NoError(t, err)
		return v
	}
	tests := []struct {
		name      string
		validator Validator
		answer    string
		want      string // "" means the answer passes
	}{
		{"regex matches anywhere", mustRegex(`\d{3}`), "call 555 now", ""},
		{"regex anchored", mustRegex(`^\d+$`), "12a", `answer does not match the regular expression ^\d+$`},
		{"regex flags", mustRegex(`(?i)^yes`), "YES sir", ""},
		{"contains", Contains("Summary:"), "x\nSummary: y", ""},
		{"contains is case sensitive", Contains("Summary:"), "summary: y", `answer does not contain "Summary:"`},
		{"contains quotes white space", Contains(" end\n"), "the end", `answer does not contain " end\n"`},
		{"maxlen at the bound", MaxLen(3), "abc", ""},
		{"maxlen counts characters", MaxLen(3), "héé", ""},
		{"maxlen over", MaxLen(2000), strings.Repeat("a", 2345), "answer is 2345 characters, more than the maximum of 2000"},
		{"maxlen zero", MaxLen(0), "a", "answer is 1 character, more than the maximum of 0"},
		{"minlen at the bound", MinLen(2), "ée", ""},
		{"minlen under", MinLen(10), "short", "answer is 5 characters, fewer than the minimum of 10"},
		{"minlen empty", MinLen(1), "", "answer is 0 characters, fewer than the minimum of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diagnosis, err := tt.validator.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want == "", ok)
			assert.Equal(t, tt.want, diagnosis)
		})
	}
}

func TestTextValidators_Names(t *testing.T) {
	re, err := Regex(`^a:b$`)
	require.NoError(t, err)
	assert.Equal(t, "regex:^a:b$", re.Name())
	assert.Equal(t, "contains:x", Contains("x").Name())
	assert.Equal(t, "maxlen:20", MaxLen(20).Name())
	assert.Equal(t, "minlen:1", MinLen(1).Name())
}

func TestRegexValidator_BadPattern(t *testing.T) {
	_, err := Regex(`(unclosed`)
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "regex:(unclosed", se.Spec)
	assert.EqualError(t, err, "invalid validator \"regex:(unclosed\": bad regular expression: error parsing regexp: missing closing ): `(unclosed`")
}
