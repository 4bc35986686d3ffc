package retry

import (
	"errors"
	"fmt"
	"net/url"
)

// SchemaDocument returns a validator of answers against the JSON Schema
// doc, a document held in memory (a tool's parameters, a schema inferred
// from a Go type) rather than a file: it judges and diagnoses as [Schema]
// does ("1 schema violation: at '/city': got integer, want string"), and
// its name is name. The document may refer to its own parts ("#/$defs/…")
// but to no file. A document that is not a valid JSON Schema is an
// error.
func SchemaDocument(name string, doc []byte) (Validator, error) {
	root := (&url.URL{Scheme: "tract-schema", Opaque: url.PathEscape(name)}).String()
	set, resolved, err := loadSchemaAt(root, doc, nil)
	if err != nil {
		var re *schemaRefError
		var je *schemaJSONError
		switch {
		case errors.As(err, &re):
			return nil, errors.New(re.Reason)
		case errors.As(err, &je):
			return nil, fmt.Errorf("the schema is not JSON: %w", je.Err)
		}
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return &schemaValidator{name: name, set: set, resolved: resolved}, nil
}

