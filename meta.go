package tract

import (
	"encoding/json"

	"github.com/tractdag/tract/llm"
)

// Metadata keys tract writes on the commits of a turn (commit metadata is
// a JSON object; these are all tract reads back):
//
//	"attempt"          number   an answer's (or steering message's) attempt number
//	"valid"            bool     whether the validators accepted the answer
//	"diagnosis"        string   why the validators rejected it
//	"validator_error"  string   a validator that could not run
//	"model"            string   the model that answered
//	"usage"            object   its token usage (llm.Usage); on an error
//	                            commit, summed over the turn
//	"provenance"       object   on the accepted answer (and on the error
//	                            commit of an exhausted turn): Provenance
//	"error"            string   on the error commit of a failed model call
//
// AttemptRecord and Provenance read them back typed. Metadata given with
// WithMeta is the caller's and may use any other key.
const (
	MetaAttempt        = "attempt"
	MetaValid          = "valid"
	MetaDiagnosis      = "diagnosis"
	MetaValidatorError = "validator_error"
	MetaModel          = "model"
	MetaUsage          = "usage"
	MetaProvenance     = "provenance"
	MetaError          = "error"
)

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
	Attempt        int         `json:"attempt,omitempty"`
	Valid          *bool       `json:"valid,omitempty"`
	Diagnosis      string      `json:"diagnosis,omitempty"`
	ValidatorError string      `json:"validator_error,omitempty"`
	Model          string      `json:"model,omitempty"`
	Usage          *llm.Usage  `json:"usage,omitempty"`
	Provenance     *Provenance `json:"provenance,omitempty"`
	Error          string      `json:"error,omitempty"`
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
