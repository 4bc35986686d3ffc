package retry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaValidator(t *testing.T) {
	v, err := Schema("testdata/person.schema.json")
	require.NoError(t, err)
	assert.Equal(t, "schema:testdata/person.schema.json", v.Name())

	tests := []struct {
		name, answer string
		want         string // "" means the answer passes
	}{
		{"valid", `{"name": "Ada", "age": 36, "tags": ["math"], "contact": null}`, ""},
		{"not JSON", `{"name": }`, "invalid JSON at line 1, column 10: invalid character '}' looking for beginning of value"},
		{"empty", ``, "answer is empty, expected a JSON value"},
		{"wrong type at root", `[]`, "1 schema violation: at root: got array, want object"},
		{"missing and too short", `{"name": ""}`, "2 schema violations: at root: missing property 'age'; at '/name': minLength: got 0, want 1"},
		{
			"every violation in pointer order",
			`{"zeta": 1, "age": -1, "name": "x", "alpha": 2, "tags": ["a", 1, "b", 2, 3, 4, 5, 6, 7, 8, 9]}`,
			"11 schema violations: at root: additional properties 'alpha', 'zeta' not allowed; " +
				"at '/age': minimum: got -1, want 0; " +
				"at '/tags/1': got number, want string; at '/tags/3': got number, want string; " +
				"at '/tags/4': got number, want string; at '/tags/5': got number, want string; " +
				"at '/tags/6': got number, want string; at '/tags/7': got number, want string; " +
				"at '/tags/8': got number, want string; at '/tags/9': got number, want string; " +
				"at '/tags/10': got number, want string",
		},
		{
			"anyOf reports the alternatives",
			`{"name": "x", "age": 1, "contact": 5}`,
			"3 schema violations: at '/contact': 'anyOf' failed; at '/contact': got number, want null; at '/contact': got number, want string",
		},
		{"pattern", `{"name": "x", "age": 1, "email": "nope"}`, "1 schema violation: at '/email': 'nope' does not match pattern '^[^@]+@[^@]+$'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diagnosis, err := v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want == "", ok)
			assert.Equal(t, tt.want, diagnosis)
		})
	}
}

// The library walks objects in map order; the diagnosis must not.
func TestSchemaValidator_DiagnosisIsDeterministic(t *testing.T) {
	v, err := Schema("testdata/person.schema.json")
	require.NoError(t, err)
	answer := `{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "age": "x", "name": 1, "tags": [1, 2, 3]}`
	_, first, err := v.Validate(t.Context(), answer)
	require.NoError(t, err)
	for range 50 {
		_, again, err := v.Validate(t.Context(), answer)
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
}

func TestSchemaValidator_ConfigurationErrors(t *testing.T) {
	tests := []struct {
		path   string
		reason string
	}{
		{"testdata/no-such.schema.json", "cannot read the schema file"},
		{"testdata/not-json.schema.json", "the schema file is not JSON"},
		{"testdata/not-a-schema.json", "the file is not a valid JSON Schema"},
		{"", "schema needs a file path"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := Schema(tt.path)
			se, ok := errors.AsType[*SpecError](err)
			require.True(t, ok, "want *SpecError, got %v", err)
			assert.Equal(t, "schema:"+tt.path, se.Spec)
			assert.Contains(t, se.Reason, tt.reason)
		})
	}
	_, err := Schema("testdata/no-such.schema.json")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestSchemaValidator_BaseDir(t *testing.T) {
	dir := t.TempDir()
	schema := `{"type": "object", "required": ["ok"]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(schema), 0o644))

	v, err := ParseSpec("schema:s.json", WithBaseDir(dir))
	require.NoError(t, err)
	assert.Equal(t, "schema:s.json", v.Name(), "the name keeps the path as written")
	ok, diagnosis, err := v.Validate(t.Context(), `{}`)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "1 schema violation: at root: missing property 'ok'", diagnosis)

	_, err = ParseSpec("schema:s.json")
	assert.ErrorIs(t, err, fs.ErrNotExist, "without the base dir the path is relative to the working directory")
}

func TestSchemaPointerOrder(t *testing.T) {
	assert.Equal(t, "root", displayPointer(nil))
	assert.Equal(t, "'/a~1b/m~0n/0'", displayPointer([]string{"a/b", "m~n", "0"}))
	assert.Negative(t, comparePointers([]string{"tags", "2"}, []string{"tags", "10"}))
	assert.Negative(t, comparePointers([]string{"tags"}, []string{"tags", "0"}))
	assert.Negative(t, comparePointers([]string{"9"}, []string{"a"}))
	assert.Zero(t, comparePointers([]string{"x", "1"}, []string{"x", "1"}))
}
