package turn

import (
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
)

// deltaFunc is the OnDelta of the current attempt's request: nil (no
// stream) when neither OnDelta nor OnAttemptDelta was given.
func (g *generation) deltaFunc() func(string) {
	plain, numbered := g.cfg.onDelta, g.cfg.onAttemptDelta
	if numbered == nil {
		return plain
	}
	n, max := g.attempt, g.maxAttempt()
	return func(d string) {
		if plain != nil {
			plain(d)
		}
		numbered(AttemptDelta{Attempt: n, Max: max, Text: d})
	}
}

// structuredRecord is the record of resp to a request that carried
// schema; nil when it carried none.
func structuredRecord(schema *llm.Schema, resp *llm.Response) *record.Structured {
	if schema == nil {
		return nil
	}
	outcome := resp.Structured
	if outcome == llm.StructuredNone { // a client that knows nothing of schemas
		outcome = llm.StructuredUnsupported
	}
	return &record.Structured{Schema: schema.Name, Outcome: outcome, Rejection: resp.StructuredError}
}
