package retry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/fuzzcheck"
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

// SpecKinds lists exactly the kinds the tests above parse, each a prefix of
// one of them.
func TestSpecKinds_AreTheParsedKinds(t *testing.T) {
	parsed := []string{"json", "schema:testdata/person.schema.json", "regex:a", "contains:a", "maxlen:3", "minlen:0", "cmd:true", "llm:ok"}
	kinds := SpecKinds()
	require.Len(t, kinds, len(parsed))
	judge := func(context.Context, string) (string, error) { return `{"pass": true}`, nil }
	for i, k := range kinds {
		assert.True(t, strings.HasPrefix(parsed[i], k), "%q begins %q", parsed[i], k)
		_, err := ParseSpec(parsed[i], WithJudge(judge))
		assert.NoError(t, err, k)
	}
	_, err := ParseSpec("nope:x")
	require.Error(t, err, "a kind SpecKinds does not list is refused")
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
		{"llm:polite", "an llm validator needs a judge model"},
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
	_, err := ParseSpec("llm:polite")
	require.ErrorIs(t, err, ErrNoJudge)
	assert.EqualError(t, err, `invalid validator "llm:polite": an llm validator needs a judge model: none is configured`)
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

func FuzzParseSpec(f *testing.F) {
	dir := f.TempDir()
	schema, err := os.ReadFile(filepath.Join("testdata", "person.schema.json"))
	require.NoError(f, err)
	require.NoError(f, os.WriteFile(filepath.Join(dir, "person.json"), schema, 0o644))
	require.NoError(f, os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"type": 5}`), 0o644))
	for _, s := range []string{
		"json", "json:", "schema:person.json", "schema:broken.json", "schema:missing.json", "schema:",
		"regex:^a:b$", "regex:(", "contains:key: value", "contains:", "maxlen:3", "maxlen: 3",
		"minlen:-1", "minlen:99999999999999999999", "cmd:grep -q x", "cmd:no-such-command-x", "cmd:X=1 true",
		"cmd:", "llm:is polite", "llm: ", "", ":", ":x", "nope", "JSON",
	} {
		f.Add(s)
	}
	judge := func(context.Context, string) (string, error) { return `{"pass": false, "reason": "no"}`, nil }
	f.Fuzz(func(t *testing.T, spec string) {
		if arg, ok := strings.CutPrefix(spec, "schema:"); ok && strings.ContainsAny(arg, `/\`) {
			return // a schema outside dir: do not read the machine's files
		}
		v, err := ParseSpec(spec, WithBaseDir(dir), WithJudge(judge))
		if err != nil {
			fuzzcheck.UserError(t, err)
			var se *SpecError
			if !errors.As(err, &se) || se.Spec != spec {
				t.Fatalf("%q: error %v is not a SpecError for the spec", spec, err)
			}
			return
		}
		if v.Name() != spec {
			t.Fatalf("Name %q, want the spec %q", v.Name(), spec)
		}
		if kind, _, _ := strings.Cut(spec, ":"); kind == "cmd" {
			return // running a fuzzed command is not this target's business
		}
		for _, answer := range []string{"", `{"name": "a", "age": 1}`, "key: value and more text"} {
			ok, diagnosis, err := v.Validate(t.Context(), answer)
			if err != nil {
				t.Fatalf("%q on %q: run error %v", spec, answer, err)
			}
			if ok != (diagnosis == "") {
				t.Fatalf("%q on %q: ok = %v with diagnosis %q", spec, answer, ok, diagnosis)
			}
		}
	})
}

// A spec that is not valid UTF-8 is refused when it is parsed: the
// diagnoses that quote it could not be committed after an attempt.
func TestParseSpec_InvalidUTF8(t *testing.T) {
	for _, spec := range []string{"contains:caf\xe9", "regex:\xff", "cmd:echo \xc3"} {
		_, err := ParseSpec(spec)
		var se *SpecError
		require.ErrorAs(t, err, &se, "%q", spec)
		assert.Contains(t, se.Reason, "not valid UTF-8 (byte ")
	}
	_, err := ParseSpec("contains:caf\xe9")
	assert.ErrorContains(t, err, "not valid UTF-8 (byte 12)")
}
