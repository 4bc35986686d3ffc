// Package record holds the metadata tract writes on commits and reads back:
// every key in one place (Keys), the typed records stored under them
// (Failure, Provenance, Attempt, Escalation, Structured, Summary), the
// metadata of a validated turn's commits as written (Meta), and the check
// that refuses a caller's metadata whose value under one of these keys is
// not of the type tract reads it as (Check, *MetaTypeError).
//
// Commit metadata is a JSON object. Keys other than these are the
// caller's; keys nested inside other values are too. docs/metadata.md
// describes each key, on which commits it appears, and its JSON.
package record
