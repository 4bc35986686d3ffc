package retry

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Schema returns the validator of the spec "schema:PATH": the answer must be
// valid JSON (diagnosed as by [JSON]) that satisfies the JSON Schema in the
// file at path. A relative path is resolved against the directory given by
// [WithBaseDir], or the working directory. The schema is read and compiled
// here, so a missing file or a document that is not a valid schema is a
// *SpecError now rather than a diagnosis later.
//
// The diagnosis lists every violation with the JSON pointer of the value it
// concerns, sorted by pointer (array indices in numeric order) and then by
// message, for example
//
//	2 schema violations: at root: missing property 'name'; at '/age': got string, want integer
func Schema(path string, opts ...SpecOption) (Validator, error) {
	return newSchema("schema:"+path, path, newSpecConfig(opts))
}

type schemaValidator struct {
	name   string
	schema *jsonschema.Schema
}

func newSchema(spec, path string, cfg specConfig) (Validator, error) {
	if path == "" {
		return nil, syntaxError(spec, "schema needs a file path, as in schema:answer.schema.json")
	}
	abs := cfg.resolve(path)
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &SpecError{Spec: spec, Reason: "cannot read the schema file", Err: err}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		return nil, &SpecError{Spec: spec, Reason: "the schema file is not JSON", Err: err}
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(abs, doc); err != nil {
		return nil, &SpecError{Spec: spec, Reason: "cannot load the schema", Err: err}
	}
	sch, err := c.Compile(abs)
	if err != nil {
		return nil, &SpecError{Spec: spec, Reason: "the file is not a valid JSON Schema", Err: err}
	}
	return &schemaValidator{name: spec, schema: sch}, nil
}

func (v *schemaValidator) Name() string { return v.name }

func (v *schemaValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	if d := diagnoseJSON(answer); d != "" {
		return false, d, nil
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(answer))
	if err != nil {
		// diagnoseJSON accepted it, so this is not the answer's fault.
		return false, "", fmt.Errorf("decode answer: %w", err)
	}
	err = v.schema.Validate(inst)
	if err == nil {
		return true, "", nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return false, "", err
	}
	return false, describeViolations(ve), nil
}

// violation is one failed schema keyword, at the instance location ptr.
type violation struct {
	ptr []string
	msg string
}

// describeViolations flattens a validation error tree into its violations
// (the leaves, plus the anyOf/oneOf/not nodes whose alternatives the leaves
// explain) in a stable order. The library's own tree order depends on map
// iteration, so the order is imposed here.
func describeViolations(ve *jsonschema.ValidationError) string {
	var vs []violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf, *kind.Not:
			vs = append(vs, violation{e.InstanceLocation, kindMessage(e.ErrorKind)})
		default:
			if len(e.Causes) == 0 {
				vs = append(vs, violation{e.InstanceLocation, kindMessage(e.ErrorKind)})
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
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

// kindMessage renders one error kind with the library's English messages,
// making the lists the library builds from map iteration sorted first.
func kindMessage(k jsonschema.ErrorKind) string {
	if ap, ok := k.(*kind.AdditionalProperties); ok {
		k = &kind.AdditionalProperties{Properties: slices.Sorted(slices.Values(ap.Properties))}
	}
	leaf := &jsonschema.ValidationError{ErrorKind: k}
	return leaf.BasicOutput().Error.String()
}

// displayPointer writes an instance location as a quoted JSON pointer
// (RFC 6901), or "root" for the whole document.
func displayPointer(tokens []string) string {
	if len(tokens) == 0 {
		return "root"
	}
	var b strings.Builder
	b.WriteByte('\'')
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	b.WriteByte('\'')
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
		Build: func(s Spec) (Validator, error) {
			if s.Arg == "" {
				// Checked here too, for the message to list the parser's kinds.
				return nil, s.SyntaxError("schema needs a file path, as in schema:answer.schema.json")
			}
			return newSchema(s.Text, s.Arg, s.config())
		},
	}
}
