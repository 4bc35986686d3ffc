package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSpec_Kinds(t *testing.T) {
	judge := func(context.Context, string) (string, error) { return `{"pass": true}`, nil }
	tests := []struct {
		spec   string
		answer string
		ok     bool
	}{
		{"json", `{}`, true},
		{"schema:testdata/person.schema.json", `{"name": "a", "age": 1}`, true},
		{"regex:^a:b$", "a:b", true},
		{"contains:key: value", "a key: value", true},
		{"contains: ", "nospace", false},
		{"maxlen:3", "abcd", false},
		{"maxlen: 3", "abc", true},
		{"minlen:0", "", true},
		{"cmd:grep -q x", "x", true},
		{"llm:is fine: really", "whatever", true},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			v, err := ParseSpec(tt.spec, WithJudge(judge))
			require.NoError(t, err)
			assert.Equal(t, tt.spec, v.Name(), "Name is the spec as written")
			ok, _, err := v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.ok, ok)
		})
	}
}

const kindsList = "(valid validators: json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA)"

func TestParseSpec_SyntaxErrors(t *testing.T) {
	tests := []struct {
		spec, reason string
	}{
		{"", "empty spec"},
		{"yaml", `unknown kind "yaml"`},
		{"JSON", `unknown kind "JSON"`},
		{"max-len:3", `unknown kind "max-len"`},
		{":x", "missing kind before the colon"},
		{"json:strict", "json takes no argument"},
		{"schema", "schema needs a file path, as in schema:answer.schema.json"},
		{"regex:", "regex needs a pattern, as in regex:^[A-Z]"},
		{"contains", "contains needs the text to look for, as in contains:Summary"},
		{"maxlen", "maxlen needs a number of characters, as in maxlen:200"},
		{"maxlen:", "maxlen needs a number of characters, as in maxlen:200"},
		{"maxlen:2k", `maxlen needs a whole number of characters, 0 or more, not "2k"`},
		{"minlen:-1", `minlen needs a whole number of characters, 0 or more, not "-1"`},
		{"minlen:1.5", `minlen needs a whole number of characters, 0 or more, not "1.5"`},
		{"cmd", "cmd needs a command, as in cmd:gofmt -l"},
		{"llm", "llm needs criteria, as in llm:the answer is polite"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ParseSpec(tt.spec)
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.spec, se.Spec)
			assert.Equal(t, tt.reason+" "+kindsList, se.Reason)
			assert.Nil(t, se.Err)
		})
	}
}

func TestParseSpec_ErrorMessage(t *testing.T) {
	_, err := ParseSpec("yaml:strict")
	assert.EqualError(t, err, `invalid validator "yaml:strict": unknown kind "yaml" `+kindsList)
}

// Everything that would stop a validator from running is found at parse
// time, before any model call.
func TestParseSpec_ConfigurationErrors(t *testing.T) {
	tests := []struct {
		spec, reason string
	}{
		{"regex:[a-", "bad regular expression"},
		{"schema:testdata/no-such.schema.json", "cannot read the schema file"},
		{"schema:testdata/not-a-schema.json", "the file is not a valid JSON Schema"},
		{"cmd:no-such-command-tract-test", "command not found"},
		{"llm:polite", "an llm validator needs a judge model, and none is configured (configure a model, or use WithJudge)"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ParseSpec(tt.spec)
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.spec, se.Spec)
			assert.Equal(t, tt.reason, se.Reason)
		})
	}
}

func TestParseSpecs(t *testing.T) {
	v, err := ParseSpecs([]string{"json", "maxlen:10"})
	require.NoError(t, err)
	assert.Equal(t, "json, maxlen:10", v.Name())
	ok, diagnosis, err := v.Validate(t.Context(), `{"long": "value"}`)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "maxlen:10: answer is 17 characters, more than the maximum of 10", diagnosis)

	_, err = ParseSpecs([]string{"json", "bogus", "regex:("})
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "bogus", se.Spec, "the first bad spec is reported")

	v, err = ParseSpecs(nil)
	require.NoError(t, err)
	ok, _, err = v.Validate(t.Context(), "")
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestParseSpec_Options(t *testing.T) {
	v, err := ParseSpec("cmd:sleep 5", WithCmdTimeout(50*time.Millisecond))
	require.NoError(t, err)
	ok, diagnosis, err := v.Validate(t.Context(), "")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "command timed out after 50ms (no output)", diagnosis)
}
