package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/internal/jsonscan"
	"github.com/tractdag/tract/llm"
)

// MetaTypeError reports metadata whose value under one of tract's keys
// (KeyPinned, KeyAttempt, KeyUsage, …) is not of the type tract reads it
// as. errors.Is matches it with dag.ErrInvalidMeta.
type MetaTypeError struct {
	// Key is the metadata key.
	Key string
	// Field is the field of an object value that is wrong
	// ("usage.total_tokens"); "" when the value itself is.
	Field string
	// Got is what the value is: `a string ("yes")`, "null", "an array", …
	Got string
	// Want is what tract reads it as: "a boolean (true or false)", …
	Want string
}

// Error returns the MetaTypeError message.
func (e *MetaTypeError) Error() string {
	where := fmt.Sprintf("metadata %q", e.Key)
	if e.Field != "" {
		where += fmt.Sprintf(": %q", e.Field)
	}
	return fmt.Sprintf("%s is %s; tract reads it as %s", where, e.Got, e.Want)
}

// Is reports whether target is dag.ErrInvalidMeta.
func (e *MetaTypeError) Is(target error) bool { return target == dag.ErrInvalidMeta }

// Check refuses canonical metadata whose value under one of tract's keys
// is not of the type tract reads it as (a *MetaTypeError). Keys are
// checked in the order of Keys, so the error names the first wrong one.
func Check(meta []byte) error {
	if len(meta) == 0 {
		return nil
	}
	var ms []jsonscan.Member
	var quoted [64]byte
	for _, k := range keyTable() {
		if !bytes.Contains(meta, append(append(append(quoted[:0], '"'), k.Name...), '"')) {
			continue // the common case: not there at all
		}
		if ms == nil {
			var ok bool
			if ms, ok = jsonscan.Members(meta); !ok {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(meta, &m); err != nil {
					return fmt.Errorf("%w: %v", dag.ErrInvalidMeta, err)
				}
				return nil // null: no key at all
			}
		}
		for i := len(ms) - 1; i >= 0; i-- { // the last of a key wins
			if ms[i].Key == k.Name {
				if err := checkValue(k, ms[i].Val); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// checkValue checks the value raw of tract's key k.
func checkValue(k Key, raw json.RawMessage) error {
	got := jsonerr.Kind(raw)
	wrong := func() error { return &MetaTypeError{Key: k.Name, Got: DescribeJSON(raw), Want: k.Want} }
	switch k.Name {
	case KeyPinned, KeyValid:
		if got != "a boolean" {
			return wrong()
		}
	case KeyAttempt, KeyDuration:
		var n int
		if got != "a number" || json.Unmarshal(raw, &n) != nil {
			return wrong()
		}
	case KeyDiagnosis, KeyValidatorError, KeyModel, KeyError, KeyTask, KeyProvider:
		if got != "a string" {
			return wrong()
		}
	case KeyRestore:
		var h dag.Hash
		if got != "a string" || json.Unmarshal(raw, &h) != nil {
			return wrong()
		}
	case KeyWeight:
		if string(raw) != "0" && string(raw) != "1" {
			return wrong()
		}
	case KeyValidators:
		var specs []string
		if got != "an array" || json.Unmarshal(raw, &specs) != nil {
			return wrong()
		}
	case KeyShape:
		return checkShape(raw)
	case KeyUsage:
		if got != "an object" {
			return wrong()
		}
		return checkObject(k.Name, raw, new(llm.Usage))
	case KeyStructured:
		if got != "an object" {
			return wrong()
		}
		return checkObject(k.Name, raw, new(Structured))
	case KeyFixed:
		if got != "an object" {
			return wrong()
		}
		var f struct {
			Original json.RawMessage `json:"original"`
		}
		if err := json.Unmarshal(raw, &f); err == nil && f.Original != nil {
			var h string
			err := json.Unmarshal(f.Original, &h)
			if err == nil {
				_, err = dag.ParseHash(h)
			}
			if err != nil {
				return &MetaTypeError{Key: k.Name, Field: "original", Got: DescribeJSON(f.Original), Want: wantHash}
			}
		}
		return checkObject(k.Name, raw, new(Fix))
	case KeyToolStep:
		if got != "an object" {
			return wrong()
		}
		return checkObject(k.Name, raw, new(ToolStep))
	case KeyWaitingEscalation, KeyEscalationAnswer:
		if got != "an object" {
			return wrong()
		}
		if k.Name == KeyWaitingEscalation {
			return checkObject(k.Name, raw, new(WaitingEscalation))
		}
		return checkObject(k.Name, raw, new(EscalationAnswer))
	case KeyFailure, KeyEscalation:
		if got != "an object" {
			return wrong()
		}
		// A time that does not parse is no *json.UnmarshalTypeError:
		// check it here.
		var f struct {
			Timestamp json.RawMessage `json:"timestamp"`
		}
		if err := json.Unmarshal(raw, &f); err == nil && f.Timestamp != nil {
			var ts time.Time
			if jsonerr.Kind(f.Timestamp) != "a string" || json.Unmarshal(f.Timestamp, &ts) != nil {
				return &MetaTypeError{Key: k.Name, Field: "timestamp", Got: DescribeJSON(f.Timestamp), Want: wantTime}
			}
		}
		if k.Name == KeyEscalation {
			return checkObject(k.Name, raw, new(Escalation))
		}
		return checkObject(k.Name, raw, new(Failure))
	case KeyProvenance:
		if got != "an object" {
			return wrong()
		}
		var p struct {
			Restore json.RawMessage `json:"restore"`
		}
		if err := json.Unmarshal(raw, &p); err == nil && p.Restore != nil {
			var h string
			err := json.Unmarshal(p.Restore, &h)
			if err == nil {
				_, err = dag.ParseHash(h)
			}
			if err != nil {
				return &MetaTypeError{Key: k.Name, Field: "restore", Got: DescribeJSON(p.Restore), Want: wantHash}
			}
		}
		return checkObject(k.Name, raw, new(Provenance))
	}
	return nil
}

// checkObject decodes the object raw of key k into target, the type
// tract reads it as, and reports a field of the wrong type.
func checkObject(k string, raw json.RawMessage, target any) error {
	err := json.Unmarshal(raw, target)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return &MetaTypeError{Key: k, Field: te.Field, Got: jsonerr.ValueKind(te.Value), Want: describeGoType(te.Type)}
	}
	return fmt.Errorf("%w: %q: %v", dag.ErrInvalidMeta, k, err)
}

// checkShape checks a shape given in a caller's metadata: a JSON object
// that is a message without "role".
func checkShape(raw json.RawMessage) error {
	wrong := func(err error) error {
		return &MetaTypeError{Key: KeyShape, Got: DescribeJSON(raw), Want: "a message object without role (" + err.Error() + ")"}
	}
	if jsonerr.Kind(raw) != "an object" {
		return &MetaTypeError{Key: KeyShape, Got: DescribeJSON(raw), Want: wantObject}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return wrong(err)
	}
	if _, ok := fields["role"]; ok {
		return wrong(errors.New("it has one"))
	}
	var m llm.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return wrong(err)
	}
	return nil
}

// DescribeJSON says what a JSON value is, quoting a scalar (a string cut
// to 40 characters): `a string ("yes")`, "a number (1.5)", "an array".
func DescribeJSON(raw json.RawMessage) string {
	t := jsonerr.Kind(raw)
	switch t {
	case "a string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if utf8.RuneCountInString(s) > 40 {
				s = string([]rune(s)[:40]) + "…"
			}
			return fmt.Sprintf("%s (%q)", t, s)
		}
	case "a boolean", "a number":
		return fmt.Sprintf("%s (%s)", t, raw)
	}
	return t
}

// describeGoType says what JSON the Go type t is read from.
func describeGoType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[dag.Hash]():
		return wantHash
	case reflect.TypeFor[time.Time]():
		return wantTime
	}
	switch t.Kind() {
	case reflect.Bool:
		return wantBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return wantInt
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return wantString
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return wantObject
}
