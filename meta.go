package tract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// Metadata keys tract writes on the commits of a turn (commit metadata is
// a JSON object; these and MetaPinned, a boolean, are all tract reads back):
//
//	"attempt"          integer  an answer's (or steering message's) attempt number
//	"valid"            bool     whether the validators accepted the answer
//	"diagnosis"        string   why the validators rejected it
//	"validator_error"  string   a validator that could not run
//	"model"            string   the model that answered (on the error
//	                            commit of a failed model call, the model
//	                            asked)
//	"usage"            object   its token usage (llm.Usage); on an error
//	                            commit, summed over the turn
//	"provenance"       object   on the accepted answer (and on the error
//	                            commit of an exhausted turn): Provenance
//	"error"            string   on the error commit of a failed model call
//	"provider"         string   on the same commit, the kind of server
//	                            asked ("openai"), when the client says
//	"task"             string   the task id given with Task, on every
//	                            commit of the turn
//	"failure"          object   on each failed attempt (and on the error
//	                            commit of a failed model call): its
//	                            FailureRecord
//	"escalation"       object   on a note of a turn whose escalation
//	                            hook answered: its EscalationRecord
//	"duration_ms"      integer  on each answer (and on the error commit of
//	                            a failed model call): how long the
//	                            attempt took, in milliseconds (MetaDuration)
//	"structured_output" object  on each answer of a turn that asked for
//	                            structured output (Structured): its
//	                            StructuredRecord (MetaStructured)
//	"restore"          string   on the answers, feedback and error commits
//	                            of a turn with the fresh retry context: the
//	                            turn's restore point, which their chains no
//	                            longer lead back to (MetaRestore)
//	"validators"       array    on each answer of a turn with validators
//	                            (and on the error commit of an exhausted
//	                            one): the validators' specs as given
//	                            ("json", "cmd:go test ./..."), strings
//	                            (MetaValidators)
//	"weight"           integer  a message's training weight, 0 or 1, as an
//	                            import of the OpenAI fine-tuning format
//	                            read it (MetaWeight); tract export writes
//	                            it back
//	"shape"            object   on a commit whose message is more than a
//	                            role and a text (content parts, tool
//	                            calls, …): the message object, see
//	                            MetaShape
//
// AttemptRecord, Provenance and FailureRecord read them back typed (and
// Task the task id); CompressRange reads
// MetaPinned. Metadata given with WithMeta, WithMetaJSON or an
// ImportMessage is the caller's and may use any other key; under these
// keys (MetaPinned included) its value must have the type above, else the
// commit is refused with a *MetaTypeError. Keys nested inside other values
// are the caller's.
const (
	MetaAttempt        = "attempt"
	MetaValid          = "valid"
	MetaDiagnosis      = "diagnosis"
	MetaValidatorError = "validator_error"
	MetaModel          = "model"
	MetaUsage          = "usage"
	MetaProvenance     = "provenance"
	MetaError          = "error"
	MetaProvider       = "provider"
	MetaTask           = "task"
	MetaFailure        = "failure"
	MetaEscalation     = "escalation"
	MetaValidators     = "validators"
	MetaWeight         = "weight"
)

// FailureRecord is what a failed attempt of a validated turn records about
// its failure, under MetaFailure: a task's failure record. The JSON names
// are those of the record; fields that do not apply are left out.
type FailureRecord struct {
	// Attempt is the failed attempt's number, from 1.
	Attempt int `json:"attempt"`
	// Timestamp is when the failure was found.
	Timestamp time.Time `json:"timestamp"`
	// Type classifies the failure: execution_error (the model call failed
	// after its transport retries, or its answer was empty or could not be
	// stored), verification_failed (a validator rejected the answer),
	// timeout (a "cmd:" validator ran past its time limit, or the model
	// call timed out), rejected (an "llm:" judge rejected it).
	Type retry.FailureType `json:"failure_type"`
	// Error is a one-line summary, at most 200 characters.
	Error string `json:"error"`
	// Details is the full diagnosis (or the model call's error).
	Details string `json:"details,omitempty"`
	// Command, ExitCode and OutputSummary describe a failing "cmd:"
	// validator's run: the command, its exit status (nil when it did not
	// exit: it timed out or was killed) and the last lines of its output.
	Command       string `json:"command,omitempty"`
	ExitCode      *int   `json:"exit_code,omitempty"`
	OutputSummary string `json:"output_summary,omitempty"`
	// SuggestedFix is what a validator suggested, when one did, else what
	// the analyzer (see Analyze) suggested.
	SuggestedFix string `json:"suggested_fix,omitempty"`
	// RootCauseGuess is the analyzer's guess at the failure's cause.
	RootCauseGuess string `json:"root_cause_guess,omitempty"`
	// AnalysisError is set when the analyzer failed: its error.
	AnalysisError string `json:"analysis_error,omitempty"`
	// Escalation is set when this failure stopped the turn at once, as
	// retrying could not fix it: why (see EscalationReason).
	Escalation EscalationReason `json:"escalation,omitempty"`
	// Round is the round of attempts the failure ended in, from the
	// second on (see OnEscalation); 0 (left out) in the first.
	Round int `json:"round,omitempty"`
}

// FailureRecord returns the failure record of a failed attempt (or of the
// error commit of a failed model call); ok is false for any other commit.
func (c *CommitInfo) FailureRecord() (r FailureRecord, ok bool) {
	return metaField[FailureRecord](c, MetaFailure)
}

// Validators returns the specs of the validators recorded on an answer of
// a validated turn (nil when there are none).
func (c *CommitInfo) Validators() []string {
	v, _ := metaField[[]string](c, MetaValidators)
	return v
}

// Task returns the task id recorded on the commit ("" when there is none).
func (c *CommitInfo) Task() string {
	s, _ := metaField[string](c, MetaTask)
	return s
}

// Provenance is how an accepted answer was reached, recorded on it (and,
// when every attempt failed, on the error commit that ends the turn).
type Provenance struct {
	// Attempts is how many answers the model gave, the accepted one
	// included: 1 for a first-try success.
	Attempts int `json:"attempts"`
	// Diagnoses are the rejected attempts' diagnoses, in order.
	Diagnoses []string `json:"diagnoses"`
	// Restore is the restore point: the commit the turn built on (its
	// user message), where purify reset the branch to.
	Restore Hash `json:"restore,omitzero"`
	// Usage is summed over every attempt of the turn.
	Usage llm.Usage `json:"usage,omitzero"`
	// Model is the model that gave the last answer.
	Model string `json:"model,omitempty"`
}

// AttemptRecord is what an answer of a validated turn records about
// itself.
type AttemptRecord struct {
	// Attempt is the attempt number, from 1.
	Attempt int `json:"attempt"`
	// Valid is whether the validators accepted the answer; nil when none
	// ran.
	Valid *bool `json:"valid,omitempty"`
	// Diagnosis is why they rejected it.
	Diagnosis string `json:"diagnosis,omitempty"`
	// ValidatorError is set when a validator could not run.
	ValidatorError string `json:"validator_error,omitempty"`
	// Model answered; Usage is what this answer cost.
	Model string    `json:"model,omitempty"`
	Usage llm.Usage `json:"usage,omitzero"`
	// DurationMS is how long the attempt took, model call and
	// validation, in milliseconds.
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// SummaryRecord is the metadata of a summary commit that CompressRange
// made (its keys are the JSON names below).
type SummaryRecord struct {
	// Sources are the commits the summary replaces, in order.
	Sources []Hash `json:"sources"`
	// TokensBefore and TokensAfter are the sizes of the sources and of
	// the summary; TokensEstimated says they were estimated (no tokenizer
	// was given).
	TokensBefore    int  `json:"tokens_before"`
	TokensAfter     int  `json:"tokens_after"`
	TokensEstimated bool `json:"tokens_estimated"`
	// Attempts and Diagnoses are those of the summary's validation.
	Attempts  int      `json:"attempts"`
	Diagnoses []string `json:"diagnoses"`
	// Model wrote the summary ("" when it was given); Usage is what that
	// cost over every attempt.
	Model string    `json:"model"`
	Usage llm.Usage `json:"usage"`
}

// SummaryRecord returns what a summary commit records of how it was
// made; ok is false for any other commit.
func (c *CommitInfo) SummaryRecord() (r SummaryRecord, ok bool) {
	if c.Kind != KindSummary || len(c.Meta) == 0 || json.Unmarshal(c.Meta, &r) != nil || r.Sources == nil {
		return SummaryRecord{}, false
	}
	return r, true
}

// turnMeta is the metadata of the commits of a turn, as written: each
// field under its Meta key, left out when empty.
type turnMeta struct {
	Attempt        int               `json:"attempt,omitempty"`
	Valid          *bool             `json:"valid,omitempty"`
	Diagnosis      string            `json:"diagnosis,omitempty"`
	ValidatorError string            `json:"validator_error,omitempty"`
	Model          string            `json:"model,omitempty"`
	Usage          *llm.Usage        `json:"usage,omitempty"`
	Provenance     *Provenance       `json:"provenance,omitempty"`
	Error          string            `json:"error,omitempty"`
	Task           string            `json:"task,omitempty"`
	Failure        *FailureRecord    `json:"failure,omitempty"`
	Escalation     *EscalationRecord `json:"escalation,omitempty"`
	DurationMS     int64             `json:"duration_ms,omitempty"`
	Provider       string            `json:"provider,omitempty"`
	Restore        *Hash             `json:"restore,omitempty"`
	Validators     []string          `json:"validators,omitempty"`
	Structured     *StructuredRecord `json:"structured_output,omitempty"`
	Shape          json.RawMessage   `json:"shape,omitempty"`
}

// commitConfig returns the commit configuration that writes m.
func (m *turnMeta) commitConfig() (*commitConfig, error) {
	if m == nil {
		return &commitConfig{}, nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &commitConfig{rawMeta: raw, own: true}, nil
}

// Provenance returns the commit's provenance; ok is false when it has none
// (it is not the accepted answer of a turn).
func (c *CommitInfo) Provenance() (p Provenance, ok bool) {
	return metaField[Provenance](c, MetaProvenance)
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

// metaField decodes the metadata value under key into a T.
func metaField[T any](c *CommitInfo, key string) (v T, ok bool) {
	if len(c.Meta) == 0 {
		return v, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Meta, &m) != nil {
		return v, false
	}
	raw, ok := m[key]
	if !ok || json.Unmarshal(raw, &v) != nil {
		return v, false
	}
	return v, true
}

// MetaTypeError reports metadata whose value under a key tract reads back
// (MetaPinned, MetaAttempt, MetaUsage, …) is not of the type tract reads
// it as. errors.Is matches it with ErrInvalidMeta.
type MetaTypeError struct {
	// Key is the metadata key.
	Key string
	// Field is the field of an object value that is wrong
	// ("usage.total_tokens"); "" when the value itself is.
	Field string
	// Got is what the value is: `a string ("yes")`, "null", "an array", …
	Got string
	// Want is what tract reads it as: "a boolean (true or false)", …
	Want string
}

// Error returns the MetaTypeError message.
func (e *MetaTypeError) Error() string {
	where := fmt.Sprintf("metadata %q", e.Key)
	if e.Field != "" {
		where += fmt.Sprintf(": %q", e.Field)
	}
	return fmt.Sprintf("%s is %s; tract reads it as %s", where, e.Got, e.Want)
}

// Is reports whether target is ErrInvalidMeta.
func (e *MetaTypeError) Is(target error) bool { return target == ErrInvalidMeta }

// What tract reads the values of its metadata keys as.
const (
	wantBool   = "a boolean (true or false)"
	wantInt    = "a whole number"
	wantString = "a string"
	wantObject = "an object"
	wantHash   = "a full commit hash (64 hex characters)"
	wantTime   = "a time (an RFC 3339 string)"
)

// checkMeta refuses canonical metadata whose value under a key tract reads
// back is not of the type tract reads it as (a *MetaTypeError). Keys are
// checked in order, so the error names the first wrong one.
func checkMeta(meta []byte) error {
	if len(meta) == 0 {
		return nil
	}
	keys := [...]string{MetaAttempt, MetaDiagnosis, MetaDuration, MetaError, MetaEscalation, MetaFailure, MetaModel, MetaPinned,
		MetaProvenance, MetaProvider, MetaRestore, MetaShape, MetaStructured, MetaTask, MetaUsage, MetaValid, MetaValidatorError, MetaValidators, MetaWeight}
	var m map[string]json.RawMessage
	for _, k := range keys {
		if !bytes.Contains(meta, []byte(`"`+k+`"`)) { // the common case: not there at all
			continue
		}
		if m == nil {
			if err := json.Unmarshal(meta, &m); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidMeta, err)
			}
		}
		if raw, ok := m[k]; ok {
			if err := checkMetaValue(k, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMetaValue checks the value raw of tract's key k.
func checkMetaValue(k string, raw json.RawMessage) error {
	got := jsonType(raw)
	wrong := func(want string) error { return &MetaTypeError{Key: k, Got: describeJSON(raw), Want: want} }
	switch k {
	case MetaPinned, MetaValid:
		if got != "a boolean" {
			return wrong(wantBool)
		}
	case MetaAttempt, MetaDuration:
		var n int
		if got != "a number" || json.Unmarshal(raw, &n) != nil {
			return wrong(wantInt)
		}
	case MetaDiagnosis, MetaValidatorError, MetaModel, MetaError, MetaTask, MetaProvider:
		if got != "a string" {
			return wrong(wantString)
		}
	case MetaRestore:
		var h Hash
		if got != "a string" || json.Unmarshal(raw, &h) != nil {
			return wrong("a commit hash (64 hexadecimal digits)")
		}
	case MetaWeight:
		if string(raw) != "0" && string(raw) != "1" {
			return wrong("0 or 1")
		}
	case MetaValidators:
		var specs []string
		if got != "an array" || json.Unmarshal(raw, &specs) != nil {
			return wrong("an array of strings")
		}
	case MetaShape:
		return checkShapeValue(raw)
	case MetaUsage:
		if got != "an object" {
			return wrong(wantObject)
		}
		return checkMetaObject(k, raw, new(llm.Usage))
	case MetaStructured:
		if got != "an object" {
			return wrong(wantObject)
		}
		return checkMetaObject(k, raw, new(StructuredRecord))
	case MetaFailure, MetaEscalation:
		if got != "an object" {
			return wrong(wantObject)
		}
		// A time that does not parse is no *json.UnmarshalTypeError:
		// check it here.
		var f struct {
			Timestamp json.RawMessage `json:"timestamp"`
		}
		if err := json.Unmarshal(raw, &f); err == nil && f.Timestamp != nil {
			var ts time.Time
			if jsonType(f.Timestamp) != "a string" || json.Unmarshal(f.Timestamp, &ts) != nil {
				return &MetaTypeError{Key: k, Field: "timestamp", Got: describeJSON(f.Timestamp), Want: wantTime}
			}
		}
		if k == MetaEscalation {
			return checkMetaObject(k, raw, new(EscalationRecord))
		}
		return checkMetaObject(k, raw, new(FailureRecord))
	case MetaProvenance:
		if got != "an object" {
			return wrong(wantObject)
		}
		var p struct {
			Restore json.RawMessage `json:"restore"`
		}
		if err := json.Unmarshal(raw, &p); err == nil && p.Restore != nil {
			var h string
			err := json.Unmarshal(p.Restore, &h)
			if err == nil {
				_, err = dag.ParseHash(h)
			}
			if err != nil {
				return &MetaTypeError{Key: k, Field: "restore", Got: describeJSON(p.Restore), Want: wantHash}
			}
		}
		return checkMetaObject(k, raw, new(Provenance))
	}
	return nil
}

// checkMetaObject decodes the object raw of key k into target, the type
// tract reads it as, and reports a field of the wrong type.
func checkMetaObject(k string, raw json.RawMessage, target any) error {
	err := json.Unmarshal(raw, target)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		kind, _, _ := strings.Cut(te.Value, " ") // "number 1.5" → "number"
		return &MetaTypeError{Key: k, Field: te.Field, Got: withArticle(kind), Want: describeGoType(te.Type)}
	}
	return fmt.Errorf("%w: %q: %v", ErrInvalidMeta, k, err)
}

// jsonType names the JSON type of a valid JSON value.
func jsonType(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// describeJSON says what a JSON value is, quoting a scalar (a string cut
// to 40 characters): `a string ("yes")`, "a number (1.5)", "an array".
func describeJSON(raw json.RawMessage) string {
	t := jsonType(raw)
	switch t {
	case "a string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if utf8.RuneCountInString(s) > 40 {
				s = string([]rune(s)[:40]) + "…"
			}
			return fmt.Sprintf("%s (%q)", t, s)
		}
	case "a boolean", "a number":
		return fmt.Sprintf("%s (%s)", t, raw)
	}
	return t
}

// withArticle turns the JSON kind encoding/json reports ("bool",
// "string", …) into the words of describeJSON.
func withArticle(kind string) string {
	switch kind {
	case "bool":
		return "a boolean"
	case "string", "number", "array", "object":
		return english.A(kind)
	}
	return kind
}

// describeGoType says what JSON the Go type t is read from.
func describeGoType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Hash]():
		return wantHash
	case reflect.TypeFor[time.Time]():
		return wantTime
	}
	switch t.Kind() {
	case reflect.Bool:
		return wantBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return wantInt
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return wantString
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return wantObject
}
