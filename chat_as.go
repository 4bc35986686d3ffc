package tract

import (
	"context"

	"github.com/tractdag/tract/typed"
)

// ChatAs is Chat for an answer of type T (see package typed): the JSON
// Schema inferred from T, or the one given with Structured, is sent as
// structured output, and an answer is accepted once it satisfies the
// schema, decodes into T and passes T's Validate() error method if T (or
// *T) has one; a rejected answer's steering names the path and what was
// expected. It returns the accepted value; the branch keeps the model's
// JSON as it wrote it. When the turn fails, it returns the zero T with
// Chat's result and error.
func ChatAs[T any](ctx context.Context, t *Tract, msg string, opts ...ChatOption) (T, *ChatResult, error) {
	return typed.Chat[T](ctx, t.Chat, msg, opts...)
}
