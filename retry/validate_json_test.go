package retry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONValidator(t *testing.T) {
	tests := []struct {
		name, answer string
		want         string // "" means the answer passes
	}{
		{"object", `{"a": [1, 2.5, "x", null, true]}`, ""},
		{"scalar", `42`, ""},
		{"surrounding white space", "\n  {\"a\": 1}\n", ""},
		{"empty", ``, "answer is empty, expected a JSON value"},
		{"only white space", " \n\t", "answer is empty, expected a JSON value"},
		{"bad value", `{"a": x}`, "invalid JSON at line 1, column 7: invalid character 'x' looking for beginning of value"},
		{"trailing data", `{"a": 1} extra`, "invalid JSON at line 1, column 10: invalid character 'e' after top-level value"},
		{"two values", `{}{}`, "invalid JSON at line 1, column 3: invalid character '{' after top-level value"},
		{"unterminated", `{"a": 1`, "invalid JSON at line 1, column 8: unexpected end of JSON input"},
		{"cut literal", `[nul`, "invalid JSON at line 1, column 5: unexpected end of JSON input"},
		{"trailing comma on line 3", "{\n  \"a\": 1,\n}", "invalid JSON at line 3, column 1: invalid character '}' looking for beginning of object key string"},
		{"columns count characters", `{"é€": nope}`, "invalid JSON at line 1, column 9: invalid character 'o' in literal null (expecting 'u')"},
		{"code fence", "```json\n{}\n```", "invalid JSON at line 1, column 1: invalid character '`' looking for beginning of value"},
	}
	v := JSON()
	assert.Equal(t, "json", v.Name())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diagnosis, err := v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want == "", ok)
			assert.Equal(t, tt.want, diagnosis)
		})
	}
}

func TestJSONLineColumn(t *testing.T) {
	s := "ab\ncdé\nf"
	for _, tt := range []struct{ offset, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {7, 2, 4}, {8, 3, 1}, {9, 3, 2}, {99, 3, 2}, {-1, 1, 1},
	} {
		line, col := lineColumn(s, tt.offset)
		assert.Equal(t, [2]int{tt.line, tt.col}, [2]int{line, col}, "offset %d", tt.offset)
	}
}
