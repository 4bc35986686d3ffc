package retry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema returns the validator of the spec "schema:PATH": the answer must be
// valid JSON (diagnosed as by [JSON]) that satisfies the JSON Schema in the
// file at path. A relative path is resolved against the directory given by
// [WithBaseDir], or the working directory. The schema is read and compiled
// here, so a missing file, a document that is not a valid schema, a draft
// other than 2020-12 (the default) and draft-07, or a "$ref" to anything
// but a local file is a *SpecError now rather than a diagnosis later.
//
// The diagnosis lists every violation with the JSON pointer of the value it
// concerns, sorted by pointer (array indices in numeric order) and then by
// message, for example
//
//	2 schema violations: at root: missing property 'name'; at '/age': got string, want integer
func Schema(path string, opts ...SpecOption) (Validator, error) {
	return newSchema(newSpec("schema:"+path, path, opts))
}

// SchemaDocument returns a validator named name that checks answers as
// [Schema] does, against the JSON Schema document doc rather than a file:
// a Go program's own schema, or one inferred from a Go type. doc may
// refer only to its own parts ("$ref": "#/$defs/item"); a reference to
// anything outside it, a draft other than 2020-12 (the default) and
// draft-07, or a document that is not a valid schema is an error here,
// before any answer is checked.
func SchemaDocument(name string, doc []byte) (Validator, error) {
	set, resolved, err := compileSchema(documentURI, doc, nil)
	if err != nil {
		var re *schemaRefError
		var je *schemaJSONError
		switch {
		case errors.As(err, &re):
			return nil, fmt.Errorf("schema %s: %w", name, re)
		case errors.As(err, &je):
			return nil, fmt.Errorf("schema %s is not JSON: %w", name, je.Err)
		}
		return nil, fmt.Errorf("schema %s is not a valid JSON Schema: %w", name, err)
	}
	return &schemaValidator{name: name, set: set, resolved: resolved}, nil
}

type schemaValidator struct {
	name     string
	set      *schemaSet           // the documents, read-only after newSchema
	resolved *jsonschema.Resolved // the library's compiled schema: it decides
}

func newSchema(s Spec) (Validator, error) {
	if s.Arg == "" {
		return nil, s.SyntaxError("schema needs a file path, as in schema:answer.schema.json")
	}
	abs := s.Resolve(s.Arg)
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, s.BuildError("cannot read the schema file", err)
	}
	set, resolved, err := loadSchema(abs, data, nil)
	if err != nil {
		var de *draftError
		var re *schemaRefError
		var je *schemaJSONError
		switch { // a referenced file's errors are schemaRefErrors
		case errors.As(err, &de):
			return nil, s.BuildError(de.Error(), nil)
		case errors.As(err, &re):
			return nil, s.BuildError(re.Reason, re.Err)
		case errors.As(err, &je):
			return nil, s.BuildError("the schema file is not JSON", je.Err)
		}
		return nil, s.BuildError("the file is not a valid JSON Schema", err)
	}
	return &schemaValidator{name: s.Text, set: set, resolved: resolved}, nil
}

func (v *schemaValidator) Name() string { return v.name }

func (v *schemaValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	var inst any
	if err := json.Unmarshal([]byte(answer), &inst); err != nil {
		// Diagnosed only now: an answer that decodes is valid JSON.
		if d := diagnoseJSON(answer); d != "" {
			return false, d, nil
		}
		// A number no float64 holds (1e400) is valid JSON that the schema
		// library cannot take: the answer's to fix, so a diagnosis.
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
			return false, fmt.Sprintf("the answer holds a %s, out of the range of a 64-bit float", te.Value), nil
		}
		// diagnoseJSON accepted it, so this is not the answer's fault.
		return false, "", fmt.Errorf("decode answer: %w", err)
	}
	err := validateSafely(v.resolved, inst)
	if err == nil {
		return true, "", nil
	}
	var pe *schemaPanicError
	if errors.As(err, &pe) {
		return false, "", err
	}
	return false, describeViolations(v.set.explain(inst)), nil
}

// schemaPanicError is a panic of the schema library, turned into an error
// so that a schema that trips it stops the turn instead of the process.
type schemaPanicError struct{ value any }

func (e *schemaPanicError) Error() string {
	return fmt.Sprintf("the JSON Schema library failed: %v", e.value)
}

// validateSafely is rs.Validate(inst) with a panic of the library returned
// as a *schemaPanicError.
func validateSafely(rs *jsonschema.Resolved, inst any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &schemaPanicError{p}
		}
	}()
	return rs.Validate(inst)
}

// violation is one failed schema keyword, at the instance location ptr.
type violation struct {
	ptr []string
	msg string
}

// describeViolations writes violations in a stable order: by pointer, then
// by message, without repeats.
func describeViolations(vs []violation) string {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, func(a, b violation) int {
		if c := comparePointers(a.ptr, b.ptr); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	vs = slices.CompactFunc(vs, func(a, b violation) bool {
		return a.msg == b.msg && slices.Equal(a.ptr, b.ptr)
	})

	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "at " + displayPointer(v.ptr) + ": " + v.msg
	}
	noun := "violations"
	if len(vs) == 1 {
		noun = "violation"
	}
	return fmt.Sprintf("%d schema %s: %s", len(vs), noun, strings.Join(parts, "; "))
}

// displayPointer writes an instance location as a quoted JSON pointer
// (RFC 6901), or "root" for the whole document.
func displayPointer(tokens []string) string {
	if len(tokens) == 0 {
		return "root"
	}
	return "'" + jsonPointer(tokens) + "'"
}

// jsonPointer writes tokens as a JSON pointer (RFC 6901).
func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// comparePointers orders instance locations token by token, numbers (array
// indices) numerically and before names.
func comparePointers(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := compareTokens(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareTokens(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// schemaKind is the kind "schema:PATH".
func schemaKind() Kind {
	return Kind{
		Name: "schema", Arg: "PATH", Summary: "valid JSON satisfying the JSON Schema at PATH",
		Build: newSchema,
	}
}
