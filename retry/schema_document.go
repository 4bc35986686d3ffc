package retry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// SchemaDocument returns a validator of answers against the JSON Schema
// doc, a document held in memory (a tool's parameters, a schema inferred
// from a Go type) rather than a file: it judges and diagnoses as [Schema]
// does ("1 schema violation: at '/city': got integer, want string"), and
// its name is name. The document may refer to its own parts ("#/$defs/…")
// but to no file. A document that is not a valid JSON Schema is an
// error.
func SchemaDocument(name string, doc []byte) (Validator, error) {
	const scheme = "tract-schema"
	root := (&url.URL{Scheme: scheme, Opaque: url.PathEscape(name)}).String()
	refused := ""
	set, resolved, err := loadSchemaAt(root, doc, func(u *url.URL) (string, bool) {
		refused = strings.TrimLeft(strings.TrimPrefix(u.String(), scheme+":"), "/")
		return "", false
	})
	if err != nil {
		var re *schemaRefError
		var je *schemaJSONError
		switch {
		case refused != "":
			return nil, fmt.Errorf("the schema refers to %s: a schema given as a document may refer only to its own parts (\"#/$defs/…\")", refused)
		case errors.As(err, &re):
			return nil, errors.New(re.Reason)
		case errors.As(err, &je):
			return nil, fmt.Errorf("the schema is not JSON: %w", je.Err)
		}
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return &schemaValidator{name: name, set: set, resolved: resolved}, nil
}
