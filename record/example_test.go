package record_test

import (
	"fmt"

	"github.com/tractdag/tract/record"
)

// Check refuses metadata whose value under one of tract's keys is not of
// the type tract reads it as; other keys are the caller's.
func ExampleCheck() {
	fmt.Println(record.Check([]byte(`{"pinned":true,"source":"import"}`)))
	fmt.Println(record.Check([]byte(`{"pinned":"yes"}`)))
	// Output:
	// <nil>
	// metadata "pinned" is a string ("yes"); tract reads it as a boolean (true or false)
}

// Field reads a record back from a commit's metadata.
func ExampleField() {
	meta := []byte(`{"attempt":2,"failure":{"attempt":2,"failure_type":"verification_failed","error":"invalid JSON","timestamp":"2026-03-01T12:00:00Z"}}`)
	f, ok := record.Field[record.Failure](meta, record.KeyFailure)
	fmt.Println(ok, f.Attempt, f.Type, f.Error)
	// Output:
	// true 2 verification_failed invalid JSON
}
