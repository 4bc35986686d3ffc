package tract

import (
	"encoding/json"

	"github.com/tractdag/tract/record"
)

// Metadata keys tract writes on the commits of a turn and reads back
// (package record lists them, and docs/metadata.md describes each).
// Metadata given with WithMeta, WithMetaJSON or an ImportMessage is the
// caller's and may use any other key; under these keys its value must
// have the type tract reads it as, else the commit is refused with a
// *MetaTypeError. Keys nested inside other values are the caller's.
const (
	MetaAttempt        = record.KeyAttempt
	MetaValid          = record.KeyValid
	MetaDiagnosis      = record.KeyDiagnosis
	MetaValidatorError = record.KeyValidatorError
	MetaModel          = record.KeyModel
	MetaUsage          = record.KeyUsage
	MetaProvenance     = record.KeyProvenance
	MetaError          = record.KeyError
	MetaProvider       = record.KeyProvider
	MetaTask           = record.KeyTask
	MetaFailure        = record.KeyFailure
	MetaEscalation     = record.KeyEscalation
	MetaValidators     = record.KeyValidators
	MetaWeight         = record.KeyWeight
	// MetaDuration is an attempt's duration in milliseconds.
	MetaDuration = record.KeyDuration
	// MetaRestore is a turn's restore point on the commits of a turn with
	// the fresh retry context (see ContextFresh).
	MetaRestore = record.KeyRestore
	// MetaStructured is what became of a turn's schema (see Structured).
	MetaStructured = record.KeyStructured
	// MetaFixed is a validator's fix of an answer (see retry.FixFunc), on
	// the answer as given and on the fixed answer in its place.
	MetaFixed = record.KeyFixed
	// MetaShape is a commit's message shape: the message object without
	// "role" (and without "content" when the content is the commit's
	// text), in canonical JSON. Import and CommitMany write it from an
	// ImportMessage's fields; metadata given by a caller may carry it only
	// when the message has no shape of its own, and then it must be a
	// valid shape.
	MetaShape = record.KeyShape
	// MetaPinned pins a commit: a commit whose metadata has "pinned": true
	// is kept by CompressRange, as system prompts are.
	MetaPinned = record.KeyPinned
	// MetaToolStep is the record of a turn's tool step (see Tools), on
	// the answer that called tools and on each result.
	MetaToolStep = record.KeyToolStep
)

// The records tract keeps in commit metadata (see package record).
type (
	// FailureRecord is what a failed attempt records, under MetaFailure.
	FailureRecord = record.Failure
	// Provenance is how an accepted answer was reached, under
	// MetaProvenance.
	Provenance = record.Provenance
	// AttemptRecord is what an answer of a validated turn records about
	// itself.
	AttemptRecord = record.Attempt
	// SummaryRecord is the metadata of a summary commit CompressRange made.
	SummaryRecord = record.Summary
	// EscalationRecord is what a turn records of an answered escalation,
	// under MetaEscalation: on a note, or for an abort on the error
	// commit that ends the turn.
	EscalationRecord = record.Escalation
	// StructuredRecord is what an answer records about the schema its
	// request carried, under MetaStructured.
	StructuredRecord = record.Structured
	// FixRecord is what a validator's fix of an answer records, under
	// MetaFixed.
	FixRecord = record.Fix
	// ToolStepRecord is what each commit of a turn's tool step records,
	// under MetaToolStep.
	ToolStepRecord = record.ToolStep
	// MetaTypeError reports metadata whose value under one of tract's keys
	// is not of the type tract reads it as; errors.Is matches it with
	// ErrInvalidMeta.
	MetaTypeError = record.MetaTypeError
)

// FailureRecord returns the failure record of a failed attempt (or of the
// error commit of a failed model call); ok is false for any other commit.
func (c *CommitInfo) FailureRecord() (r FailureRecord, ok bool) {
	return record.Field[FailureRecord](c.Meta, MetaFailure)
}

// Validators returns the specs of the validators recorded on an answer of
// a validated turn (nil when there are none).
func (c *CommitInfo) Validators() []string {
	v, _ := record.Field[[]string](c.Meta, MetaValidators)
	return v
}

// Task returns the task id recorded on the commit ("" when there is none).
func (c *CommitInfo) Task() string {
	s, _ := record.Field[string](c.Meta, MetaTask)
	return s
}

// SummaryRecord returns what a summary commit records of how it was
// made; ok is false for any other commit.
func (c *CommitInfo) SummaryRecord() (r SummaryRecord, ok bool) {
	if c.Kind != KindSummary || len(c.Meta) == 0 || json.Unmarshal(c.Meta, &r) != nil || r.Sources == nil {
		return SummaryRecord{}, false
	}
	return r, true
}

// ToolStepRecord returns what a commit of a turn's tool step records:
// the attempt and step, and on a result the tool called and how the call
// failed, if it did; ok is false for any other commit.
func (c *CommitInfo) ToolStepRecord() (r ToolStepRecord, ok bool) {
	return record.Field[ToolStepRecord](c.Meta, MetaToolStep)
}

// Provenance returns the commit's provenance; ok is false when it has none
// (it is not the accepted answer of a turn).
func (c *CommitInfo) Provenance() (p Provenance, ok bool) {
	return record.Field[Provenance](c.Meta, MetaProvenance)
}

// AttemptRecord returns what the commit records as an attempt of a turn;
// ok is false for a commit that is not one.
func (c *CommitInfo) AttemptRecord() (r AttemptRecord, ok bool) {
	// Attempts count from 1: no "attempt" key reads as 0.
	if len(c.Meta) == 0 || json.Unmarshal(c.Meta, &r) != nil || r.Attempt == 0 {
		return AttemptRecord{}, false
	}
	return r, true
}

// EscalationRecord returns the escalation record of a note a turn
// committed after its escalation hook answered, or of the error commit
// that ends a turn whose hook answered abort; ok is false for any other
// commit.
func (c *CommitInfo) EscalationRecord() (r EscalationRecord, ok bool) {
	return record.Field[EscalationRecord](c.Meta, MetaEscalation)
}

// StructuredOutput returns the structured-output record of an answer; ok
// is false when its request carried no schema.
func (c *CommitInfo) StructuredOutput() (r StructuredRecord, ok bool) {
	return record.Field[StructuredRecord](c.Meta, MetaStructured)
}

// FixRecord returns the record of a validator's fix: on an answer a
// validator fixed (By set), or on the fixed answer committed in its place
// (By and Original set); ok is false for any other commit.
func (c *CommitInfo) FixRecord() (r FixRecord, ok bool) {
	return record.Field[FixRecord](c.Meta, MetaFixed)
}
