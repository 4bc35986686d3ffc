package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxSchemaName is the longest schema (or tool) name the providers accept.
const maxSchemaName = 64

// NewSchema returns the Schema of the JSON Schema document doc, named
// after name (a file name, say: its extension dropped, every character
// other than a letter, digit, "_" or "-" replaced by "_", cut to 64
// characters; "schema" when nothing is left). Strict is set when doc
// meets OpenAI's strict mode: its root is an object, and every object in
// it sets additionalProperties to false and lists each of its properties
// as required. doc must be a JSON object.
func NewSchema(name string, doc []byte) (*Schema, error) {
	doc = bytes.TrimSpace(doc)
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("schema " + name + ": not a JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	strict := obj["type"] == "object" && strictSchema(obj) // strict mode wants an object at the root
	return &Schema{Name: SchemaName(name), Schema: compact.Bytes(), Strict: strict}, nil
}

// SchemaName makes a schema name the providers accept from name (see
// NewSchema).
func SchemaName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	name = string(b[:min(len(b), maxSchemaName)])
	if strings.Trim(name, "_") == "" {
		return "schema"
	}
	return name
}

// strictSchema reports whether every object schema in v forbids
// additional properties and requires all of its properties.
func strictSchema(v any) bool {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if !strictSchema(e) {
				return false
			}
		}
	case map[string]any:
		props, hasProps := v["properties"].(map[string]any)
		if v["type"] == "object" || hasProps {
			if v["additionalProperties"] != false {
				return false
			}
			req, _ := v["required"].([]any)
			for name := range props {
				if !slices.Contains(req, any(name)) {
					return false
				}
			}
		}
		for k, e := range v {
			if k == "enum" || k == "const" || k == "required" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			if !strictSchema(e) {
				return false
			}
		}
	}
	return true
}
