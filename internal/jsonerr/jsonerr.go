// Package jsonerr words encoding/json's errors for the people who wrote
// the JSON, who know its values but not the Go types they were decoded
// into.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Describe returns the message of err, an error of encoding/json: a value
// of the wrong type is "usage.total_tokens: got string, want an integer"
// rather than json's "cannot unmarshal string into Go struct field
// chatResponse.usage.total_tokens of type int"; other errors keep their
// message, without json's "json: " prefix.
func Describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	msg := "got " + te.Value + ", want " + GoKind(te.Type)
	if te.Field != "" {
		msg = te.Field + ": " + msg
	}
	return msg
}

// GoKind names, with its article, the JSON values the Go type t decodes
// from: "a string", "a boolean", "an integer", "a number", "an array",
// "an object".
func GoKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return GoKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another value"
}

// Wrap returns err with the message Describe gives it; errors.Is and
// errors.As still see err. It returns nil for nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &described{err}
}

type described struct{ err error }

func (e *described) Error() string { return Describe(e.err) }
func (e *described) Unwrap() error { return e.err }

// Kind names the JSON type of the value raw (white space around it
// aside), with its article: "null", "a boolean", "a string", "an array",
// "an object" or "a number"; "nothing" when raw holds no value.
func Kind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// ValueKind names, with its article, the JSON value an
// *json.UnmarshalTypeError's Value describes ("number 1.5", "bool",
// "string"): "a number", "a boolean", "a string", "an array", "an object".
func ValueKind(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + kind
	case "":
		return "a value"
	}
	return "a " + kind
}
