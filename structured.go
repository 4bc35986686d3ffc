package tract

import "github.com/tractdag/tract/llm"

// MetaStructured is the metadata key of a turn's answers that asked for
// structured output (see Structured): a StructuredRecord.
const MetaStructured = "structured_output"

// Structured asks the model for answers constrained to schema where its
// provider supports it (see llm.Schema): every attempt of the turn sends
// it, the validators still check each answer, and each answer records
// what became of the schema under MetaStructured. A nil schema asks for
// nothing.
func Structured(schema *llm.Schema) ChatOption {
	return func(cfg *chatConfig) { cfg.schema = schema }
}

// StructuredRecord is what an answer records about the schema its request
// carried, under MetaStructured.
type StructuredRecord struct {
	// Schema is the schema's name.
	Schema string `json:"schema"`
	// Outcome is what became of it: "sent" (the request that answered
	// carried it), "rejected" (the server refused it, and the answer came
	// from a second request without it) or "unsupported" (the provider
	// cannot take this schema: none was sent).
	Outcome llm.StructuredOutcome `json:"outcome"`
	// Rejection is the server's refusal, with "rejected".
	Rejection string `json:"rejection,omitempty"`
}

// StructuredOutput returns the structured-output record of an answer; ok
// is false when its request carried no schema.
func (c *CommitInfo) StructuredOutput() (r StructuredRecord, ok bool) {
	return metaField[StructuredRecord](c, MetaStructured)
}

// structuredRecord is the record of resp to a request that carried
// schema; nil when it carried none.
func structuredRecord(schema *llm.Schema, resp *llm.Response) *StructuredRecord {
	if schema == nil {
		return nil
	}
	outcome := resp.Structured
	if outcome == llm.StructuredNone { // a client that knows nothing of schemas
		outcome = llm.StructuredUnsupported
	}
	return &StructuredRecord{Schema: schema.Name, Outcome: outcome, Rejection: resp.StructuredError}
}
