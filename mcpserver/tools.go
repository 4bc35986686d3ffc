package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolKind says what a tool does to the repository, for its annotations.
type toolKind int

const (
	reads toolKind = iota
	// writes adds commits or refs and moves refs, never erasing anything.
	writes
)

// addTool adds the tool name to s, with the input and output schemas of
// In and Out (the input's adjusted by each of adjust). An error h returns
// becomes the tool's error result (see explain).
func addTool[In, Out any](s *mcp.Server, name, title, description string, kind toolKind, h func(context.Context, *mcp.CallToolRequest, In) (Out, error),
	adjust ...func(input *jsonschema.Schema)) {
	no := false
	ann := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: kind == reads, OpenWorldHint: &no}
	if kind == writes {
		ann.DestructiveHint = &no // soft: what a write leaves behind stays in the store
	}
	input := schemaFor[In]()
	for _, a := range adjust {
		a(input)
	}
	tool := &mcp.Tool{
		Name: name, Title: title, Description: description, Annotations: ann,
		InputSchema: input, OutputSchema: schemaFor[Out](),
	}
	mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := h(ctx, req, in)
		if err != nil {
			var zero Out
			return nil, zero, explain(err)
		}
		return nil, out, nil
	})
}

// limit returns a call's limit n, DefaultLimit when it gave none (0).
func limit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultLimit, nil
	case n < 0 || n > MaxLimit:
		return 0, &InputError{Field: "limit", Problem: fmt.Sprintf("is %d: give 1 to %d (default %d)", n, MaxLimit, DefaultLimit)}
	}
	return n, nil
}
