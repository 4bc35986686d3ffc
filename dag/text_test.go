package dag_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"empty", "", -1},
		{"ASCII", "hello", -1},
		{"multi-byte", "日本語 🚀", -1},
		{"a stray byte", "ab\xffcd", 2},
		{"a continuation byte alone", "\x80", 0},
		{"a truncated rune at the end", "ok \xe6\x97", 3},
		{"an overlong encoding", "a\xc0\xafb", 1},
		{"an encoded surrogate half", "x\xed\xa0\x80", 1},
		{"the first of several", "é\xff\xfe", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dag.InvalidUTF8(tc.in))
			assert.Equal(t, tc.want, dag.InvalidUTF8([]byte(tc.in)))
		})
	}
}

// Every input that InvalidJSONText flags is one that encoding/json would
// have decoded to U+FFFD without an error.
func TestInvalidJSONText(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"plain", `{"content":"hello"}`, -1},
		{"a valid pair", `{"content":"\ud83d\ude80"}`, -1},
		{"a pair in upper case", `{"content":"\uD83D\uDE80"}`, -1},
		{"other escapes", `{"content":"a\"b\\c\n\u00e9\/"}`, -1},
		{"an escaped backslash before u", `{"content":"\\ud800"}`, -1},
		{"a raw invalid byte", "{\"content\":\"a\xffb\"}", 13},
		{"a lone high half", `{"content":"ab\ud800"}`, 14},
		{"a lone high half at the end", `"\ud800"`, 1},
		{"a high half and a non-surrogate", `"\ud800\u0041"`, 1},
		{"a high half and a plain character", `"\ud800x"`, 1},
		{"two high halves", `"\ud800\ud800"`, 1},
		{"a lone low half", `"x\udc00"`, 2},
		{"after a valid pair", `"\ud83d\ude80\ude80"`, 13},
		{"in a key", `{"\udfff":1}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dag.InvalidJSONText([]byte(tc.in))
			assert.Equal(t, tc.want, got)
			var v any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &v), "the decoder accepts it")
			b, err := json.Marshal(v)
			require.NoError(t, err)
			if got >= 0 {
				assert.Contains(t, string(b), "\ufffd", "encoding/json replaces it silently")
			} else {
				assert.NotContains(t, string(b), "\ufffd")
			}
		})
	}
	for _, malformed := range []string{`"\u12"`, `"\`, `"\uZZZZ"`} {
		assert.Equal(t, -1, dag.InvalidJSONText([]byte(malformed)), "%s: left to the decoder", malformed)
	}
}

func TestCanonicalMeta_RejectsWhatJSONWouldReplace(t *testing.T) {
	for raw, want := range map[string]string{
		`{"k":"\ud800"}`:   `the escape \ud800 is half of a UTF-16 surrogate pair, not a character, at byte 6`,
		"{\"k\":\"\xff\"}": "not valid UTF-8 at byte 6",
		`{"\udc00":1}`:     `the escape \udc00 is half of a UTF-16 surrogate pair, not a character, at byte 2`,
	} {
		_, err := dag.CanonicalMeta([]byte(raw))
		assert.ErrorIs(t, err, dag.ErrInvalidMeta, raw)
		assert.ErrorContains(t, err, want, raw)
	}
}
