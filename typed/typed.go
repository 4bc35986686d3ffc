package typed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/turn"
)

// Answer is what a turn needs to answer with a value of type T: the
// schema each request sends and the validator that checks each answer.
// It holds no state between answers; one Answer may serve many turns.
type Answer[T any] struct {
	sent  *llm.Schema // nil: none is sent
	check *checker[T]
}

// For returns the Answer of T for a turn with opts: the schema inferred
// from T, or the one opts give with turn.Structured (see the package
// documentation). A type the schema cannot be inferred from (a channel,
// a function, a map whose keys are not strings, a recursive type)
// without a schema given, and a schema given that is not a valid JSON
// Schema or refers outside itself, are errors.
func For[T any](opts ...turn.Option) (*Answer[T], error) {
	// The options only set a Config's fields: applied to a scratch one
	// after a placeholder schema, they tell whether one was given.
	var cfg turn.Config
	inferred := &llm.Schema{}
	for _, o := range append([]turn.Option{turn.Structured(inferred)}, opts...) {
		o(&cfg)
	}
	sent := cfg.Schema()
	name := typeName[T]()
	doc, docName := []byte(nil), name
	if sent != nil && sent != inferred {
		doc, docName = sent.Schema, sent.Name // given: it validates too
	} else {
		var err error
		if doc, err = Infer[T](); err != nil {
			return nil, fmt.Errorf("answer as %s: %w", name, err)
		}
		if sent == inferred {
			if sent, err = llm.NewSchema(schemaName[T](), doc); err != nil {
				return nil, fmt.Errorf("answer as %s: %w", name, err)
			}
		}
	}
	schema, err := retry.SchemaDocument(docName, doc)
	if err != nil {
		return nil, fmt.Errorf("answer as %s: %w", name, err)
	}
	return &Answer[T]{sent: sent, check: &checker[T]{name: name, schema: schema}}, nil
}

// Infer returns the JSON Schema of T, inferred by jsonschema.For, with
// time.Time as a "date-time" string, []byte as a base64 string and
// json.RawMessage as any JSON value, as encoding/json writes them. The
// answer itself may not be null, which the schema of a slice or pointer
// T would allow: a slice or pointer field may be.
func Infer[T any]() ([]byte, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
		reflect.TypeFor[[]byte]():          {Type: "string", Description: "base64"}, // what strict mode takes
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, fmt.Errorf("cannot infer a JSON Schema from %s (give one with Structured): %w", typeName[T](), err)
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil // a slice or pointer T: null is no answer
	}
	doc, err := json.Marshal(s)
	if string(doc) == "true" {
		doc = []byte("{}") // any JSON value, as the providers take it: an object
	}
	return doc, err
}

// Schema returns the schema each request sends (nil when none is).
func (a *Answer[T]) Schema() *llm.Schema { return a.sent }

// Validator returns the validator that checks each answer: schema,
// decoding into T, T's Validate method. Its name is T's, as Go writes it
// ("main.Invoice").
func (a *Answer[T]) Validator() retry.Validator { return a.check }

// Options returns the options that make a turn answer with T: the
// schema sent (turn.Structured) and the validator (turn.Validate). Given
// before the caller's options, the validator runs first; a Structured
// among the caller's options is the one For read.
func (a *Answer[T]) Options() []turn.Option {
	return []turn.Option{turn.Structured(a.sent), turn.Validate(a.check)}
}

// Decode returns the value of an answer the validator accepted.
func (a *Answer[T]) Decode(text string) (T, error) {
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var zero T
		return zero, fmt.Errorf("answer as %s: the accepted answer does not decode: %w", a.check.name, jsonerr.Wrap(err))
	}
	return v, nil
}

// ChatFunc commits msg and runs a validated turn that answers it, as
// tract's Tract.Chat does.
type ChatFunc func(ctx context.Context, msg string, opts ...turn.Option) (*turn.Result, error)

// Chat runs chat with msg, the options of T's Answer (see For) and opts,
// and returns the accepted answer decoded. When the turn fails (its
// attempts exhausted, a model error) it returns the zero T with the
// turn's result and error, unchanged.
func Chat[T any](ctx context.Context, chat ChatFunc, msg string, opts ...turn.Option) (T, *turn.Result, error) {
	var zero T
	a, err := For[T](opts...)
	if err != nil {
		return zero, nil, fmt.Errorf("chat: %w", err)
	}
	res, err := chat(ctx, msg, append(a.Options(), opts...)...)
	if err != nil {
		return zero, res, err
	}
	v, err := a.Decode(res.Text)
	if err != nil {
		return zero, res, fmt.Errorf("chat: %w", err)
	}
	return v, res, nil
}

// typeName is T as Go writes it ("main.Invoice", "[]int").
func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// schemaName is the name the schema of T is sent under: T's name
// ("Invoice"; that of the type pointed to for a pointer; without its
// type arguments for a generic type), or "answer" for a type without one
// ([]Item, map[string]int).
func schemaName[T any]() string {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	name, _, _ := strings.Cut(t.Name(), "[") // a generic type's arguments name their packages' paths
	if name == "" {
		return "answer"
	}
	return llm.SchemaName(name)
}
