package dag_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
)

func TestCanonicalMeta_Canonicalizes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"sorted keys", `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"nested keys sorted", `{"z":{"y":1,"x":[{"d":1,"c":2}]},"a":null}`, `{"a":null,"z":{"x":[{"c":2,"d":1}],"y":1}}`},
		{"white space removed", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" : \"x y\" }\n", `{"a":[1,2],"b":"x y"}`},
		{"numbers kept as written", `{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567890}`, `{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567890}`},
		{"no HTML escaping", `{"a":"<b> & </b>"}`, `{"a":"<b> & </b>"}`},
		{"escapes decoded", `{"a":"\u00e9\u003c"}`, `{"a":"é<"}`},
		{"unicode kept", `{"日本":"🚀"}`, `{"日本":"🚀"}`},
		{"booleans", `{"ok":true,"no":false}`, `{"no":false,"ok":true}`},
		{"duplicate keys keep the last", `{"a":1,"a":2}`, `{"a":2}`},
		{"already canonical", `{"a":1}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dag.CanonicalMeta([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			again, err := dag.CanonicalMeta(got)
			require.NoError(t, err)
			assert.Equal(t, got, again, "canonical form is a fixed point")
		})
	}
}

func TestCanonicalMeta_EmptyGivesNil(t *testing.T) {
	for _, in := range []string{"", "   ", "\n", "{}", " { } "} {
		got, err := dag.CanonicalMeta([]byte(in))
		require.NoError(t, err, "%q", in)
		assert.Nil(t, got, "%q", in)
	}
}

func TestCanonicalMeta_RejectsNonObjects(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"array", `[1,2]`, "got an array"},
		{"string", `"x"`, "got a string"},
		{"null", `null`, "got null"},
		{"number", `42`, "got a number"},
		{"boolean", `true`, "got a boolean"},
		{"trailing object", `{"a":1}{"b":2}`, "trailing data"},
		{"trailing garbage", `{"a":1} x`, "trailing data"},
		{"unterminated", `{"a":1`, "unexpected EOF"},
		{"not JSON", `{a:1}`, "invalid character"},
		{"invalid UTF-8 in value", "{\"a\":\"\xff\"}", "not valid UTF-8"},
		{"invalid UTF-8 in key", "{\"\xc3\x28\":1}", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dag.CanonicalMeta([]byte(tt.in))
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, dag.ErrInvalidMeta)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestMetaFromMap_GivesCanonicalJSON(t *testing.T) {
	got, err := dag.MetaFromMap(map[string]any{"b": 1, "a": []string{"<x>"}})
	require.NoError(t, err)
	assert.Equal(t, `{"a":["<x>"],"b":1}`, string(got))

	got, err = dag.MetaFromMap(nil)
	require.NoError(t, err)
	assert.Nil(t, got)

	_, err = dag.MetaFromMap(map[string]any{"f": func() {}})
	assert.ErrorIs(t, err, dag.ErrInvalidMeta)
}

func TestCommit_MetaMapKeepsNumbersExact(t *testing.T) {
	c := &dag.Commit{Meta: []byte(`{"big":12345678901234567890,"f":1.50}`)}
	m, err := c.MetaMap()
	require.NoError(t, err)
	assert.Equal(t, json.Number("12345678901234567890"), m["big"])
	assert.Equal(t, json.Number("1.50"), m["f"])

	m, err = (&dag.Commit{}).MetaMap()
	require.NoError(t, err)
	assert.Nil(t, m)
}

func TestValidateText(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty", "", "the text is empty"},
		{"invalid UTF-8", "abc\xff", "not valid UTF-8 (byte 3)"},
		{"truncated rune", "\xe6\x97", "not valid UTF-8 (byte 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := dag.ValidateText(tt.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, dag.ErrInvalidText)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
	for _, ok := range []string{"x", " ", "日本語 🚀", "line\nline"} {
		assert.NoError(t, dag.ValidateText(ok), "%q", ok)
	}
}

func TestParseKindAndRole(t *testing.T) {
	for _, k := range []dag.Kind{dag.KindMessage, dag.KindSteering, dag.KindSummary, dag.KindNote, dag.KindError} {
		got, err := dag.ParseKind(string(k))
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	for _, r := range []dag.Role{dag.RoleSystem, dag.RoleUser, dag.RoleAssistant, dag.RoleTool} {
		got, err := dag.ParseRole(string(r))
		require.NoError(t, err)
		assert.Equal(t, r, got)
	}
	_, err := dag.ParseKind("Message")
	assert.ErrorContains(t, err, "use one of message, steering, summary, note, error")
	_, err = dag.ParseRole("bot")
	assert.ErrorContains(t, err, "use one of system, user, assistant, tool")
}

func FuzzCanonicalMeta(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":2}`, `{"z":{"y":1,"x":[{"d":1,"c":2}]},"a":null}`, " {\n\t\"a\" : [ 1 , 2 ] }\n",
		`{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567890}`, `{"a":"<b> & </b>"}`, `{"a":"\u00e9\ud800"}`,
		`{"a":1,"a":2}`, `{}`, "", " ", `[]`, `null`, `"x"`, `{"a":1} {"b":2}`, `{"a":1}x`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		canon, err := dag.CanonicalMeta(raw)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, dag.ErrInvalidMeta) {
				t.Fatalf("error %v does not wrap ErrInvalidMeta", err)
			}
			return
		}
		// The canonical form says what the input says.
		if !reflect.DeepEqual(decodeJSON(t, raw), decodeJSON(t, canon)) {
			t.Fatalf("%q canonicalised to %q, which means something else", raw, canon)
		}
		if canon == nil {
			return // no metadata: white space or an empty object
		}
		if !utf8.Valid(canon) || canon[0] != '{' {
			t.Fatalf("canonical form %q is not a UTF-8 JSON object", canon)
		}
		again, err := dag.CanonicalMeta(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical form %q is not a fixed point: %q, %v", canon, again, err)
		}
		c := dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Meta: canon}
		if err := c.Verify(); err != nil {
			t.Fatalf("a commit with metadata %q does not verify: %v", canon, err)
		}
		m, err := c.MetaMap()
		if err != nil || len(m) == 0 {
			t.Fatalf("MetaMap of %q: %v, %v", canon, m, err)
		}
		if fromMap, err := dag.MetaFromMap(m); err != nil || !bytes.Equal(fromMap, canon) {
			t.Fatalf("MetaFromMap(MetaMap(%q)) = %q, %v", canon, fromMap, err)
		}
	})
}

// decodeJSON decodes a JSON value as CanonicalMeta reads it; white space
// alone and an empty object both decode to nil.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return v
}
