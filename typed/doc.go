// Package typed gives a validated turn's answer as a Go value: the turn
// asks for a value of type T and returns it decoded, after the answer
// passed T's schema and T's own checks. tract.ChatAs is Chat with it.
//
// [For] makes the [Answer] of T for a turn's options. Its schema is
// inferred from T by github.com/google/jsonschema-go (a struct's fields
// by their json names; a field without omitempty or omitzero is
// required; unknown properties are not allowed), unless the options give
// one with turn.Structured: that schema is then sent and validates, and
// turn.Structured(nil) sends none while the inferred one still validates.
// The schema is sent with every request as structured output where the
// provider supports it (see llm.Schema; OpenAI's strict mode when the
// schema allows it).
//
// Each answer must then, in this order:
//
//   - be JSON that satisfies the schema (retry.SchemaDocument's
//     diagnosis: every violation with its JSON pointer);
//   - decode into T with encoding/json ("at '/items/2/price': got
//     string, want a number");
//   - pass T's Validate() error method, when T or *T has one
//     ("Validate: end is before start"); nested values' methods are not
//     called, so T's Validate checks what it contains.
//
// The first failure is the diagnosis, which the turn's steering gives
// the model, as instructor feeds validation errors back. [Chat] runs a
// turn that way and decodes the accepted answer.
//
// # Caveats
//
// Properties the schema allows but T does not hold (only with a schema
// given, since the inferred one refuses them) are dropped by decoding.
// The branch keeps the model's answer as it wrote it, not the value
// encoded again: a commit records what the model said, and the text
// decodes to the value returned. A Validate method's error becomes part
// of hashed commits, so it should say the same for the same value.
package typed
