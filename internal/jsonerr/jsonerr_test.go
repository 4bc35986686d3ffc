package jsonerr

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDescribe(t *testing.T) {
	type usage struct {
		Total int `json:"total_tokens"`
	}
	type doc struct {
		Model   string          `json:"model"`
		Choices []struct{}      `json:"choices"`
		Usage   *usage          `json:"usage"`
		Ok      bool            `json:"ok"`
		Score   float64         `json:"score"`
		Meta    map[string]int  `json:"meta"`
		Raw     json.RawMessage `json:"raw"`
	}
	tests := []struct {
		in, want string
	}{
		{`[]`, "got array, want an object"},
		{`{"model":5}`, "model: got number, want a string"},
		{`{"choices":"x"}`, "choices: got string, want an array"},
		{`{"usage":{"total_tokens":1.5}}`, "usage.total_tokens: got number 1.5, want an integer"},
		{`{"usage":{"total_tokens":1e99}}`, "usage.total_tokens: got number 1e99, want an integer"},
		{`{"ok":"yes"}`, "ok: got string, want a boolean"},
		{`{"score":{}}`, "score: got object, want a number"},
		{`{"meta":{"a":"b"}}`, "meta: got string, want an integer"},
		{`{"model":`, "unexpected end of JSON input"},
		{`{"model" 1}`, "invalid character '1' after object key"},
	}
	for _, tt := range tests {
		var d doc
		err := json.Unmarshal([]byte(tt.in), &d)
		if assert.Error(t, err, tt.in) {
			assert.Equal(t, tt.want, Describe(err), tt.in)
		}
	}
	assert.Equal(t, "disk on fire", Describe(errors.New("disk on fire")))
}

func TestWrap(t *testing.T) {
	assert.NoError(t, Wrap(nil))
	var v struct {
		N int `json:"n"`
	}
	cause := json.Unmarshal([]byte(`{"n":"x"}`), &v)
	err := Wrap(cause)
	assert.EqualError(t, err, "n: got string, want an integer")
	var te *json.UnmarshalTypeError
	assert.ErrorAs(t, err, &te, "the cause stays reachable")
}

func TestKind(t *testing.T) {
	for raw, want := range map[string]string{
		"null": "null", "true": "a boolean", " false": "a boolean", `"x"`: "a string", "[1]": "an array",
		"\n{}": "an object", "-1.5": "a number", "": "nothing", "  ": "nothing",
	} {
		assert.Equal(t, want, Kind([]byte(raw)), "%q", raw)
	}
}

func TestValueKindAndGoKind(t *testing.T) {
	for value, want := range map[string]string{"number 1.5": "a number", "bool": "a boolean", "string": "a string", "array": "an array", "object": "an object"} {
		assert.Equal(t, want, ValueKind(value), value)
	}
	assert.Equal(t, "an integer", GoKind(reflect.TypeFor[*int]()))
	assert.Equal(t, "an object", GoKind(reflect.TypeFor[map[string]any]()))
}
