package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/fuzzcheck"
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

// writeSchema writes schema to name in a temporary directory and returns
// the validator of that file.
func writeSchema(t *testing.T, dir, name, schema string) (Validator, error) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(schema), 0o644))
	return Schema(path)
}

// Each keyword's failure is worded with the pointer of the value it
// concerns, including failures inside "$ref"s, alternatives and
// conditionals.
func TestSchemaValidator_Diagnoses(t *testing.T) {
	tests := []struct {
		name, schema, answer, want string
	}{
		{"enum", `{"enum": ["red", "green"]}`, `"blue"`, "at root: value must be one of 'red', 'green'"},
		{"const", `{"const": {"a": 1}}`, `{"a": 2}`, `at root: value must be {"a":1}`},
		{"number bounds", `{"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 10, "multipleOf": 0.5}}`, `[0, 11, 1.25]`,
			"at '/0': exclusiveMinimum: got 0, want 0; at '/1': maximum: got 11, want 10; at '/2': multipleOf: got 1.25, want 0.5"},
		{"string length in characters", `{"maxLength": 2}`, `"été"`, "at root: maxLength: got 3, want 2"},
		{"several types", `{"type": ["string", "null"]}`, `1`, "at root: got number, want string or null"},
		{"array bounds and uniqueness", `{"minItems": 4, "uniqueItems": true}`, `[1, 2, 1.0]`,
			"at root: items at 0 and 2 are equal; at root: minItems: got 3, want 4"},
		{"prefixItems and no more items", `{"prefixItems": [{"type": "string"}], "items": false}`, `[1, 2]`,
			"at root: got 2 items, want at most 1; at '/0': got number, want string"},
		{"contains", `{"contains": {"type": "string"}}`, `[1]`, "at root: no items match the 'contains' schema"},
		{"maxContains", `{"contains": {"type": "string"}, "maxContains": 1}`, `["a", "b"]`,
			"at root: maxContains: got 2 items matching 'contains', want 1"},
		{"object bounds", `{"maxProperties": 1, "required": ["a", "b", "c"]}`, `{"a": 1, "x": 2}`,
			"at root: maxProperties: got 2, want 1; at root: missing properties 'b', 'c'"},
		{"dependentRequired", `{"dependentRequired": {"card": ["cvv"]}}`, `{"card": "4111"}`, "at root: property 'cvv' required, if 'card' exists"},
		{"dependentSchemas", `{"dependentSchemas": {"card": {"properties": {"cvv": {"type": "string"}}}}}`, `{"card": 1, "cvv": 123}`,
			"at '/cvv': got number, want string"},
		{"patternProperties", `{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}`, `{"x-a": 1, "y": 2}`,
			"at root: additional properties 'y' not allowed; at '/x-a': got number, want string"},
		{"additionalProperties schema", `{"properties": {"a": true}, "additionalProperties": {"type": "integer"}}`, `{"a": "s", "b": "t"}`,
			"at '/b': got string, want integer"},
		{"propertyNames", `{"propertyNames": {"pattern": "^[a-z]+$"}}`, `{"ok": 1, "Bad": 2}`,
			"at root: property name 'Bad': 'Bad' does not match pattern '^[a-z]+$'"},
		{"false schema", `{"properties": {"secret": false}}`, `{"secret": 1}`, "at '/secret': not allowed (false schema)"},
		{"$ref into $defs", `{"$defs": {"pos": {"type": "integer", "minimum": 1}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}`, `{"n": 0}`,
			"at '/n': minimum: got 0, want 1"},
		{"$ref to an anchor", `{"$defs": {"pos": {"$anchor": "pos", "minimum": 1}}, "items": {"$ref": "#pos"}}`, `[1, 0]`,
			"at '/1': minimum: got 0, want 1"},
		{"$ref beside other keywords", `{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 1}`, `"ab"`,
			"at root: maxLength: got 2, want 1"},
		{"recursive $ref", `{"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}`,
			`{"name": "a", "children": [{"name": 1}, {"children": [{"name": false}]}]}`,
			"at '/children/0/name': got number, want string; at '/children/1/children/0/name': got boolean, want string"},
		{"allOf", `{"allOf": [{"required": ["a"]}, {"required": ["b"]}]}`, `{}`, "at root: missing property 'a'; at root: missing property 'b'"},
		{"oneOf, none", `{"oneOf": [{"type": "string"}, {"type": "integer"}]}`, `1.5`,
			"at root: 'oneOf' failed, none matched; at root: got number, want integer; at root: got number, want string"},
		{"oneOf, two", `{"oneOf": [{"type": "number"}, {"type": "integer"}]}`, `1`, "at root: 'oneOf' failed, subschemas 0, 1 matched"},
		{"not", `{"not": {"const": "x"}}`, `"x"`, "at root: 'not' failed"},
		{"if then", `{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}}`, `{"kind": "a"}`,
			"at root: missing property 'a'"},
		{"if else", `{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}}`, `{"kind": "c"}`,
			"at root: missing property 'b'"},
		{"unevaluatedProperties", `{"allOf": [{"properties": {"a": true}}], "properties": {"b": true}, "unevaluatedProperties": false}`, `{"a": 1, "b": 2, "c": 3, "d": 4}`,
			"at root: unevaluated properties 'c', 'd' not allowed"},
		{"unevaluatedItems", `{"prefixItems": [true], "unevaluatedItems": {"type": "string"}}`, `[1, 2, "x"]`, "at '/1': got number, want string"},
		{"pointer escapes", `{"properties": {"a/b": {"properties": {"m~n": {"type": "string"}}}}}`, `{"a/b": {"m~n": 1}}`,
			"at '/a~1b/m~0n': got number, want string"},
		{"draft-07 ignores keywords beside $ref", `{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "maxLength": 1}`, `3`,
			"at root: got number, want string"},
		{"draft-07 items and additionalItems", `{"$schema": "http://json-schema.org/draft-07/schema", "items": [{"type": "string"}], "additionalItems": false}`, `[1, 2]`,
			"at root: got 2 items, want at most 1; at '/0': got number, want string"},
		{"draft-07 dependencies", `{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, `{"a": 1, "c": 2}`,
			"at root: missing property 'd'; at root: property 'b' required, if 'a' exists"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := writeSchema(t, dir, fmt.Sprintf("s%d.json", i), tt.schema)
			require.NoError(t, err)
			ok, diagnosis, err := v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.False(t, ok)
			_, got, _ := strings.Cut(diagnosis, ": ")
			assert.Equal(t, tt.want, got, diagnosis)
		})
	}
}

// Drafts: 2020-12 when "$schema" is absent, 2020-12 and draft-07 however
// spelled; any other is refused when the spec is parsed, never validated
// by the wrong rules.
func TestSchemaValidator_Drafts(t *testing.T) {
	dir := t.TempDir()
	accepted := []string{
		"",
		"https://json-schema.org/draft/2020-12/schema",
		"https://json-schema.org/draft/2020-12/schema#",
		"http://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#",
		"http://json-schema.org/draft-07/schema",
		"https://json-schema.org/draft-07/schema#",
	}
	for i, draft := range accepted {
		t.Run("accepts "+draft, func(t *testing.T) {
			schema := `{"type": "integer"}`
			if draft != "" {
				schema = fmt.Sprintf(`{"$schema": %q, "type": "integer"}`, draft)
			}
			v, err := writeSchema(t, dir, fmt.Sprintf("ok%d.json", i), schema)
			require.NoError(t, err)
			ok, diagnosis, err := v.Validate(t.Context(), `"x"`)
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, "1 schema violation: at root: got string, want integer", diagnosis)
		})
	}
	refused := []struct{ schema, reason string }{
		{"http://json-schema.org/draft-04/schema#", `"$schema" of the schema ("http://json-schema.org/draft-04/schema#") is draft-04, which this validator does not support: use draft 2020-12 (the default when "$schema" is absent) or draft-07`},
		{"http://json-schema.org/draft-06/schema#", "is draft-06, which this validator does not support"},
		{"https://json-schema.org/draft/2019-09/schema", "is draft 2019-09, which this validator does not support"},
		{"http://json-schema.org/schema#", "is the unversioned latest draft, which this validator does not support"},
		{"https://example.com/my-meta-schema", "names no JSON Schema draft this validator knows (a custom meta-schema?)"},
	}
	for i, tt := range refused {
		t.Run("refuses "+tt.schema, func(t *testing.T) {
			_, err := writeSchema(t, dir, fmt.Sprintf("no%d.json", i), fmt.Sprintf(`{"$schema": %q, "type": "integer"}`, tt.schema))
			se, ok := errors.AsType[*SpecError](err)
			require.True(t, ok, "want *SpecError, got %v", err)
			assert.Contains(t, se.Reason, tt.reason)
		})
	}

	t.Run("refuses another draft inside a document", func(t *testing.T) {
		_, err := writeSchema(t, dir, "mixed.json", `{"$defs": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Error(), `a subschema at "/$defs/a" declares draft-07 ("http://json-schema.org/draft-07/schema#") in a schema of draft 2020-12: one schema must use one draft`)
	})
	t.Run("a referenced file without $schema is of the schema's draft", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pair.json"), []byte(`{"items": [{"type": "string"}], "additionalItems": false}`), 0o644))
		v, err := writeSchema(t, dir, "uses-pair.json", `{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"p": {"$ref": "pair.json"}}}`)
		require.NoError(t, err)
		ok, diagnosis, err := v.Validate(t.Context(), `{"p": [1, 2]}`)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, "2 schema violations: at '/p': got 2 items, want at most 1; at '/p/0': got number, want string", diagnosis)
	})
	t.Run("refuses a referenced file of the other draft", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "seven.json"), []byte(`{"$schema": "http://json-schema.org/draft-07/schema#"}`), 0o644))
		_, err := writeSchema(t, dir, "uses-seven.json", `{"$ref": "seven.json"}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Reason, "seven.json that the schema refers to is draft-07, but the schema is draft 2020-12: the files of one schema must use one draft")
	})
	t.Run("refuses a referenced file of another draft", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "old.json"), []byte(`{"$schema": "http://json-schema.org/draft-04/schema#"}`), 0o644))
		_, err := writeSchema(t, dir, "uses-old.json", `{"$ref": "old.json"}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Reason, `"$schema" of the schema it refers to at file://`)
		assert.Contains(t, se.Reason, "old.json")
		assert.Contains(t, se.Reason, "is draft-04")
	})
	// "format" is an annotation, not an assertion, in both drafts.
	t.Run("format is not checked", func(t *testing.T) {
		v, err := writeSchema(t, dir, "format.json", `{"$schema": "http://json-schema.org/draft-07/schema#", "format": "date"}`)
		require.NoError(t, err)
		ok, _, err := v.Validate(t.Context(), `"not a date"`)
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

// A "$ref" may name a local file; anything else is refused when the spec
// is parsed, without a network request.
func TestSchemaValidator_References(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "defs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "defs", "address.json"),
		[]byte(`{"type": "object", "required": ["city"], "properties": {"zip": {"$ref": "zip.json"}}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "defs", "zip.json"), []byte(`{"type": "string", "pattern": "^[0-9]{5}$"}`), 0o644))

	t.Run("local files", func(t *testing.T) {
		v, err := writeSchema(t, dir, "person.json", `{"properties": {"home": {"$ref": "defs/address.json"}}}`)
		require.NoError(t, err)
		ok, diagnosis, err := v.Validate(t.Context(), `{"home": {"zip": "1234"}}`)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, "2 schema violations: at '/home': missing property 'city'; at '/home/zip': '1234' does not match pattern '^[0-9]{5}$'", diagnosis)
	})

	t.Run("a local file that is not JSON", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "defs", "broken.json"), []byte(`{"type":`), 0o644))
		_, err := writeSchema(t, dir, "uses-broken.json", `{"$ref": "defs/broken.json"}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Reason, "defs/broken.json that the schema refers to is not a valid JSON Schema")
		assert.ErrorContains(t, err, "not JSON: unexpected EOF")
	})

	t.Run("a missing local file", func(t *testing.T) {
		_, err := writeSchema(t, dir, "dangling.json", `{"$ref": "defs/nope.json"}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Reason, "cannot read the schema file file://")
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})

	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"type": "string"}`))
	}))
	defer srv.Close()
	for _, ref := range []string{
		srv.URL + "/name.json",
		"https://json-schema.org/draft/2020-12/schema",
	} {
		t.Run("refuses "+ref, func(t *testing.T) {
			_, err := writeSchema(t, dir, "remote.json", fmt.Sprintf(`{"properties": {"name": {"$ref": %q}}}`, ref))
			se, ok := errors.AsType[*SpecError](err)
			require.True(t, ok, "want *SpecError, got %v", err)
			assert.Equal(t, "the schema refers to "+ref+", which is not a local file: a schema may refer only to local files (validation never uses the network)", se.Reason)
		})
	}
	t.Run("refuses a relative reference under a remote $id", func(t *testing.T) {
		_, err := writeSchema(t, dir, "remote-id.json", `{"$id": "https://example.com/s.json", "$ref": "other.json"}`)
		se, ok := errors.AsType[*SpecError](err)
		require.True(t, ok, "want *SpecError, got %v", err)
		assert.Contains(t, se.Reason, "the schema refers to https://example.com/other.json, which is not a local file")
	})
	assert.Zero(t, requests.Load(), "no request reached the server")
}

// Schemas the library would accept but could not mean what they say, and
// documents that are not schemas, are refused with the keyword and where.
func TestSchemaValidator_NotASchema(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`[]`, "a schema is a JSON object or a boolean, not an array"},
		{`{"type": "strnig"}`, `"type" at the root is "strnig", want one of array, boolean, integer, null, number, object, string, or an array of them`},
		{`{"properties": {"a": {"minLength": -1}}}`, `"minLength" at "/properties/a" is -1, want a non-negative integer`},
		{`{"items": 5}`, `"items" at the root is 5, want a schema (an object or a boolean)`},
		{`{"anyOf": []}`, `"anyOf" at the root is [], want a non-empty array of schemas`},
		{`{"required": "name"}`, `"required" at the root is "name", want an array of property names`},
		{`{"minimum": "5"}`, `"minimum" at the root is "5", want a number`},
		{`{"multipleOf": 0}`, `"multipleOf" at the root is 0, want a number greater than 0`},
		{`{"pattern": "("}`, "missing closing )"},
		{`{"$ref": "#/$defs/nope"}`, "nope"},
		// The library would recurse until the stack overflows.
		{`{"$ref": "#"}`, "the schema refers back to itself without going into a part of the value (# → #), so validating would never end"},
		{`{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}`,
			"(#/$defs/a → #/$defs/a/allOf/0 → #/$defs/b → #/$defs/a)"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			_, err := writeSchema(t, dir, fmt.Sprintf("s%d.json", i), tt.schema)
			se, ok := errors.AsType[*SpecError](err)
			require.True(t, ok, "want *SpecError, got %v", err)
			assert.Equal(t, "the file is not a valid JSON Schema", se.Reason)
			assert.ErrorContains(t, se, tt.want)
		})
	}
}

// One validator serves concurrent validations (a pipeline may run them in
// parallel); each gets the same diagnosis.
func TestSchemaValidator_Concurrent(t *testing.T) {
	v, err := Schema("testdata/person.schema.json")
	require.NoError(t, err)
	answer := `{"zeta": 1, "age": -1, "name": "", "tags": [1, "a", 2], "contact": 5}`
	_, want, err := v.Validate(t.Context(), answer)
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			_, got[i], _ = v.Validate(t.Context(), answer)
		})
	}
	wg.Wait()
	for _, g := range got {
		assert.Equal(t, want, g)
	}
}

// A new validator's first rejections, explained at once, share the
// compilations they make (run with -race): each gets the diagnosis a lone
// validation gives.
func TestSchemaValidator_ConcurrentFirstExplanations(t *testing.T) {
	answer := `{"id": "x", "status": "lost", "customer": {"name": "", "email": 5}, "items": [{"sku": "a", "qty": 0}], "note": 3, "zz": 1}`
	lone, err := Schema("testdata/order.schema.json")
	require.NoError(t, err)
	_, want, err := lone.Validate(t.Context(), answer)
	require.NoError(t, err)
	v, err := Schema("testdata/order.schema.json")
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			_, got[i], _ = v.Validate(t.Context(), answer)
		})
	}
	wg.Wait()
	for _, g := range got {
		assert.Equal(t, want, g)
	}
}

// BenchmarkSchemaValidator times compiling a schema (Schema) and
// validating an answer that passes and one that fails, whose diagnosis
// the validator explains.
func BenchmarkSchemaValidator(b *testing.B) {
	var items []string
	for i := range 20 {
		items = append(items, fmt.Sprintf(`{"sku": "sku-%d", "qty": 2, "price": 9.5, "tags": ["a", "b"]}`, i))
	}
	order := `{"id": "ord_abcd1234", "status": "paid", "customer": {"name": "Ada", "email": "ada@example.com"}, "items": [` +
		strings.Join(items, ", ") + `], "note": null, "discount": 0.1}`
	badOrder := strings.Replace(strings.Replace(order, `"qty": 2`, `"qty": 0`, 1), `"paid"`, `"lost"`, 1)
	cases := []struct{ name, path, valid, invalid string }{
		{"person", "testdata/person.schema.json",
			`{"name": "Ada", "age": 36, "tags": ["math"], "contact": null}`,
			`{"zeta": 1, "age": -1, "name": "x", "alpha": 2, "tags": ["a", 1, "b", 2, 3, 4, 5, 6, 7, 8, 9]}`},
		{"order", "testdata/order.schema.json", order, badOrder},
	}
	for _, c := range cases {
		b.Run(c.name+"/compile", func(b *testing.B) {
			for b.Loop() {
				if _, err := Schema(c.path); err != nil {
					b.Fatal(err)
				}
			}
		})
		v, err := Schema(c.path)
		require.NoError(b, err)
		for _, kind := range []string{"valid", "invalid"} {
			answer := c.valid
			if kind == "invalid" {
				answer = c.invalid
			}
			b.Run(c.name+"/"+kind, func(b *testing.B) {
				for b.Loop() {
					ok, _, err := v.Validate(b.Context(), answer)
					if err != nil || ok != (kind == "valid") {
						b.Fatal(ok, err)
					}
				}
			})
		}
	}
}

// FuzzSchemaValidator feeds schemas and answers to the schema validator:
// a schema is refused with a *SpecError worded for people, or the
// validator judges every answer without a run error, the same way twice,
// with a diagnosis exactly when it rejects.
func FuzzSchemaValidator(f *testing.F) {
	for _, path := range []string{"testdata/person.schema.json", "testdata/order.schema.json"} {
		schema, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(string(schema), `{"name": "Ada", "age": 36}`)
		f.Add(string(schema), `{"zeta": 1, "age": -1, "tags": [1, "a"], "customer": {"email": 5}, "items": [{}]}`)
	}
	for _, seed := range [][2]string{
		{`{"$ref": "#"}`, `1`},
		{`{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "items": {"$ref": "#/$defs/a"}}`, `[1]`},
		{`{"properties": {"c": {"items": {"$ref": "#"}}}, "required": ["n"]}`, `{"c": [{"c": [{}]}]}`},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false, "dependencies": {"a": ["b"]}}`, `[1, 2]`},
		{`{"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false, "oneOf": [{"required": ["a"]}, {"minProperties": 2}]}`, `{"a": 1, "b": 2}`},
		{`{"prefixItems": [{"const": 1}], "contains": {"type": "string"}, "minContains": 2, "unevaluatedItems": false, "uniqueItems": true}`, `[1, "a", "a"]`},
		{`{"if": {"type": "string"}, "then": {"maxLength": 1}, "else": {"not": {"type": "null"}}, "propertyNames": {"pattern": "^a"}}`, `null`},
		{`{"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer"}}, "items": {"$dynamicRef": "#n"}}`, `["x"]`},
		{`{"type": ["string", "null"], "enum": ["a", null, 1], "multipleOf": 0.1}`, `1`},
		{`{"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}, "maxProperties": 1}`, `{"xa": "1", "b": 2}`},
		{`{"type": "strnig"}`, `"x"`},
		{`{"$schema": "https://json-schema.org/draft/2019-09/schema"}`, `1`},
		{`[]`, `1`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schema, answer string) {
		if !fuzzSchemaIsLocal(schema) {
			return // a reference outside the document: do not read the machine's files
		}
		v, err := writeSchema(t, t.TempDir(), "s.json", schema)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if _, ok := errors.AsType[*SpecError](err); !ok {
				t.Fatalf("error %v is not a SpecError", err)
			}
			return
		}
		ok, diagnosis, err := v.Validate(t.Context(), answer)
		if err != nil {
			t.Fatalf("run error %v", err)
		}
		if ok != (diagnosis == "") {
			t.Fatalf("ok = %v with diagnosis %q", ok, diagnosis)
		}
		if !ok && json.Valid([]byte(answer)) && !strings.Contains(diagnosis, " schema violation") {
			t.Fatalf("diagnosis of JSON %q: %q", answer, diagnosis)
		}
		again, diagnosisAgain, err := v.Validate(t.Context(), answer)
		if err != nil || again != ok || diagnosisAgain != diagnosis {
			t.Fatalf("second run: %v %q %v, first: %v %q", again, diagnosisAgain, err, ok, diagnosis)
		}
	})
}

// fuzzSchemaIsLocal reports whether a fuzzed schema stays in its document:
// no "$id" (which could name a file) and every reference a fragment.
func fuzzSchemaIsLocal(schema string) bool {
	var v any
	if json.Unmarshal([]byte(schema), &v) != nil {
		return true // refused as not JSON
	}
	var local func(any) bool
	local = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "$id" {
					return false
				}
				if ref, ok := c.(string); ok && (k == "$ref" || k == "$dynamicRef") && !strings.HasPrefix(ref, "#") {
					return false
				}
				if !local(c) {
					return false
				}
			}
		case []any:
			for _, c := range v {
				if !local(c) {
					return false
				}
			}
		}
		return true
	}
	return local(v)
}

// A number no float64 holds is a diagnosis, for the model to fix, not an
// error that stops the turn.
func TestSchemaValidator_NumberOutOfRange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"type":"object","properties":{"age":{"type":"number"}}}`), 0o600))
	v, err := ParseSpec("schema:" + path)
	require.NoError(t, err)

	ok, diagnosis, err := v.Validate(context.Background(), `{"age": 1e400}`)

	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "the answer holds a number 1e400, out of the range of a 64-bit float", diagnosis)
}

func TestSchemaDocument(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}},"required":["items"],
		"$defs":{"item":{"type":"object","properties":{"price":{"type":"number"}},"required":["price"],"additionalProperties":false}}}`)
	v, err := SchemaDocument("Invoice", doc)
	require.NoError(t, err)
	assert.Equal(t, "Invoice", v.Name())

	tests := []struct {
		name, answer string
		want         string // "" means the answer passes
	}{
		{"valid", `{"items":[{"price":1},{"price":2.5}]}`, ""},
		{"not JSON", `{"items": [}`, "invalid JSON at line 1, column 12: invalid character '}' looking for beginning of value"},
		{"missing", `{}`, "1 schema violation: at root: missing property 'items'"},
		{"wrong type, through a $ref", `{"items":[{"price":1},{"price":2},{"price":"12"}]}`, "1 schema violation: at '/items/2/price': got string, want number"},
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

// A schema given as a document reads no file and no URL: a reference
// outside it is refused when it is built, as are documents that are not
// schemas.
func TestSchemaDocument_Refused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "item.json"), []byte(`{"type":"number"}`), 0o644))
	t.Chdir(dir)
	tests := []struct{ name, doc, want string }{
		{"a file", `{"$ref":"item.json"}`, `schema s: the schema refers to item.json, outside itself: a schema given as a document may refer only to its own parts`},
		{"a URL", `{"$ref":"https://example.com/item.json"}`, `schema s: the schema refers to https://example.com/item.json, outside itself`},
		{"not JSON", `{"type":`, `schema s is not JSON: `},
		{"not a schema", `[1]`, `schema s is not a valid JSON Schema: a schema is a JSON object or a boolean, not an array`},
		{"another draft", `{"$schema":"http://json-schema.org/draft-04/schema#"}`, `schema s is not a valid JSON Schema: "$schema" of the schema`},
		{"a misspelt type", `{"type":"strin"}`, `schema s is not a valid JSON Schema: "type" at the root is "strin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := SchemaDocument("s", []byte(tt.doc))
			require.Error(t, err)
			assert.Nil(t, v)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
