package retry

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepairJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" means no repair
	}{
		// Valid JSON is never changed.
		{"object", `{"a": 1}`, ""},
		{"scalar", `42`, ""},
		{"string", `"x, }"`, ""},
		{"white space around", "\n {\"a\": [1]}\n", ""},
		{"empty", ``, ""},
		{"blank", " \n", ""},

		// Prose and fences around one object or array.
		{"prose before", `Here you go: {"a": 1}`, `{"a": 1}`},
		{"prose after", `{"a": 1} Hope this helps!`, `{"a": 1}`},
		{"prose around an array", "Sure.\n[1, 2, 3]\nDone.", `[1, 2, 3]`},
		{"fence with info string", "```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"fence without info string", "```\n[true]\n```", `[true]`},
		{"fence and prose", "Here it is:\n```json\n{\"a\": \"b\"}\n```\nAnything else?", `{"a": "b"}`},
		{"fenced scalar", "```json\n42\n```", `42`},
		{"fenced string", "```\n\"hello\"\n```", `"hello"`},
		{"nested value kept whole", `Result: {"a": {"b": [1, {"c": null}]}}.`, `{"a": {"b": [1, {"c": null}]}}`},
		{"brackets inside strings", `Here: {"a": "}]{[", "b": "\"}"}`, `{"a": "}]{[", "b": "\"}"}`},
		{"multi-line value keeps its layout", "Here:\n{\n  \"a\": 1\n}\n", "{\n  \"a\": 1\n}"},

		// Trailing commas.
		{"trailing comma in object", `{"a": 1,}`, `{"a": 1}`},
		{"the issue's answer", `Here you go: {"a": 1,}`, `{"a": 1}`},
		{"trailing comma in array", `[1, 2,]`, `[1, 2]`},
		{"trailing comma before white space", "{\n  \"a\": 1,\n}", "{\n  \"a\": 1\n}"},
		{"trailing commas nested", `{"a": [1, "x",], "b": {"c": true,},}`, `{"a": [1, "x"], "b": {"c": true}}`},
		{"comma in a string kept", `{"a": "1,}",}`, `{"a": "1,}"}`},
		{"trailing comma in a fence", "```json\n[\"a\",]\n```", `["a"]`},

		// A value cut short, closed only when only closers are missing.
		{"missing brace after array", `{"a": [1, 2]`, `{"a": [1, 2]}`},
		{"missing brace after string", `{"a": "b"`, `{"a": "b"}`},
		{"missing closers after literal", `[[true`, `[[true]]`},
		{"missing closers after object", `[{"a": null}`, `[{"a": null}]`},
		{"cut in an unclosed fence", "```json\n{\"a\": [\"x\"]", `{"a": ["x"]}`},
		{"prose then a cut value", `Here: {"a": {"b": "c"}`, `{"a": {"b": "c"}}`},
		{"trailing comma then closers", `{"a": [1,]`, `{"a": [1]}`},

		// No repair: a guess, another value or a change of meaning.
		{"cut after a number", `[1, 2`, ""},
		{"cut in a number", `{"a": 12`, ""},
		{"unterminated string", `{"a": "b`, ""},
		{"unterminated key", `{"a": 1, "b`, ""},
		{"cut after a key", `{"a": 1, "b"`, ""},
		{"cut after a colon", `{"a":`, ""},
		{"cut after a comma", `[1, 2,`, ""},
		{"cut in a literal", `[tru`, ""},
		{"two values", `{"a": 1} {"b": 2}`, ""},
		{"two values with prose", `Either {"a": 1} or {"a": 2}`, ""},
		{"a bracket in the prose before", `See [1]: {"a": 1}`, ""},
		{"a closer after the value", `{"a": {"b": 1}}, "c": 2}`, ""},
		{"extra closer", `{"a": 1}}`, ""},
		{"mismatched closer", `{"a": [1}`, ""},
		{"double comma", `[1,,]`, ""},
		{"leading comma", `[,1]`, ""},
		{"lone comma", `[,]`, ""},
		{"single quotes", `{'a': 1}`, ""},
		{"unquoted key", `{a: 1}`, ""},
		{"prose only", `I cannot answer that.`, ""},
		{"bare scalar in prose", `The answer is 42`, ""},
		{"two fences", "```json\n{\"a\": 1}\n```\nor\n```json\n{\"a\": 2}\n```", ""},
		{"fence and a value outside it", "Use {\"k\": 0}:\n```json\n{\"a\": 1}\n```", ""},
		{"fence of prose", "```\nno json here\n```", ""},
		{"control character in a string", "Here: {\"a\": \"x\ty\",}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RepairJSON(tt.in)
			if tt.want == "" {
				assert.False(t, ok, "repaired to %q", got)
				assert.Equal(t, tt.in, got, "a text it does not repair comes back as given")
				return
			}
			require.True(t, ok, "not repaired")
			assert.Equal(t, tt.want, got)
			assert.True(t, json.Valid([]byte(got)))
		})
	}
}

// A repair keeps every value: the repaired text decodes to what the
// text, written as intended, does.
func TestRepairJSON_KeepsValues(t *testing.T) {
	for in, intended := range map[string]string{
		`Here you go: {"a": 1,}`:                        `{"a": 1}`,
		"```json\n{\"n\": 1.5e3, \"s\": \"é\\n\"}\n```": `{"n": 1.5e3, "s": "é\n"}`,
		`{"a": [{"b": [null, false]}]`:                  `{"a": [{"b": [null, false]}]}`,
	} {
		got, ok := RepairJSON(in)
		require.True(t, ok, in)
		var g, w any
		require.NoError(t, json.Unmarshal([]byte(got), &g))
		require.NoError(t, json.Unmarshal([]byte(intended), &w))
		assert.Equal(t, w, g, in)
	}
}

func TestFixJSONValidator(t *testing.T) {
	ctx := context.Background()
	v := FixJSON()
	assert.Equal(t, "json", v.Name())

	vd, err := Check(ctx, v, `{"a": 1}`)
	require.NoError(t, err)
	assert.Equal(t, Verdict{OK: true}, vd, "valid JSON passes unfixed")

	vd, err = Check(ctx, v, `Here you go: {"a": 1,}`)
	require.NoError(t, err)
	assert.Equal(t, Verdict{OK: true, Fixed: `{"a": 1}`, FixedBy: "json",
		Diagnosis: "invalid JSON at line 1, column 1: invalid character 'H' looking for beginning of value"}, vd)
	ok, diagnosis, err := v.Validate(ctx, `Here you go: {"a": 1,}`)
	require.NoError(t, err)
	assert.False(t, ok, "Validate, which cannot hand the fix back, rejects the answer as given")
	assert.Equal(t, vd.Diagnosis, diagnosis)

	vd, err = Check(ctx, v, `[1, 2`)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Diagnosis: "invalid JSON at line 1, column 6: unexpected end of JSON input", Type: FailureVerification}, vd,
		"what it cannot fix, it rejects as json does")
}

func TestWithFixJSON(t *testing.T) {
	ctx := context.Background()
	plain, err := ParseSpec("json")
	require.NoError(t, err)
	fixing, err := ParseSpec("json", WithFixJSON())
	require.NoError(t, err)
	assert.Equal(t, "json", fixing.Name())

	vd, err := Check(ctx, plain, "{\"a\": 1,}")
	require.NoError(t, err)
	assert.False(t, vd.OK, "json without WithFixJSON does not fix")
	vd, err = Check(ctx, fixing, "{\"a\": 1,}")
	require.NoError(t, err)
	assert.Equal(t, `{"a": 1}`, vd.Fixed)

	// Other kinds are not changed by the option.
	v, err := ParseSpec("maxlen:3", WithFixJSON())
	require.NoError(t, err)
	vd, err = Check(ctx, v, "abcd")
	require.NoError(t, err)
	assert.False(t, vd.OK)
}

// FuzzRepairJSON checks RepairJSON's promises on any text: valid JSON is
// never changed, a repair is valid JSON (which the json validator passes)
// and differs from the text, and a repaired text needs no second repair.
func FuzzRepairJSON(f *testing.F) {
	for _, seed := range []string{
		`{"a": 1}`, `Here you go: {"a": 1,}`, "```json\n[1, 2,]\n```", `{"a": [1, 2]`, `[1, 2`,
		`{"a": "b`, `{"a": "}]",}`, "```\n42\n```", `x {"a": {"b": [true, null,],}`, `[,]`, `"\u00e9"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := RepairJSON(in)
		if json.Valid([]byte(in)) {
			if ok || got != in {
				t.Fatalf("valid JSON %q changed to %q", in, got)
			}
			return
		}
		if !ok {
			if got != in {
				t.Fatalf("no repair, but %q came back as %q", in, got)
			}
			return
		}
		if !json.Valid([]byte(got)) || diagnoseJSON(got) != "" {
			t.Fatalf("repair of %q is not JSON: %q", in, got)
		}
		if got == in {
			t.Fatalf("repair of %q is the text itself", in)
		}
		if again, ok := RepairJSON(got); ok || again != got {
			t.Fatalf("repair %q of %q repaired again to %q", got, in, again)
		}
	})
}
