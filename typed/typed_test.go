package typed

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/turn"
)

type event struct {
	Name string    `json:"name"`
	When time.Time `json:"when"`
}

type checked struct {
	N int `json:"n"`
}

func (c *checked) Validate() error {
	if c == nil {
		return errors.New("called on nil")
	}
	if c.N%2 != 0 {
		return errors.New("n is odd")
	}
	return nil
}

type valueChecked struct {
	N int `json:"n"`
}

func (v valueChecked) Validate() error {
	if v.N < 0 {
		return errors.New("n is negative")
	}
	return nil
}

type page[T any] struct {
	Items []T `json:"items"`
}

func validate[T any](t *testing.T, answer string) (bool, string) {
	t.Helper()
	a, err := For[T]()
	require.NoError(t, err)
	ok, diagnosis, err := a.Validator().Validate(context.Background(), answer)
	require.NoError(t, err)
	return ok, diagnosis
}

// validateGiven is validate with the schema doc given.
func validateGiven[T any](doc string) func(*testing.T, string) (bool, string) {
	return func(t *testing.T, answer string) (bool, string) {
		t.Helper()
		a, err := For[T](turn.Structured(&llm.Schema{Name: "given", Schema: []byte(doc)}))
		require.NoError(t, err)
		ok, diagnosis, err := a.Validator().Validate(context.Background(), answer)
		require.NoError(t, err)
		return ok, diagnosis
	}
}

func TestValidator(t *testing.T) {
	tests := []struct {
		name   string
		check  func(*testing.T, string) (bool, string)
		answer string
		want   string // "" means accepted
	}{
		{"time as a date-time string", validate[event], `{"name": "x", "when": "2026-11-27T10:00:00Z"}`, ""},
		{"a time UnmarshalJSON refuses", validate[event], `{"name": "x", "when": "yesterday"}`,
			`the answer does not decode: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{"Validate on the pointer", validate[checked], `{"n": 3}`, "Validate: n is odd"},
		{"Validate on the pointer passes", validate[checked], `{"n": 2}`, ""},
		{"T a pointer, Validate on it", validate[*checked], `{"n": 3}`, "Validate: n is odd"},
		{"T a pointer, null is no answer", validate[*checked], `null`, "1 schema violation: at root: got null, want object"},
		{"T a pointer, null allowed by a schema given is not validated", validateGiven[*checked](`{"type": ["null", "object"]}`), `null`, ""},
		{"T a pointer to a value-receiver Validate", validate[*valueChecked], `{"n": -1}`, "Validate: n is negative"},
		{"T a pointer to a value-receiver Validate, null", validateGiven[*valueChecked](`{}`), `null`, ""},
		{"a nested Validate is not called", validate[[]checked], `[{"n": 3}]`, ""},
		{"int8 bounds from the schema", validate[int8], `300`, "1 schema violation: at root: maximum: got 300, want 127"},
		{"int64 beyond its range", validate[int64], `1e30`, "at root: got number 1e30, want an integer from -9223372036854775808 to 9223372036854775807"},
		{"uint32 beyond its range", validate[[]uint32], `[1, 4294967296]`, "1 schema violation: at '/1': maximum: got 4294967296, want 4294967295"},
		{"float32 beyond its range", validate[map[string]float32], `{"x": 1e39}`, "at '/x': got number 1e39, want a number of magnitude at most 3.4028234663852886e+38"},
		{"bytes as base64", validate[[]byte], `"aGk="`, ""},
		{"bytes that are not base64", validate[[]byte], `"not base64!"`, "the answer does not decode: illegal base64 data at input byte 3"},
		{"raw JSON takes anything", validate[json.RawMessage], `[1, {"a": null}]`, ""},
		{"any takes anything", validate[any], `"x"`, ""},
		{"a generic type", validate[page[int]], `{"items": [1, "2"]}`, "1 schema violation: at '/items/1': got string, want integer"},
		{"trailing text", validate[int], `1 2`, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diagnosis := tt.check(t, tt.answer)
			assert.Equal(t, tt.want == "", ok, diagnosis)
			if tt.want == "" {
				assert.Empty(t, diagnosis)
			} else {
				assert.Contains(t, diagnosis, tt.want)
			}
		})
	}
}

func TestPointerAt(t *testing.T) {
	data := []byte(`{"a": [1, {"b": "x", "c/d~": [true]}], "e": {}}`)
	tests := []struct {
		name string
		off  int64
		want []string
	}{
		{"after a scalar in an array", int64(len(`{"a": [1`)), []string{"a", "0"}},
		{"after a string in an object", int64(len(`{"a": [1, {"b": "x"`)), []string{"a", "1", "b"}},
		{"inside an array's bracket", int64(len(`{"a": [1, {"b": "x", "c/d~": [`)), []string{"a", "1", "c/d~"}},
		{"inside an object's brace", int64(len(`{"a": [1, {"b": "x", "c/d~": [true]}], "e": {`)), []string{"e"}},
		{"the root", 1, nil},
		{"past the end", 1000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pointerAt(data, tt.off))
		})
	}
	assert.Equal(t, "'/a/1/c~1d~0'", displayPointer([]string{"a", "1", "c/d~"}))
	assert.Equal(t, "root", displayPointer(nil))
	assert.Nil(t, pointerAt([]byte(`{"a": [`), 7), "data that does not parse is the root")
}

// pointerAt reads any bytes at any offset without panicking.
func FuzzPointerAt(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "x"}]}`), int64(9))
	f.Add([]byte(`[[[[`), int64(2))
	f.Add([]byte(`{"a":}`), int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, off int64) {
		_ = pointerAt(data, off)
	})
}

func TestSchemaName(t *testing.T) {
	assert.Equal(t, "event", schemaName[event]())
	assert.Equal(t, "checked", schemaName[*checked]())
	assert.Equal(t, "answer", schemaName[[]event]())
	assert.Equal(t, "answer", schemaName[map[string]int]())
	assert.Equal(t, "int", schemaName[int]())
	assert.Equal(t, "page", schemaName[page[event]]())
}

func TestFor(t *testing.T) {
	t.Run("inferred", func(t *testing.T) {
		a, err := For[event]()
		require.NoError(t, err)
		require.NotNil(t, a.Schema())
		assert.Equal(t, "event", a.Schema().Name)
		assert.True(t, a.Schema().Strict)
		assert.JSONEq(t, `{"type": "object", "properties": {"name": {"type": "string"}, "when": {"type": "string", "format": "date-time"}},
			"required": ["name", "when"], "additionalProperties": false}`, string(a.Schema().Schema))
		assert.Equal(t, "typed.event", a.Validator().Name())
		assert.Len(t, a.Options(), 2)
	})
	t.Run("a pointer is asked for as what it points to", func(t *testing.T) {
		a, err := For[*event]()
		require.NoError(t, err)
		assert.Equal(t, "event", a.Schema().Name)
		assert.True(t, a.Schema().Strict, "strict mode wants an object at the root, not null or one")
	})
	t.Run("given", func(t *testing.T) {
		given, err := llm.NewSchema("mine", []byte(`{"type": "object", "required": ["name"]}`))
		require.NoError(t, err)
		a, err := For[event](turn.Model("m"), turn.Structured(given))
		require.NoError(t, err)
		assert.Same(t, given, a.Schema())
		ok, diagnosis, err := a.Validator().Validate(context.Background(), `{"when": "2026-11-27T10:00:00Z"}`)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, "1 schema violation: at root: missing property 'name'", diagnosis)
	})
	t.Run("none sent", func(t *testing.T) {
		a, err := For[event](turn.Structured(nil))
		require.NoError(t, err)
		assert.Nil(t, a.Schema())
		ok, _, err := a.Validator().Validate(context.Background(), `{}`)
		require.NoError(t, err)
		assert.False(t, ok, "the inferred schema still validates")
	})
	t.Run("uninferable", func(t *testing.T) {
		_, err := For[chan int]()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "answer as chan int: cannot infer a JSON Schema from chan int (give one with Structured)")
	})
	t.Run("a given schema that is not one", func(t *testing.T) {
		_, err := For[event](turn.Structured(&llm.Schema{Name: "x", Schema: []byte(`{"type": 3}`)}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "answer as typed.event: schema x is not a valid JSON Schema")
	})
}

func TestDecode(t *testing.T) {
	a, err := For[event]()
	require.NoError(t, err)
	v, err := a.Decode(`{"name": "x", "when": "2026-11-27T10:00:00Z"}`)
	require.NoError(t, err)
	assert.Equal(t, event{Name: "x", When: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}, v)
	v, err = a.Decode(`{"name": 1}`)
	require.Error(t, err)
	assert.Equal(t, event{}, v)
	assert.Equal(t, "answer as typed.event: the accepted answer does not decode: name: got number, want a string", err.Error())
	var te *json.UnmarshalTypeError
	assert.ErrorAs(t, err, &te)
}

// Chat passes the Answer's options ahead of the caller's and decodes the
// accepted text; a failed turn's result and error come back unchanged.
func TestChat(t *testing.T) {
	var seen []turn.Option
	ok := func(ctx context.Context, msg string, opts ...turn.Option) (*turn.Result, error) {
		seen = opts
		return &turn.Result{Text: `{"n": 2}`}, nil
	}
	v, res, err := Chat[checked](context.Background(), ok, "hi", turn.Model("m"))
	require.NoError(t, err)
	assert.Equal(t, checked{N: 2}, v)
	assert.Equal(t, `{"n": 2}`, res.Text)
	assert.Len(t, seen, 3)

	failure := errors.New("exhausted")
	failed := func(ctx context.Context, msg string, opts ...turn.Option) (*turn.Result, error) {
		return &turn.Result{Attempts: 3}, failure
	}
	v, res, err = Chat[checked](context.Background(), failed, "hi")
	assert.Same(t, failure, err)
	assert.Equal(t, checked{}, v)
	assert.Equal(t, 3, res.Attempts)

	called := false
	never := func(ctx context.Context, msg string, opts ...turn.Option) (*turn.Result, error) {
		called = true
		return nil, nil
	}
	_, res, err = Chat[func()](context.Background(), never, "hi")
	require.Error(t, err)
	assert.Nil(t, res)
	assert.False(t, called)
	assert.Contains(t, err.Error(), "chat: answer as func(): cannot infer")
}
