package retry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

// A schema held in memory judges and diagnoses as a schema file does; it
// may refer to its own parts, never to a file.
func TestSchemaDocument(t *testing.T) {
	v, err := retry.SchemaDocument("lookup", []byte(`{"type":"object","properties":{"city":{"$ref":"#/$defs/name"}},"required":["city"],"$defs":{"name":{"type":"string"}}}`))
	require.NoError(t, err)
	assert.Equal(t, "lookup", v.Name())
	for _, tc := range []struct{ answer, diagnosis string }{
		{`{"city":"Paris"}`, ""},
		{`{}`, "1 schema violation: at root: missing property 'city'"},
		{`{"city":3}`, "1 schema violation: at '/city': got number, want string"},
	} {
		ok, d, err := v.Validate(context.Background(), tc.answer)
		require.NoError(t, err)
		assert.Equal(t, tc.diagnosis == "", ok, tc.answer)
		assert.Equal(t, tc.diagnosis, d)
	}

	_, err = retry.SchemaDocument("x", []byte(`{"$ref":"other.json"}`))
	assert.EqualError(t, err, `schema x: the schema refers to other.json, outside itself: a schema given as a document may refer only to its own parts ("$ref": "#/$defs/…")`)
	_, err = retry.SchemaDocument("x", []byte(`{"type":`))
	assert.ErrorContains(t, err, "schema x is not JSON")
	_, err = retry.SchemaDocument("x", []byte(`{"type":"strin"}`))
	assert.ErrorContains(t, err, "schema x is not a valid JSON Schema")
}
