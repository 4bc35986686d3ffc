package typed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/retry"
)

// checker is the validator of an answer of type T: the schema, then
// decoding, then T's Validate method; the first failure is the
// diagnosis.
type checker[T any] struct {
	name   string          // T as Go writes it
	schema retry.Validator // retry.SchemaDocument's
}

func (c *checker[T]) Name() string { return c.name }

func (c *checker[T]) Validate(ctx context.Context, answer string) (bool, string, error) {
	if ok, diagnosis, err := c.schema.Validate(ctx, answer); err != nil || !ok {
		return ok, diagnosis, err
	}
	var v T
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return false, decodeDiagnosis([]byte(answer), err), nil
	}
	if err := validateValue(&v); err != nil {
		return false, "Validate: " + err.Error(), nil
	}
	return true, "", nil
}

// validator is a type with its own checks.
type validator interface{ Validate() error }

// validateValue runs T's Validate method on the value *v, or *T's on v;
// a nil pointer T (a JSON null a given schema allowed) has nothing to
// check.
func validateValue[T any](v *T) error {
	if f, ok := any(*v).(validator); ok {
		if rv := reflect.ValueOf(*v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return nil
		}
		return f.Validate()
	}
	if f, ok := any(v).(validator); ok {
		return f.Validate()
	}
	return nil
}

// decodeDiagnosis says why data, which satisfied the schema, does not
// decode: a value of the wrong type or out of its Go type's range (only
// with a schema given, or a number beyond the inferred bounds), at its
// JSON pointer; or the error of a type's own UnmarshalJSON or
// UnmarshalText.
func decodeDiagnosis(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return "the answer does not decode: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	got, want := te.Value, jsonerr.GoKind(te.Type)
	if got == "bool" {
		got = "boolean"
	}
	if strings.HasPrefix(got, "number") {
		want = rangeOf(te.Type)
	}
	return "at " + displayPointer(pointerAt(data, te.Offset)) + ": got " + got + ", want " + want
}

// rangeOf says which numbers the Go type t holds, for a number it does
// not: one out of its range, or a fraction for an integer.
func rangeOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32:
		return fmt.Sprintf("a number of magnitude at most %g", math.MaxFloat32)
	}
	return jsonerr.GoKind(t)
}

// displayPointer writes an instance location as retry's schema
// diagnoses do: a quoted JSON pointer (RFC 6901), or "root".
func displayPointer(tokens []string) string {
	if len(tokens) == 0 {
		return "root"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return "'" + b.String() + "'"
}

// pointerAt returns the JSON pointer of the innermost value of data
// whose text holds the byte offset off, as encoding/json reports a type
// error: just after a scalar, just inside an array's or object's
// opening bracket. It returns nil (the root) when data does not parse.
func pointerAt(data []byte, off int64) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	path, _, _ := valueAt(dec, nil, off)
	return path
}

// valueAt reads the next value from dec, at the location at, and returns
// the location of the innermost value in it that holds off (found says
// whether one does) and whether dec's input ended badly.
func valueAt(dec *json.Decoder, at []string, off int64) (path []string, found, bad bool) {
	before := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, true
	}
	holds := func() bool { return before < off && off <= dec.InputOffset() }
	switch tok {
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if p, found, bad := valueAt(dec, append(at[:len(at):len(at)], fmt.Sprint(i)), off); found || bad {
				return p, found, bad
			}
		}
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, false, true
			}
			name, _ := key.(string)
			if p, found, bad := valueAt(dec, append(at[:len(at):len(at)], name), off); found || bad {
				return p, found, bad
			}
		}
	default:
		return at, holds(), false
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, false, true
	}
	return at, holds(), false
}
