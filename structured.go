package tract

import "github.com/tractdag/tract/llm"

// Structured asks the model for answers constrained to schema where its
// provider supports it (see llm.Schema): every attempt of the turn sends
// it, the validators still check each answer, and each answer records
// what became of the schema under MetaStructured. A nil schema asks for
// nothing.
func Structured(schema *llm.Schema) ChatOption {
	return func(cfg *chatConfig) { cfg.schema = schema }
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
