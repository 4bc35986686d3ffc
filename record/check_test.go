package record_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
)

// Metadata under the keys tract reads back must have the type tract reads
// it as; the error says which key, what it is and what it should be.
func TestCheck_KeysTractReadsAreTypeChecked(t *testing.T) {
	tests := []struct {
		meta string
		want string // "" accepts
	}{
		{`{"pinned": true}`, ""},
		{`{"pinned": false}`, ""},
		{`{"pinned": "yes"}`, `metadata "pinned" is a string ("yes"); tract reads it as a boolean (true or false)`},
		{`{"pinned": 1}`, `metadata "pinned" is a number (1); tract reads it as a boolean (true or false)`},
		{`{"pinned": null}`, `metadata "pinned" is null; tract reads it as a boolean (true or false)`},
		{`{"pinned": [true]}`, `metadata "pinned" is an array; tract reads it as a boolean (true or false)`},
		{`{"valid": "true"}`, `metadata "valid" is a string ("true"); tract reads it as a boolean (true or false)`},
		{`{"attempt": 2}`, ""},
		{`{"attempt": "2"}`, `metadata "attempt" is a string ("2"); tract reads it as a whole number`},
		{`{"attempt": 1.5}`, `metadata "attempt" is a number (1.5); tract reads it as a whole number`},
		{`{"diagnosis": "too long"}`, ""},
		{`{"diagnosis": "` + strings.Repeat("é", 50) + `"}`, ""},
		{`{"pinned": "` + strings.Repeat("é", 50) + `"}`, `metadata "pinned" is a string ("` + strings.Repeat("é", 40) + `…"); tract reads`},
		{`{"diagnosis": 3}`, `metadata "diagnosis" is a number (3); tract reads it as a string`},
		{`{"validator_error": false}`, `metadata "validator_error" is a boolean (false); tract reads it as a string`},
		{`{"model": {"name": "x"}}`, `metadata "model" is an object; tract reads it as a string`},
		{`{"error": ["x"]}`, `metadata "error" is an array; tract reads it as a string`},
		{`{"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}`, ""},
		{`{"usage": 7}`, `metadata "usage" is a number (7); tract reads it as an object`},
		{`{"usage": {"prompt_tokens": "3"}}`, `metadata "usage": "prompt_tokens" is a string; tract reads it as a whole number`},
		{`{"provenance": {"attempts": 2, "diagnoses": ["bad"], "model": "m"}}`, ""},
		{`{"provenance": {"restore": "` + strings.Repeat("ab", 32) + `"}}`, ""},
		{`{"provenance": {"attempts": 2, "diagnoses": "bad"}}`, `metadata "provenance": "diagnoses" is a string; tract reads it as an array`},
		{`{"provenance": {"usage": {"total_tokens": true}}}`, `metadata "provenance": "usage.total_tokens" is a boolean; tract reads it as a whole number`},
		{`{"provenance": {"restore": "abc"}}`, `metadata "provenance": "restore" is a string ("abc"); tract reads it as a full commit hash (64 hex characters)`},
		{`{"fixed": {"by": "json"}}`, ""},
		{`{"fixed": {"by": "json", "original": "` + strings.Repeat("cd", 32) + `"}}`, ""},
		{`{"fixed": "json"}`, `metadata "fixed" is a string ("json"); tract reads it as an object`},
		{`{"fixed": {"by": 1}}`, `metadata "fixed": "by" is a number; tract reads it as a string`},
		{`{"fixed": {"by": "json", "original": "abc"}}`, `metadata "fixed": "original" is a string ("abc"); tract reads it as a full commit hash (64 hex characters)`},
		{`{"task": "03-01:task-3"}`, ""},
		{`{"task": 3}`, `metadata "task" is a number (3); tract reads it as a string`},
		{`{"failure": {"attempt": 1, "timestamp": "2026-03-01T12:00:00Z", "failure_type": "timeout", "error": "slow", "exit_code": 1}}`, ""},
		{`{"failure": "timeout"}`, `metadata "failure" is a string ("timeout"); tract reads it as an object`},
		{`{"failure": {"exit_code": "1"}}`, `metadata "failure": "exit_code" is a string; tract reads it as a whole number`},
		{`{"failure": {"timestamp": 5}}`, `metadata "failure": "timestamp" is a number (5); tract reads it as a time (an RFC 3339 string)`},
		{`{"failure": {"timestamp": "yesterday"}}`, `metadata "failure": "timestamp" is a string ("yesterday"); tract reads it as a time (an RFC 3339 string)`},
		{`{"failure": {"failure_type": ["timeout"]}}`, `metadata "failure": "failure_type" is an array; tract reads it as a string`},
		{`{"validators": ["json", "cmd:go test ./..."]}`, ""},
		{`{"validators": "json"}`, `metadata "validators" is a string ("json"); tract reads it as an array of strings`},
		{`{"validators": [1]}`, `metadata "validators" is an array; tract reads it as an array of strings`},
		{`{"weight": 0}`, ""},
		{`{"weight": 1}`, ""},
		{`{"weight": 0.5}`, `metadata "weight" is a number (0.5); tract reads it as 0 or 1`},
		{`{"weight": true}`, `metadata "weight" is a boolean (true); tract reads it as 0 or 1`},
		{`{"pinned": "x", "attempt": "y"}`, `metadata "attempt" is a string ("y")`},
		{`{"source": "anything", "n": [1, {"pinned": "nested keys are the caller's"}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.meta, func(t *testing.T) {
			meta, err := dag.CanonicalMeta([]byte(tt.meta))
			if !assert.NoError(t, err) {
				return
			}

			err = record.Check(meta)

			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			var mte *record.MetaTypeError
			if assert.ErrorAs(t, err, &mte) {
				assert.NotEmpty(t, mte.Key)
			}
			assert.ErrorIs(t, err, dag.ErrInvalidMeta)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// A shape given in metadata must be a message object without a role.
func TestCheck_Shape(t *testing.T) {
	tests := []struct {
		meta string
		want string
	}{
		{`{"shape": {"name": "bob"}}`, ""},
		{`{"shape": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}`, ""},
		{`{"shape": "x"}`, `metadata "shape" is a string ("x"); tract reads it as an object`},
		{`{"shape": {"role": "user"}}`, `metadata "shape" is an object; tract reads it as a message object without role (it has one)`},
		{`{"shape": {"tool_calls": 3}}`, `metadata "shape" is an object; tract reads it as a message object without role`},
	}
	for _, tt := range tests {
		t.Run(tt.meta, func(t *testing.T) {
			err := record.Check([]byte(tt.meta))
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestKeys_SortedUniqueAndDescribed(t *testing.T) {
	keys := record.Keys()
	for i, k := range keys {
		assert.NotEmpty(t, k.Want, k.Name)
		assert.NotEmpty(t, k.Doc, k.Name)
		if i > 0 {
			assert.Less(t, keys[i-1].Name, k.Name, "Keys are sorted by name, each once")
		}
	}
}

func TestField(t *testing.T) {
	meta := []byte(`{"attempt":2,"failure":{"attempt":2,"error":"bad"},"task":"t-1"}`)

	n, ok := record.Field[int](meta, record.KeyAttempt)
	assert.True(t, ok)
	assert.Equal(t, 2, n)
	f, ok := record.Field[record.Failure](meta, record.KeyFailure)
	assert.True(t, ok)
	assert.Equal(t, "bad", f.Error)
	_, ok = record.Field[int](meta, record.KeyTask)
	assert.False(t, ok, "a value of another type")
	_, ok = record.Field[string](meta, record.KeyModel)
	assert.False(t, ok, "a missing key")
	_, ok = record.Field[string](nil, record.KeyModel)
	assert.False(t, ok, "no metadata")
}

func TestPinned(t *testing.T) {
	assert.True(t, record.Pinned([]byte(`{"pinned":true}`)))
	assert.False(t, record.Pinned([]byte(`{"pinned":false}`)))
	assert.False(t, record.Pinned([]byte(`{"pinned":"true"}`)))
	assert.False(t, record.Pinned([]byte(`{"x":{"pinned":true}}`)), "nested keys are the caller's")
	assert.False(t, record.Pinned(nil))
}

func TestWithShape(t *testing.T) {
	shape := []byte(`{"name":"bob"}`)

	got, err := record.WithShape(nil, shape)
	assert.NoError(t, err)
	assert.JSONEq(t, `{"shape":{"name":"bob"}}`, string(got))

	got, err = record.WithShape([]byte(`{"z":1,"a":2}`), shape)
	assert.NoError(t, err)
	assert.Equal(t, `{"a":2,"shape":{"name":"bob"},"z":1}`, string(got), "canonical: keys sorted")
	back, err := record.Shape(got)
	assert.NoError(t, err)
	assert.JSONEq(t, string(shape), string(back))

	_, err = record.WithShape([]byte(`{"shape":{}}`), shape)
	assert.ErrorIs(t, err, dag.ErrInvalidMeta, "a shape given twice")
}

func TestErrorLine(t *testing.T) {
	assert.Equal(t, "first", record.ErrorLine("\n  first\nsecond"))
	long := record.ErrorLine(strings.Repeat("x", 300))
	assert.Equal(t, 200, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
}
