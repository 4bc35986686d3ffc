package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tractdag/tract"
)

// typeSchemas returns the schemas of the types whose JSON is not what
// their Go type says: a hash is its hex text, metadata an object, and a
// compiled message the OpenAI message of compile's JSON.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[tract.Hash](): {
			Type: "string", Pattern: "^[0-9a-f]{64}$",
			Description: "a commit's BLAKE3 hash, 64 hex digits (64 zeros: none)",
		},
		reflect.TypeFor[json.RawMessage](): {Type: "object", Description: "the commit's metadata"},
		reflect.TypeFor[tract.Message](): {
			Type:     "object",
			Required: []string{"role", "content"},
			Properties: map[string]*jsonschema.Schema{
				"role":         {Type: "string", Enum: []any{"system", "user", "assistant", "tool"}},
				"content":      {Description: "the text; an array of parts; null for an answer that only calls tools"},
				"name":         {Type: "string"},
				"tool_calls":   {Type: "array", Description: "the tool calls of an assistant message, in OpenAI's shape"},
				"tool_call_id": {Type: "string", Description: "the call a tool message answers"},
			},
		},
	}
}

// schemaFor returns the JSON Schema of T's JSON (T a struct or a pointer
// to one): the SDK's inference, with the types above, and without the
// nulls it allows for slices and pointers, which tract never prints.
func schemaFor[T any]() *jsonschema.Schema {
	rt := reflect.TypeFor[T]()
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	s, err := jsonschema.ForType(rt, &jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", rt, err)) // a programming error, caught by every test
	}
	noNull(s)
	return s
}

// noNull rewrites, in s and every schema under it, a type list of "null"
// and one other type as that type.
func noNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		noNull(p)
	}
	noNull(s.Items)
	noNull(s.AdditionalProperties)
}
